"""The ``neutron`` floating IP backend: reserved addresses as Neutron sees
them, with Climate's service credentials (an admin: it creates floating
IPs in other projects and reads every project's).

**Registration.**  The network must be known to Neutron and external
(``router:external``); the address must lie in the CIDR of one of its
subnets, and outside that subnet's ``allocation_pools`` and
``gateway_ip``, so that Neutron never hands it out on its own: only an
admin naming it (Climate, at a start) makes a floating IP of it.  The
subnet must be one Neutron makes floating IPs on: IPv4 (Neutron's
floating IPs are IPv4 only), with no ``service_types`` or with
``network:floatingip`` among them; any other address would be accepted
here and refused by Neutron at every start.  The subnet's id is kept
with the registration.

**At the start** of reservation ``<id>`` each of its addresses becomes a
floating IP of the lease's project, with that exact address (and its
subnet), the description :data:`DESCRIPTION` and the tags ``climate``
and ``reservation:<id>`` (a Neutron without the tag extension keeps the
description alone).  A re-run looks each address up first
(``floating_ip_address`` and ``floating_network_id``) and keeps a
floating IP already there for the reservation.  A floating IP is the
reservation's when its tags or description name it, or when it is of the
lease's project and names no other reservation; any other one holds the
address against the reservation (an admin's, or the previous lease's not
yet ended): the start fails (503, retried with backoff) saying so.

**At the end** each floating IP of the reservation's addresses that is
the reservation's is disassociated from its port when it has one, then
deleted; an address already free, or held by another reservation's
floating IP, is left alone.

Neutron failing or not answering raises
:class:`climate.exceptions.CloudUnavailable`: the event is retried.
"""

import ipaddress

from oslo_log import log as logging

from climate.clients import neutron as neutron_clients
from climate import exceptions
from climate.plugins import neutron_tags
from climate.plugins.virtual_floatingip.backends import base

LOG = logging.getLogger(__name__)

TAG = neutron_tags.TAG
#: The device owner (subnet service type) of a floating IP's port.
FLOATINGIP_SERVICE = 'network:floatingip'
RESERVATION_TAG = neutron_tags.RESERVATION_TAG
DESCRIPTION = neutron_tags.DESCRIPTION


def _ranges(subnet):
    """The ``(first, last)`` addresses Neutron hands out of ``subnet``
    by itself: its allocation pools and its gateway."""
    taken = []
    for pool in subnet.get('allocation_pools') or []:
        try:
            taken.append((ipaddress.ip_address(pool['start']),
                          ipaddress.ip_address(pool['end'])))
        except (KeyError, TypeError, ValueError):
            continue
    if subnet.get('gateway_ip'):
        try:
            gateway = ipaddress.ip_address(subnet['gateway_ip'])
        except ValueError:
            pass
        else:
            taken.append((gateway, gateway))
    return taken


def _text(ranges):
    return ', '.join(str(a) if a == b else '%s-%s' % (a, b)
                     for a, b in ranges) or 'none'


class NeutronFloatingIPBackend(base.FloatingIPBackend):
    """Floating IP reservations in Neutron (see module)."""

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

    # -- registration ------------------------------------------------------

    def subnet_of(self, network_id, address):
        ip = ipaddress.ip_address(address)
        try:
            network = self.neutron.network(network_id)
            subnets = self.neutron.subnets(network_id)
        except neutron_clients.NotFound:
            raise exceptions.FloatingIPNetworkNotFound(
                network=network_id,
                reason='Neutron knows no network %s: floating_network_id '
                       'names the external network the address belongs '
                       'to.' % network_id)
        except neutron_clients.NeutronError as exc:
            raise neutron_tags.unavailable(exc)
        if not network.get('router:external'):
            raise exceptions.FloatingIPNetworkNotFound(
                network=network_id,
                reason='Network %s is not external (router:external is '
                       'false): floating IPs are addresses of an external '
                       'network.' % network_id)
        cidrs = []
        for subnet in sorted(subnets, key=lambda s: s.get('id') or ''):
            try:
                cidr = ipaddress.ip_network(subnet['cidr'], strict=False)
            except (KeyError, TypeError, ValueError):
                continue
            cidrs.append(str(cidr))
            if cidr.version != ip.version or ip not in cidr:
                continue
            taken = _ranges(subnet)
            if any(first <= ip <= last for first, last in taken):
                raise exceptions.NeutronUsesFloatingIP(
                    floatingip=address, subnet=subnet['id'],
                    reason='Neutron hands out the allocation pools and the '
                           'gateway of subnet %s (%s) by itself: register '
                           'an address of %s outside them, or shrink the '
                           "subnet's allocation pools first." % (
                               subnet['id'], _text(taken), cidr))
            edges = (cidr.network_address, cidr.broadcast_address) \
                if ip.version == 4 else (cidr.network_address,)
            if cidr.num_addresses > 2 and ip in edges:
                raise exceptions.FloatingIPSubnetNotFound(
                    fip=address,
                    reason='%s is the network or broadcast address of '
                           'subnet %s (%s).' % (address, subnet['id'], cidr))
            if ip.version != 4:
                # Neutron answers "does not contain any IPv4 subnet" or
                # "Unable to find any IP address on external network"
                raise exceptions.FloatingIPSubnetNotFound(
                    fip=address,
                    reason="Neutron's floating IPs are IPv4 addresses only: "
                           '%s is in the IPv6 subnet %s (%s).' % (
                               address, subnet['id'], cidr))
            services = subnet.get('service_types') or []
            if services and FLOATINGIP_SERVICE not in services:
                # Neutron: 409 IpAddressGenerationFailureNoMatchingSubnet
                raise exceptions.FloatingIPSubnetNotFound(
                    fip=address,
                    reason='Subnet %s (%s) holding it is for %s only: '
                           'Neutron makes floating IPs on subnets without '
                           'service_types or with %s among them.' % (
                               subnet['id'], cidr, ', '.join(services),
                               FLOATINGIP_SERVICE))
            return subnet['id']
        raise exceptions.FloatingIPSubnetNotFound(
            fip=address,
            reason='No subnet of network %s holds it (its subnets: %s).' % (
                network_id, ', '.join(cidrs) or 'none'))

    # -- start and end -----------------------------------------------------

    def _find(self, network_id, address):
        found = self.neutron.floatingips(floating_ip_address=address,
                                         floating_network_id=network_id)
        return found[0] if found else None

    def _make(self, reservation_id, project_id, network_id, address,
              subnet_id):
        fip = self._find(network_id, address)
        if fip is None:
            values = {'floating_network_id': network_id,
                      'floating_ip_address': address,
                      'project_id': project_id,
                      'description': DESCRIPTION % reservation_id}
            if subnet_id:
                values['subnet_id'] = subnet_id
            try:
                fip = self.neutron.create_floatingip(values)
            except neutron_clients.Conflict:
                # made meanwhile (a concurrent re-run), or taken: look
                fip = self._find(network_id, address)
                if fip is None:
                    raise
        if not neutron_tags.ours(fip, reservation_id, project_id):
            raise exceptions.CloudUnavailable(
                service='Neutron',
                reason='address %s of network %s is held by floating IP %s '
                       'of project %s%s, not by reservation %s of project '
                       '%s: the start is retried until it is free' % (
                           address, network_id, fip.get('id'),
                           neutron_tags.project_of(fip), ''.join(
                               ' (reservation %s)' % r
                               for r in sorted(neutron_tags.claims(fip))),
                           reservation_id, project_id))
        tags = set(fip.get('tags') or ())
        wanted = tags | {TAG, RESERVATION_TAG % reservation_id}
        if wanted != tags:
            try:
                self.neutron.set_tags(fip['id'], sorted(wanted))
            except neutron_clients.NotFound:
                # no tag extension: the description names the reservation
                LOG.warning('Floating IP %s (%s) could not be tagged: '
                            'Neutron has no tags for floating IPs',
                            fip['id'], address)
        return fip['id']

    def start(self, reservation_id, project_id, network_id, addresses):
        made = {}
        try:
            for address, subnet_id in addresses:
                made[address] = self._make(reservation_id, project_id,
                                           network_id, address, subnet_id)
        except neutron_clients.NeutronError as exc:
            raise neutron_tags.unavailable(exc)
        if made:
            LOG.info('Reservation %s: floating IPs %s in project %s',
                     reservation_id, ', '.join(sorted(made)), project_id)
        return made

    def end(self, reservation_id, project_id, network_id, addresses):
        try:
            for address in addresses:
                fip = self._find(network_id, address)
                if fip is None:
                    continue
                if not neutron_tags.ours(fip, reservation_id, project_id):
                    LOG.warning('Reservation %s: floating IP %s (%s) of '
                                'project %s is not the reservation\'s: left '
                                'as it is', reservation_id, fip.get('id'),
                                address, neutron_tags.project_of(fip))
                    continue
                if fip.get('port_id'):
                    # let go of the port first, then delete
                    self.neutron.update_floatingip(fip['id'],
                                                   {'port_id': None})
                self.neutron.delete_floatingip(fip['id'])
        except neutron_clients.NeutronError as exc:
            raise neutron_tags.unavailable(exc)

    def check(self):
        try:
            self.neutron.floatingips(limit=1)
        except neutron_clients.NeutronError as exc:
            raise neutron_tags.unavailable(exc)
