"""What ``virtual:volume`` does in the cloud, chosen by ``[volumes]
inventory``: ``static`` only records (the embedded default), ``cinder``
reads the pools from Cinder and creates and removes the reservation's
volumes.

See ``base.VolumeBackend`` for the contract.
"""

from climate.plugins import backend_loader
from climate.plugins.virtual_volume.backends import base

_MODULES = {
    'cinder': 'climate.plugins.virtual_volume.backends.cinder',
    'static': 'climate.plugins.virtual_volume.backends.static',
}

BackendUnavailable = backend_loader.BackendUnavailable


def load(conf):
    """An instance of the backend of ``[volumes] inventory``
    (``backend_loader.load``: imported on demand, so a site on the static
    inventory never imports the Cinder client)."""
    return backend_loader.load(conf, 'virtual:volume', 'volumes', _MODULES,
                               base.VolumeBackend)
