"""What the ``nova`` instance backend (``nova``) and its actions on
pre-created servers (``nova_servers``) share: the context manager turning
Nova, Placement and transport errors into ``CloudUnavailable``, readers of
novaclient resources, and a flavor's shape as ``flavor()`` answers it.

Neither module imports the other's names: both import this one.
"""

import math

from keystoneauth1 import exceptions as ks_exc
from novaclient import exceptions as nova_exc

from climate.clients import calls as cloud_calls
from climate.clients import placement as placement_clients
from climate import exceptions

#: Seconds one Nova call may take when ``[service_auth] timeout`` is unset.
CALL_TIMEOUT = 60

#: Placement's errors name Placement; Nova's and transport errors the
#: service the call gives.
CLOUD_ERRORS = {placement_clients.PlacementError: 'Placement',
                nova_exc.ClientException: None,
                ks_exc.ClientException: None}


class Calls(cloud_calls.CloudCalls):
    """Context manager turning Nova, Placement and transport errors into
    CloudUnavailable, naming what was being done."""

    def __init__(self, doing, service='Nova'):
        super().__init__(doing, service, CLOUD_ERRORS)


def field(obj, key, default):
    """An attribute of a novaclient resource as Nova's answer had it
    (reading a missing one would make novaclient fetch it again)."""
    info = obj.to_dict() if hasattr(obj, 'to_dict') else vars(obj)
    value = info.get(key)
    return default if value is None else value


def nova_not_found(exc):
    """Whether a CloudUnavailable came from a Nova 404."""
    return isinstance(exc.__cause__, nova_exc.NotFound)


def service(facts):
    """The name Nova's aggregates know a host by."""
    return facts.get('service_name') or facts['hypervisor_hostname']


def flavor_shape(ident, vcpus, ram, disk, ephemeral, swap, specs):
    """The answer of ``flavor()`` from a flavor's fields and extra specs
    (see :meth:`NovaInstanceBackend.flavor`); ``ident`` names it in
    errors (its id, or the server whose embedded flavor it is)."""
    resources, required, forbidden = {}, [], []
    for key, value in sorted((specs or {}).items()):
        prefix, _sep, name = key.partition(':')
        if not name:
            continue
        if _group_of(prefix, 'resources'):
            try:
                amount = int(value)
            except (TypeError, ValueError):
                raise exceptions.InvalidInput(
                    reason='flavor_id: flavor %s has an invalid extra '
                    'spec %s=%s.' % (ident, key, value))
            resources[name] = resources.get(name, 0) + amount
        elif _group_of(prefix, 'trait'):
            if value not in ('required', 'forbidden'):
                raise exceptions.MalformedParameter(
                    message='Invalid value for trait %s. Flavor %s has '
                    'the extra spec %s=%s; a trait is required or '
                    'forbidden.' % (name, ident, key, value),
                    param='flavor_id')
            chosen = required if value == 'required' else forbidden
            if name not in chosen:
                chosen.append(name)
    if (specs or {}).get('hw:cpu_policy') == 'dedicated':
        resources.setdefault('PCPU', vcpus)
        resources.setdefault('VCPU', 0)
    swap_gb = int(math.ceil((swap or 0) / 1024.0))
    return {
        'id': ident,
        'vcpus': vcpus,
        'memory_mb': ram,
        'disk_gb': (disk or 0) + (ephemeral or 0) + swap_gb,
        'resources': resources,
        'traits': {'required': required, 'forbidden': forbidden},
    }


def _group_of(prefix, kind):
    """Whether an extra spec prefix is ``kind`` of the unnumbered group
    (``resources``) or of a request group (``resources1``,
    ``resources_gpu``: Nova's suffixes are digits, or ``_`` and a name)."""
    if not prefix.startswith(kind):
        return False
    suffix = prefix[len(kind):]
    return suffix == '' or suffix.isdigit() or (
        suffix.startswith('_') and len(suffix) > 1)
