"""What ``virtual:instance`` does in the cloud, chosen by ``[hosts]
inventory``: ``static`` only records (the embedded default), ``nova``
makes the private flavor, aggregate, server group and Placement
inventories of each reservation.

See ``base.InstanceBackend`` for the contract.
"""

import importlib

from climate.plugins.virtual_instance.backends import base

_MODULES = {
    'nova': 'climate.plugins.virtual_instance.backends.nova',
    'static': 'climate.plugins.virtual_instance.backends.static',
}


class BackendUnavailable(Exception):
    """No instance backend for the configured inventory."""


def load(conf):
    """An instance of the backend of ``[hosts] inventory``.

    Imported on demand: a site on the static inventory never imports the
    Nova and Placement clients.  The module's backend is its
    :class:`base.InstanceBackend` subclass whose ``name`` is the
    inventory's.
    """
    name = conf.hosts.inventory
    if name not in _MODULES:
        raise BackendUnavailable(
            'no virtual:instance backend for [hosts] inventory = %s; '
            'known: %s' % (name, ', '.join(sorted(_MODULES))))
    try:
        module = importlib.import_module(_MODULES[name])
    except ImportError as exc:
        raise BackendUnavailable(
            'the %s backend of virtual:instance cannot be loaded (%s)' % (
                name, exc)) from exc
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(
                value, base.InstanceBackend) and value.name == name:
            return value(conf)
    raise BackendUnavailable(
        'module %s holds no virtual:instance backend named %s' % (
            _MODULES[name], name))
