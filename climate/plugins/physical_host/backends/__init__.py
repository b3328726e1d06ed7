"""Inventory backends of ``physical:host``, chosen by ``[hosts] inventory``.

See ``base.InventoryBackend`` for the contract.
"""

import importlib

_BACKENDS = {
    'nova': 'climate.plugins.physical_host.backends.nova:NovaBackend',
    'static': 'climate.plugins.physical_host.backends.static:StaticBackend',
}


def load(conf):
    """An instance of the backend ``[hosts] inventory`` names.

    Imported on demand: a site on the static backend never imports
    novaclient.
    """
    module, _, cls = _BACKENDS[conf.hosts.inventory].partition(':')
    return getattr(importlib.import_module(module), cls)(conf)
