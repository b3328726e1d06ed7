"""What ``virtual:volume`` does in the cloud, chosen by ``[volumes]
inventory``: ``static`` only records (the embedded default), ``cinder``
reads the pools from Cinder and creates and removes the reservation's
volumes.

See ``base.VolumeBackend`` for the contract.
"""

import importlib

from climate.plugins.virtual_volume.backends import base

_MODULES = {
    'cinder': 'climate.plugins.virtual_volume.backends.cinder',
    'static': 'climate.plugins.virtual_volume.backends.static',
}


class BackendUnavailable(Exception):
    """No volume backend for the configured inventory."""


def load(conf):
    """An instance of the backend of ``[volumes] inventory``.

    Imported on demand: a site on the static inventory never imports the
    Cinder client.  The module's backend is its
    :class:`base.VolumeBackend` subclass whose ``name`` is the
    inventory's.
    """
    name = conf.volumes.inventory
    if name not in _MODULES:
        raise BackendUnavailable(
            'no virtual:volume backend for [volumes] inventory = %s; '
            'known: %s' % (name, ', '.join(sorted(_MODULES))))
    try:
        module = importlib.import_module(_MODULES[name])
    except ImportError as exc:
        raise BackendUnavailable(
            'the %s backend of virtual:volume cannot be loaded (%s)' % (
                name, exc)) from exc
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(
                value, base.VolumeBackend) and value.name == name:
            return value(conf)
    raise BackendUnavailable(
        'module %s holds no virtual:volume backend named %s' % (
            _MODULES[name], name))
