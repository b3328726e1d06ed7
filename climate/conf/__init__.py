"""Configuration: every option Climate reads is registered here."""

from oslo_config import cfg

from climate.conf import api
from climate.conf import manager
from climate.conf import paths

CONF = cfg.CONF

paths.register_opts(CONF)
api.register_opts(CONF)
manager.register_opts(CONF)
try:  # the OpenStack client options live with the clients
    from climate.conf import clients
except ImportError:  # pragma: no cover - only while the module is absent
    clients = None
if clients is not None:
    clients.register_opts(CONF)
