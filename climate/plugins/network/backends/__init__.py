"""What ``network`` does in the cloud, chosen by ``[networks]
inventory``: ``static`` only records (the embedded default), ``neutron``
creates the reservations' networks at the start and deletes them, with
their ports and subnets, at the end.

See ``base.NetworkBackend`` for the contract.
"""

from climate.plugins import backend_loader
from climate.plugins.network.backends import base

_MODULES = {
    'neutron': 'climate.plugins.network.backends.neutron',
    'static': 'climate.plugins.network.backends.static',
}

BackendUnavailable = backend_loader.BackendUnavailable


def load(conf):
    """An instance of the backend of ``[networks] inventory``."""
    return backend_loader.load(conf, 'network', 'networks', _MODULES,
                               base.NetworkBackend)
