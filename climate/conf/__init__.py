"""Configuration: every option Climate reads is registered here."""

from oslo_config import cfg

from climate.conf import api
from climate.conf import clients
from climate.conf import floatingips
from climate.conf import galera
from climate.conf import hosts
from climate.conf import idle
from climate.conf import leases
from climate.conf import manager
from climate.conf import networks
from climate.conf import outages
from climate.conf import paths
from climate.conf import power
from climate.conf import power_backends
from climate.conf import quotas
from climate.conf import stacks
from climate.conf import volumes
from climate.conf import webhooks

CONF = cfg.CONF

MODULES = (paths, api, manager, clients, hosts, power, power_backends,
           outages, volumes, floatingips, networks, stacks, webhooks,
           quotas, leases, galera, idle)


def register_opts(conf):
    """Register every option Climate reads on ``conf``."""
    for module in MODULES:
        module.register_opts(conf)


register_opts(CONF)
