"""``virtual:floatingip`` on the harness's real Neutron, through Climate's API.

The harness's external network ``public`` (flat, physnet ``public``) has
the subnet 203.0.113.0/24 whose allocation pool is 203.0.113.2-127 and
gateway .1: addresses .128-.254 are Neutron's to hold but never to hand
out by itself.  Climate runs with ``[floatingips] inventory = neutron``.

1. Registration through ``/v1/floatingips`` (admin) is checked with
   Neutron: an address outside the pool is taken with its subnet; one in
   the pool, the gateway, an address of no subnet of the network, a
   network Neutron does not know, a network that is not external, an IPv6
   address and one of a subnet whose service types leave floating IPs out
   (Neutron refuses to make those floating IPs: checked too) are 400s;
   python-blazarclient's ``blazar floatingip-list`` lists the address
   registered.
2. A lease of two addresses (one named): at the start exactly those
   become floating IPs of the lease's project (made by Climate's service
   user, tagged and described with the reservation), the reservation
   shows them; the project associates one to a port of its own (a
   network, a subnet, a router with its gateway on ``public``).  The
   active reservation grows onto an address an admin's floating IP holds:
   503, nothing changed (the admin's floating IP stays); once it is free
   the growth makes the new floating IP at once; shrinking is a 409.  At
   the end every one of them is gone, the associated one included; the
   port stays.
3. Neutron stopped: a registration is a 503 (nothing written); a start
   is retried, the lease says why, and completes once Neutron is back.
"""

import json
import os
import subprocess
import time

from keystoneauth1 import adapter

from climate.tests.functional import procs
from climate.tests.functional.procs import wait_for
from climate.tests.integration.conftest import harness
from climate.tests.integration.identity import assert_error
from climate.tests.integration.identity import iso_in

#: Seconds from a lease's create to its start: room to see nothing before.
LEAD = 6
PUBLIC = 'public'
#: Addresses of public's subnet that Neutron does not hand out by itself.
FREE = ['203.0.113.%d' % n for n in (200, 201, 202, 203)]
IN_POOL = '203.0.113.10'
GATEWAY = '203.0.113.1'
OUTSIDE = '198.51.100.7'


class Neutron:
    """Neutron's networking API v2.0 as the harness's users see it."""

    def __init__(self, cloud):
        self.cloud = cloud
        self.sessions = {}
        self.admin = self.api('admin')
        self.public = self.get('/networks', name=PUBLIC)['networks'][0]
        self.public_subnet = self.public['subnets'][0]

    def api(self, who):
        sess = self.cloud.session(who)
        self.sessions[who] = sess
        return adapter.Adapter(sess, service_type='network',
                               interface='public',
                               region_name=self.cloud.region)

    def project_id(self, who):
        return self.sessions[who].get_project_id() if who in self.sessions \
            else self.cloud.session(who).get_project_id()

    def get(self, path, who=None, **params):
        resp = (who or self.admin).get('/v2.0' + path, params=params,
                                       raise_exc=False)
        assert resp.status_code == 200, resp.text
        return resp.json()

    def call(self, who, method, path, body=None, ok=(200, 201, 204)):
        resp = who.request('/v2.0' + path, method, json=body,
                           raise_exc=False)
        assert resp.status_code in ok, (method, path, resp.text)
        return resp.json() if resp.content else {}

    def fips(self, *addresses):
        """The floating IPs of ``public`` (of every project), by address,
        as the admin sees them (only ``addresses`` when given)."""
        found = {f['floating_ip_address']: f for f in self.get(
            '/floatingips', floating_network_id=self.public['id'])[
            'floatingips']}
        return {a: f for a, f in found.items()
                if not addresses or a in addresses}

    def project_network(self, who):
        """A network of ``who``'s project with a subnet, routed to
        ``public`` (the harness has no project network types: the admin
        makes a flat one for it), and a port on it; returns the port."""
        user = self.api(who)
        net = self.call(self.admin, 'POST', '/networks', {'network': {
            'name': 'climate-it-fip-net', 'project_id': self.project_id(who),
            'provider:network_type': 'flat',
            'provider:physical_network': 'climate-it-fip'}})['network']
        subnet = self.call(user, 'POST', '/subnets', {'subnet': {
            'network_id': net['id'], 'cidr': '10.42.0.0/24',
            'ip_version': 4}})['subnet']
        router = self.call(user, 'POST', '/routers', {'router': {
            'name': 'climate-it-fip-router',
            'external_gateway_info': {'network_id': self.public['id']}}})[
            'router']
        self.call(user, 'PUT', '/routers/%s/add_router_interface' %
                  router['id'], {'subnet_id': subnet['id']})
        return self.call(user, 'POST', '/ports', {'port': {
            'network_id': net['id'], 'name': 'climate-it-fip-port'}})['port']


def register(api, token, network_id, address):
    return api.call('POST', '/v1/floatingips', token, {
        'floating_network_id': network_id, 'floating_ip_address': address})


def registered(api, token, neutron, *addresses):
    out = []
    for address in addresses:
        resp = register(api, token, neutron.public['id'], address)
        assert resp.status_code == 201, resp.text
        out.append(resp.json()['floatingip'])
    return out


def fip_lease(api, token, name, reservation, start, end):
    resp = api.call('POST', '/v1/leases', token, {
        'name': name, 'start_date': start, 'end_date': end, 'events': [],
        'reservations': [dict(reservation,
                              resource_type='virtual:floatingip')]})
    assert resp.status_code == 201, resp.text
    return resp.json()['lease']


def end_now(api, token, lease):
    return api.end_now(token, lease['id'], timeout=60)


def _blazar(cloud, *args):
    """python-blazarclient's ``blazar`` as the harness's admin, through
    the catalog."""
    user = cloud.users['admin']
    env = {k: v for k, v in os.environ.items() if not k.startswith('OS_')}
    env.update(PYTHONWARNINGS='ignore', OS_AUTH_TYPE='password',
               OS_AUTH_URL=cloud.auth_url,
               OS_REGION_NAME=cloud.region, OS_IDENTITY_API_VERSION='3',
               OS_USERNAME=user['username'], OS_PASSWORD=user['password'],
               OS_PROJECT_NAME=user['project_name'],
               OS_USER_DOMAIN_NAME=user['user_domain_name'],
               OS_PROJECT_DOMAIN_NAME=user['project_domain_name'])
    done = subprocess.run(procs.console_script('blazar') + list(args),
                          capture_output=True, text=True, env=env,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, (done.stdout, done.stderr)
    return done.stdout


def test_registration_checked_with_neutron(cloud, api, tokens, neutron):
    admin = tokens['admin']
    pub, subnet = neutron.public['id'], neutron.public_subnet
    [made] = registered(api, admin, neutron, FREE[0])
    assert (made['floating_network_id'], made['floating_ip_address'],
            made['subnet_id'], made['reservable']) == (
        pub, FREE[0], subnet, True)

    # Neutron hands out its allocation pool and its gateway by itself
    for address in (IN_POOL, GATEWAY):
        body = assert_error(register(api, admin, pub, address), 400,
                            'NeutronUsesFloatingIP')
        assert body['error_message'].startswith(
            'The floating IP %s is used in allocation_pools or gateway_ip '
            'in subnet %s .' % (address, subnet)), body
        assert '203.0.113.2-203.0.113.127' in body['error_message'], body
    # no subnet of the network holds it
    body = assert_error(register(api, admin, pub, OUTSIDE), 400,
                        'FloatingIPSubnetNotFound')
    assert body['error_message'].startswith(
        'Valid subnet for the floating IP %s is not found.' % OUTSIDE), body
    assert '203.0.113.0/24' in body['error_message'], body
    # a network Neutron does not know, one that is not external
    unknown = '00000000-0000-4000-8000-000000000000'
    body = assert_error(register(api, admin, unknown, FREE[1]), 400,
                        'FloatingIPNetworkNotFound')
    assert body['error_message'].startswith(
        'Failed to find network %s.' % unknown), body
    internal = neutron.call(neutron.admin, 'POST', '/networks', {
        'network': {'name': 'climate-it-internal',
                    'provider:network_type': 'flat',
                    'provider:physical_network': 'climate-it-internal'}})[
        'network']
    body = assert_error(register(api, admin, internal['id'], FREE[1]), 400,
                        'FloatingIPNetworkNotFound')
    assert 'external' in body['error_message'], body
    # subnets Neutron makes no floating IP on (checked on this Neutron
    # too): an IPv6 one, one whose service types leave floating IPs out
    ext = neutron.call(neutron.admin, 'POST', '/networks', {'network': {
        'name': 'climate-it-ext', 'router:external': True,
        'provider:network_type': 'flat',
        'provider:physical_network': 'climate-it-ext'}})['network']
    for cidr, first, last, extra in (
            ('2001:db8:113::/64', '2001:db8:113::2', '2001:db8:113::ff',
             {'ip_version': 6}),
            ('192.0.2.0/24', '192.0.2.2', '192.0.2.99',
             {'ip_version': 4, 'service_types': ['network:router_gateway']})):
        neutron.call(neutron.admin, 'POST', '/subnets', {'subnet': dict(
            network_id=ext['id'], cidr=cidr, enable_dhcp=False,
            allocation_pools=[{'start': first, 'end': last}], **extra)})
    for address, why in (('2001:db8:113::1:a', 'IPv4 addresses only'),
                         ('192.0.2.150', 'network:router_gateway only')):
        body = assert_error(register(api, admin, ext['id'], address), 400,
                            'FloatingIPSubnetNotFound')
        assert body['error_message'].startswith(
            'Valid subnet for the floating IP %s is not found.' % address)
        assert why in body['error_message'], body
        resp = neutron.admin.post('/v2.0/floatingips', json={'floatingip': {
            'floating_network_id': ext['id'],
            'floating_ip_address': address}}, raise_exc=False)
        assert resp.status_code in (400, 409), resp.text
    # only an admin registers
    assert_error(register(api, tokens['demo'], pub, FREE[1]), 403)

    listed = api.call('GET', '/v1/floatingips', admin)
    assert listed.status_code == 200, listed.text
    assert [(f['floating_ip_address'], f['subnet_id'])
            for f in listed.json()['floatingips']] == [(FREE[0], subnet)]
    # python-blazarclient through the catalog sees the same
    rows = json.loads(_blazar(cloud, 'floatingip-list', '-f', 'json'))
    assert [(r['id'], r['floating_ip_address']) for r in rows] == [
        (made['id'], FREE[0])]
    # Neutron made nothing of it
    assert not neutron.fips()


def test_lease_makes_and_deletes_floating_ips(cloud, api, tokens, neutron):
    t0 = time.monotonic()
    demo = neutron.project_id('demo')
    pub = neutron.public['id']
    registered(api, tokens['admin'], neutron, *FREE[:3])
    start, due = iso_in(LEAD), time.monotonic() + LEAD
    lease = fip_lease(api, tokens['demo'], 'two-ips', {
        'network_id': pub, 'amount': 2, 'required_floatingips': [FREE[2]]},
        start, iso_in(600))
    rid = lease['reservations'][0]['id']
    booked = api.lease(tokens['demo'], lease['id'])['reservations'][0]
    assert FREE[2] in booked['floatingips'], booked
    assert len(booked['floatingips']) == 2, booked
    # Nothing is made in Neutron before the start.  Only a read that
    # ended before the start was due says so: on a loaded machine the
    # lease may be due by now (LEAD seconds), and its start makes them.
    before = neutron.fips(*FREE)
    if time.monotonic() < due:
        assert not before, 'floating IPs before the start'
    # a port of the project's own, routed to public, meanwhile
    port = neutron.project_network('demo')

    lease = api.wait_status(tokens['demo'], lease['id'], 'ACTIVE',
                            timeout=LEAD + 60)
    active = time.monotonic()
    # the start is run when due, not at some later sweep; the margin is
    # for a loaded 2-core CI machine (the figure is printed below)
    assert active - due < 45, 'ACTIVE %.1f s after the start' % (
        active - due)
    rsv = lease['reservations'][0]
    assert rsv['floatingips'] == booked['floatingips'], rsv
    made = neutron.fips(*FREE)
    assert sorted(made) == sorted(rsv['floatingips'])
    for address, fip in made.items():
        assert fip['project_id'] == demo, fip
        assert fip['floating_network_id'] == pub, fip
        assert fip['port_id'] is None, fip
        assert {'climate', 'reservation:' + rid} <= set(fip['tags']), fip
        assert fip['description'] == 'Reserved by Climate: reservation ' + \
            rid, fip
    # the project sees them as its own and associates one to its port
    demo_net = neutron.api('demo')
    mine = {f['floating_ip_address']: f for f in neutron.get(
        '/floatingips', who=demo_net)['floatingips']}
    assert sorted(mine) == sorted(made)
    used = neutron.call(demo_net, 'PUT', '/floatingips/%s' %
                        made[FREE[2]]['id'],
                        {'floatingip': {'port_id': port['id']}})['floatingip']
    assert used['port_id'] == port['id']
    assert used['fixed_ip_address'] == port['fixed_ips'][0]['ip_address']

    # the active reservation grows onto the third address: an admin's
    # floating IP holding it fails the growth (503), the lease stays as
    # it was and the admin's floating IP too
    [spare] = set(FREE[:3]) - set(rsv['floatingips'])
    squatter = neutron.call(neutron.admin, 'POST', '/floatingips', {
        'floatingip': {'floating_network_id': pub,
                       'floating_ip_address': spare}})['floatingip']
    grow = {'reservations': [{'id': rid, 'amount': 3}]}
    resp = api.update(tokens['demo'], lease['id'],
                      grow)
    body = assert_error(resp, 503)
    assert spare in body['error_message'] and squatter['id'] in \
        body['error_message'], body
    still = api.lease(tokens['demo'], lease['id'])['reservations'][0]
    assert (still['amount'], still['floatingips']) == (
        2, rsv['floatingips']), still
    now = neutron.fips(*FREE)
    assert sorted(now) == sorted(rsv['floatingips'] + [spare])
    assert now[spare]['id'] == squatter['id']
    assert now[spare]['project_id'] != demo
    # once the address is free the growth makes it at once
    neutron.call(neutron.admin, 'DELETE', '/floatingips/%s' % squatter['id'])
    resp = api.update(tokens['demo'], lease['id'],
                      grow)
    assert resp.status_code == 200, resp.text
    grown = resp.json()['lease']['reservations'][0]
    assert grown['amount'] == 3
    assert grown['floatingips'] == sorted(FREE[:3]), grown
    now = neutron.fips(*FREE)
    assert sorted(now) == sorted(FREE[:3])
    assert now[spare]['project_id'] == demo
    assert 'reservation:' + rid in now[spare]['tags']
    # and may not give one back while active
    resp = api.update(tokens['demo'], lease['id'],
                      {'reservations': [{'id': rid, 'amount': 2}]})
    assert_error(resp, 409)
    # the project's association is untouched by all this
    assert now[FREE[2]]['port_id'] == port['id']
    grown_at = time.monotonic()

    lease = end_now(api, tokens['demo'], lease)
    ended = time.monotonic()
    assert not neutron.fips(*FREE), neutron.fips(*FREE)
    # the port the address was on is the project's: it stays
    assert neutron.get('/ports/%s' % port['id'])['port']['id'] == port['id']
    print('\nfloating IPs: ACTIVE %.1f s after the start (%.1f s after the '
          'create), grown in %.1f s, ended %.1f s after the end request' % (
              active - due, active - t0, grown_at - active,
              ended - grown_at))


def test_start_waits_for_neutron(cloud, api, tokens, neutron):
    """The Neutron server stopped at the start: attempts fail naming
    Neutron, the lease says so; once it is back the address is made."""
    pub = neutron.public['id']
    registered(api, tokens['admin'], neutron, FREE[3])
    status, out = harness('stop', 'neutron', timeout=120)
    assert status == 0, out
    try:
        # a registration cannot be checked: 503, nothing written
        body = assert_error(register(api, tokens['admin'], pub, FREE[2]),
                            503)
        assert 'Neutron' in body['error_message'], body
        listed = api.call('GET', '/v1/floatingips', tokens['admin'])
        assert [f['floating_ip_address'] for f in
                listed.json()['floatingips']] == [FREE[3]]
        lease = fip_lease(api, tokens['demo'], 'through-an-outage', {
            'network_id': pub, 'amount': 1}, 'now', iso_in(600))

        def failed_twice():
            seen = api.lease(tokens['demo'], lease['id'])
            start = next(e for e in seen['events']
                         if e['event_type'] == 'start_lease')
            return seen if start['attempts'] >= 2 and start['last_error'] \
                else None
        seen = wait_for(failed_twice, 60, interval=0.5,
                        message='two failed start attempts')
        start = next(e for e in seen['events']
                     if e['event_type'] == 'start_lease')
        assert 'Neutron' in start['last_error'], start
        assert seen['status'] != 'ACTIVE'
        assert 'start_lease attempt' in (seen['status_reason'] or ''), seen
        assert 'Neutron' in seen['status_reason']
    finally:
        status, out = harness('start', timeout=300)
        assert status == 0, out
    back = time.monotonic()
    lease = api.wait_status(tokens['demo'], lease['id'], 'ACTIVE',
                            timeout=120)
    assert not lease['status_reason'], lease
    assert lease['reservations'][0]['floatingips'] == [FREE[3]]
    made = neutron.fips(FREE[3])
    assert made[FREE[3]]['project_id'] == neutron.project_id('demo')
    print('\nACTIVE %.1f s after neutron was back' % (
        time.monotonic() - back))
    end_now(api, tokens['demo'], lease)
    assert not neutron.fips(FREE[3])
