"""The ``neutron`` network backend: a reservation's network made and
deleted in Neutron with Climate's service credentials (an admin: it
creates provider networks in other projects and sees every project's
ports).

**At the start** of reservation ``<id>`` a network named as the
reservation asks is created in the lease's project with the provider
attributes of its segment (``provider:network_type``,
``provider:physical_network`` unless vxlan, ``provider:segmentation_id``
unless flat), the description the reservation gives (else
:data:`DESCRIPTION`) and the tags ``climate`` and ``reservation:<id>``.
A re-run first looks for the networks on that segment and keeps one that
is the reservation's (its tags or description name it, or it is of the
lease's project and names no other reservation: a crash between the
create and the tagging); a network on the segment of anyone else holds
it against the reservation: the start fails (503, retried with backoff)
saying so.

**At the end** the network (the id the start stored, else the one found
as above) loses what it can: each router interface on it is removed from
its router, every other port not Neutron's own (``network:dhcp``...) is
deleted, then each subnet, then the network.  What Neutron refuses (a
port in use, a subnet with addresses left: a 4xx other than 404) is
returned, one sentence each, and the end completes; an item already gone
is fine.  Neutron failing or not answering (5xx, no answer) raises
:class:`climate.exceptions.CloudUnavailable`: the event is retried.
"""

from oslo_log import log as logging

from climate.clients import neutron as neutron_clients
from climate import exceptions
from climate.plugins.network.backends import base
from climate.plugins import neutron_tags

LOG = logging.getLogger(__name__)

TAG = neutron_tags.TAG
RESERVATION_TAG = neutron_tags.RESERVATION_TAG
DESCRIPTION = neutron_tags.DESCRIPTION
ROUTER_INTERFACE = 'network:router_interface'
#: Ports Neutron owns and removes with the subnets and the network.
NEUTRON_OWNED = ('network:dhcp', 'network:distributed',
                 'network:router_ha_interface')


def _provider_attributes(segment):
    attrs = {'provider:network_type': segment['network_type']}
    if segment.get('physical_network'):
        attrs['provider:physical_network'] = segment['physical_network']
    if segment['network_type'] != 'flat':
        attrs['provider:segmentation_id'] = segment['segment_id']
    return attrs


def _refused(exc):
    """Whether Neutron refused (a 4xx: kept for the report) rather than
    failed (retried)."""
    return exc.status is not None and 400 <= exc.status < 500


class NeutronNetworkBackend(base.NetworkBackend):
    """Network reservations in Neutron (see module)."""

    name = 'neutron'
    acts_in_cloud = True

    def __init__(self, conf):
        super().__init__(conf)
        self._neutron = None

    @property
    def neutron(self):
        """The Neutron client on Climate's service session."""
        if self._neutron is None:
            self._neutron = neutron_clients.service_client(self.conf)
        return self._neutron

    def _find(self, reservation_id, project_id, segment, strict=True):
        """The reservation's network on ``segment`` (None), after
        refusing (``strict``) a network of anyone else there."""
        found = None
        for net in self.neutron.networks(**_provider_attributes(segment)):
            if neutron_tags.ours(net, reservation_id, project_id):
                found = found or net
                continue
            if not strict:
                continue
            raise exceptions.CloudUnavailable(
                service='Neutron',
                reason='segment %s is used by network %s (%s) of project '
                       '%s%s, not by reservation %s of project %s: the '
                       'start is retried until it is deleted' % (
                           ' '.join(str(v) for v in _provider_attributes(
                               segment).values()),
                           net.get('id'), net.get('name'),
                           neutron_tags.project_of(net), ''.join(
                               ' (reservation %s)' % r
                               for r in sorted(neutron_tags.claims(net))),
                           reservation_id, project_id))
        return found

    def start(self, reservation_id, project_id, segment, name,
              description=None):
        try:
            net = self._find(reservation_id, project_id, segment)
            if net is None:
                values = dict(_provider_attributes(segment), name=name,
                              project_id=project_id,
                              description=description or
                              DESCRIPTION % reservation_id)
                net = self.neutron.create_network(values)
                LOG.info('Reservation %s: network %s (%s) on segment %s in '
                         'project %s', reservation_id, net['id'], name,
                         segment, project_id)
            tags = set(net.get('tags') or ())
            wanted = tags | {TAG, RESERVATION_TAG % reservation_id}
            if wanted != tags:
                try:
                    self.neutron.set_tags(net['id'], sorted(wanted),
                                          collection='networks')
                except neutron_clients.NotFound:
                    LOG.warning('Network %s could not be tagged: Neutron '
                                'has no tags for networks', net['id'])
        except neutron_clients.NeutronError as exc:
            raise neutron_tags.unavailable(exc)
        return net['id']

    def end(self, reservation_id, project_id, segment, network_id=None):
        errors = []
        try:
            if network_id is None:
                net = self._find(reservation_id, project_id, segment,
                                 strict=False)
                if net is None:
                    return []
                network_id = net['id']
            self._clear(network_id, errors)
        except neutron_clients.NeutronError as exc:
            raise neutron_tags.unavailable(exc)
        if errors:
            LOG.warning('Reservation %s: network %s left in part: %s',
                        reservation_id, network_id, '; '.join(errors))
        return errors

    def _try(self, errors, what, func, *args):
        try:
            func(*args)
        except neutron_clients.NeutronError as exc:
            if not _refused(exc):
                raise
            errors.append('%s: %s' % (what, exc))
            return False
        return True

    def _clear(self, network_id, errors):
        for port in self.neutron.ports(network_id=network_id):
            owner = port.get('device_owner') or ''
            if owner.startswith(ROUTER_INTERFACE):
                self._try(errors, 'router interface %s of router %s' % (
                    port['id'], port.get('device_id')),
                    self.neutron.remove_router_interface,
                    port.get('device_id'), port['id'])
            elif not owner.startswith(NEUTRON_OWNED):
                self._try(errors, 'port %s (%s)' % (
                    port['id'], owner or 'no owner'),
                    self.neutron.delete_port, port['id'])
        for subnet in self.neutron.subnets(network_id):
            self._try(errors, 'subnet %s' % subnet['id'],
                      self.neutron.delete_subnet, subnet['id'])
        self._try(errors, 'network %s' % network_id,
                  self.neutron.delete_network, network_id)

    def check(self):
        try:
            self.neutron.networks(limit=1)
        except neutron_clients.NeutronError as exc:
            raise neutron_tags.unavailable(exc)
