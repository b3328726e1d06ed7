"""How Climate marks what it makes in Neutron for a reservation (floating
IPs, networks), and tells its own from anyone else's: the tags
``climate`` and ``reservation:<id>`` and the description
:data:`DESCRIPTION`.  Shared by the ``neutron`` backends of
``virtual:floatingip`` and ``network``."""

from climate import exceptions

TAG = 'climate'
RESERVATION_TAG = 'reservation:%s'
DESCRIPTION = 'Reserved by Climate: reservation %s'


def unavailable(exc):
    """CloudUnavailable for a Neutron error ``exc`` (raised ``from`` it by
    the caller)."""
    return exceptions.CloudUnavailable(service='Neutron', reason=str(exc))


def project_of(resource):
    """The project of a Neutron resource (``tenant_id`` on older
    Neutrons)."""
    return resource.get('project_id') or resource.get('tenant_id')


def claims(resource):
    """The reservations a Neutron resource's tags and description name."""
    found = {tag[len(RESERVATION_TAG % ''):]
             for tag in resource.get('tags') or ()
             if tag.startswith(RESERVATION_TAG % '')}
    prefix = DESCRIPTION % ''
    if (resource.get('description') or '').startswith(prefix):
        found.add(resource['description'][len(prefix):])
    return found


def ours(resource, reservation_id, project_id):
    """Whether a Neutron resource is the reservation's: its tags or
    description name it, or it is of the lease's project and names no
    other reservation (a crash between the create and the tagging)."""
    named = claims(resource)
    return reservation_id in named or (
        not named and project_of(resource) == project_id)
