"""Power backends of ``physical:host``, chosen by ``[power] backend``.

See ``base.PowerBackend`` for the contract.  The module of a backend is
imported only when it is configured: a site on the static backend never
imports sushy.
"""

from climate.plugins import backend_loader
from climate.plugins.physical_host.power import base

_MODULES = {
    'static': 'climate.plugins.physical_host.power.static',
    'ironic': 'climate.plugins.physical_host.power.ironic',
    'redfish': 'climate.plugins.physical_host.power.redfish',
}

BackendUnavailable = backend_loader.BackendUnavailable


def guards_nova_service(conf):
    """Whether power actions close the hosts' nova-compute services: a
    backend that acts, on Nova's inventory, unless ``[power]
    manage_nova_service`` is off."""
    return (conf.power.backend != 'static' and
            conf.power.manage_nova_service and
            conf.hosts.inventory == 'nova')


def load(conf):
    """The backend of ``[power] backend``, wrapped by the nova-compute step
    when :func:`guards_nova_service`.

    :raises climate.plugins.backend_loader.BackendUnavailable: an unknown
        backend, or one whose library is missing (sushy for redfish).
    """
    backend = backend_loader.load(conf, 'power', 'power', _MODULES,
                                  base.PowerBackend, option='backend')
    if guards_nova_service(conf):
        # imported here: novaclient only with Nova's inventory
        from climate.plugins.physical_host.power import nova_service
        backend = nova_service.NovaServiceGuard(conf, backend)
    return backend
