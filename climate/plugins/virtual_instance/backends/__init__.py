"""What ``virtual:instance`` does in the cloud, chosen by ``[hosts]
inventory``: ``static`` only records (the embedded default), ``nova``
makes the private flavor, aggregate, server group and Placement
inventories of each reservation.

See ``base.InstanceBackend`` for the contract.
"""

from climate.plugins import backend_loader
from climate.plugins.virtual_instance.backends import base

_MODULES = {
    'nova': 'climate.plugins.virtual_instance.backends.nova',
    'static': 'climate.plugins.virtual_instance.backends.static',
}

BackendUnavailable = backend_loader.BackendUnavailable


def load(conf):
    """An instance of the backend of ``[hosts] inventory``
    (``backend_loader.load``: imported on demand, so a site on the static
    inventory never imports the Nova and Placement clients)."""
    return backend_loader.load(conf, 'virtual:instance', 'hosts', _MODULES,
                               base.InstanceBackend)
