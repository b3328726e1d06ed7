"""What ``virtual:floatingip`` does in the cloud, chosen by
``[floatingips] inventory``: ``static`` only records (the embedded
default), ``neutron`` checks registrations with Neutron and creates and
deletes the reservations' floating IPs there.

See ``base.FloatingIPBackend`` for the contract.
"""

from climate.plugins import backend_loader
from climate.plugins.virtual_floatingip.backends import base

_MODULES = {
    'neutron': 'climate.plugins.virtual_floatingip.backends.neutron',
    'static': 'climate.plugins.virtual_floatingip.backends.static',
}

BackendUnavailable = backend_loader.BackendUnavailable


def load(conf):
    """An instance of the backend of ``[floatingips] inventory``."""
    return backend_loader.load(conf, 'virtual:floatingip', 'floatingips',
                               _MODULES, base.FloatingIPBackend)
