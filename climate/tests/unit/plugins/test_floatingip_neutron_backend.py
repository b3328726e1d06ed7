"""The ``neutron`` floating IP backend and ``climate.clients.neutron``
against a small fake Neutron over HTTP.

``FakeNeutron`` keeps networks, subnets and floating IPs in memory and
answers the networking API v2.0 calls the backend makes as Neutron does
(its error bodies, 404 and 409, 201 on create, 204 on delete, a floating
IP address taken once); every request is recorded and failures are
injected per path.  The real Neutron is the integration tests' part.
"""

import http.server
import json
import threading
import urllib.parse
import uuid

from keystoneauth1 import session as ks_session
from oslo_config import cfg
import pytest

from climate.clients import keystone
from climate.clients import neutron as neutron_clients
from climate.conf import clients as clients_conf
from climate.conf import floatingips as fips_conf
from climate import exceptions
from climate.plugins.virtual_floatingip.backends import neutron as backend_mod

NET = 'net-ext'
RID = 'a1b2c3d4-0000-4000-8000-000000000001'
PROJECT = 'project-a'


class FakeNeutron(http.server.BaseHTTPRequestHandler):

    def log_message(self, *args):
        pass

    def _send(self, status, body=None):
        data = json.dumps(body).encode() if body is not None else b''
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status, kind, message):
        self._send(status, {'NeutronError': {'type': kind,
                                             'message': message,
                                             'detail': ''}})

    def _handle(self, method):
        st = self.server.state
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        length = int(self.headers.get('Content-Length') or 0)
        body = json.loads(self.rfile.read(length) or b'null')
        st['calls'].append((method, url.path, body or query or None))
        path = url.path[len(st['prefix']):]
        for failing in st['fail']:
            if path.startswith(failing):
                return self._error(500, 'HTTPInternalServerError', 'boom')
        parts = path.strip('/').split('/')
        if parts[0] == 'networks' and method == 'GET':
            net = st['networks'].get(parts[1])
            if net is None:
                return self._error(404, 'NetworkNotFound',
                                   'Network %s could not be found.'
                                   % parts[1])
            return self._send(200, {'network': net})
        if parts == ['subnets'] and method == 'GET':
            return self._send(200, {'subnets': [
                s for s in st['subnets'].values()
                if s['network_id'] == query.get('network_id')]})
        if parts == ['floatingips'] and method == 'GET':
            return self._send(200, {'floatingips': [
                f for f in st['fips'].values()
                if all(str(f.get(k)) == v for k, v in query.items()
                       if k != 'limit')]})
        if parts == ['floatingips'] and method == 'POST':
            return self._create(st, body['floatingip'])
        if parts[0] == 'floatingips' and len(parts) >= 2:
            fip = st['fips'].get(parts[1])
            if fip is None:
                return self._error(404, 'FloatingIPNotFound',
                                   'Floating IP %s could not be found'
                                   % parts[1])
            if parts[2:] == ['tags'] and method == 'PUT':
                if st.get('notags'):
                    return self._error(404, 'HTTPNotFound',
                                       'The resource could not be found.')
                fip['tags'] = list(body['tags'])
                return self._send(200, {'tags': fip['tags']})
            if len(parts) == 2 and method == 'PUT':
                fip.update(body['floatingip'])
                return self._send(200, {'floatingip': fip})
            if len(parts) == 2 and method == 'DELETE':
                del st['fips'][parts[1]]
                return self._send(204)
        return self._error(404, 'HTTPNotFound', 'no route %s %s' % (
            method, path))

    def _create(self, st, values):
        net = st['networks'].get(values['floating_network_id'])
        if net is None or not net['router:external']:
            return self._error(404, 'ExternalNetworkNotFound', 'no net')
        address = values['floating_ip_address']
        if any(f['floating_ip_address'] == address and
               f['floating_network_id'] == net['id']
               for f in st['fips'].values()):
            return self._error(409, 'IpAddressAlreadyAllocated',
                               'IP address %s already allocated in subnet'
                               % address)
        fip = {'id': str(uuid.uuid4()), 'floating_network_id': net['id'],
               'floating_ip_address': address,
               'subnet_id': values.get('subnet_id'),
               'project_id': values['project_id'],
               'tenant_id': values['project_id'],
               'description': values.get('description', ''),
               'port_id': None, 'fixed_ip_address': None, 'tags': [],
               'status': 'DOWN'}
        st['fips'][fip['id']] = fip
        return self._send(201, {'floatingip': fip})

    def do_GET(self):
        self._handle('GET')

    def do_POST(self):
        self._handle('POST')

    def do_PUT(self):
        self._handle('PUT')

    def do_DELETE(self):
        self._handle('DELETE')


@pytest.fixture
def fake():
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), FakeNeutron)
    server.state = {
        'prefix': '/v2.0', 'calls': [], 'fail': set(), 'fips': {},
        'networks': {
            NET: {'id': NET, 'router:external': True,
                  'subnets': ['sub-4', 'sub-6', 'sub-gw', 'sub-fip']},
            'net-private': {'id': 'net-private', 'router:external': False,
                            'subnets': []}},
        'subnets': {
            'sub-4': {'id': 'sub-4', 'network_id': NET, 'ip_version': 4,
                      'cidr': '172.24.4.0/24', 'gateway_ip': '172.24.4.1',
                      'allocation_pools': [{'start': '172.24.4.2',
                                            'end': '172.24.4.99'}]},
            'sub-6': {'id': 'sub-6', 'network_id': NET, 'ip_version': 6,
                      'cidr': '2001:db8::/64', 'gateway_ip': None,
                      'allocation_pools': [{'start': '2001:db8::2',
                                            'end': '2001:db8::ff'}]},
            # subnet service types: Neutron makes floating IPs only on
            # subnets without any or with network:floatingip
            'sub-gw': {'id': 'sub-gw', 'network_id': NET, 'ip_version': 4,
                       'cidr': '198.51.100.0/24', 'gateway_ip': None,
                       'allocation_pools': [],
                       'service_types': ['network:router_gateway']},
            'sub-fip': {'id': 'sub-fip', 'network_id': NET,
                        'ip_version': 4, 'cidr': '192.0.2.0/24',
                        'gateway_ip': '192.0.2.1', 'allocation_pools': [],
                        'service_types': ['network:router_gateway',
                                          'network:floatingip']}}}
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _conf(fake, suffix=''):
    conf = cfg.ConfigOpts()
    clients_conf.register_opts(conf)
    fips_conf.register_opts(conf)
    conf([], project='climate', default_config_files=[])
    conf.set_override('endpoint_override', 'http://127.0.0.1:%d%s' % (
        fake.server_address[1], suffix), group='neutron')
    conf.set_override('inventory', 'neutron', group='floatingips')
    return conf


@pytest.fixture
def backend(fake, monkeypatch):
    monkeypatch.setattr(keystone, 'service_session',
                        lambda conf=None: ks_session.Session())
    return backend_mod.NeutronFloatingIPBackend(_conf(fake))


def _fips(fake):
    return sorted((f['floating_ip_address'], f['project_id'],
                   sorted(f['tags'])) for f in fake.state['fips'].values())


# -- registration -------------------------------------------------------------

def test_an_address_outside_the_pools_gets_its_subnet(backend):
    assert backend.subnet_of(NET, '172.24.4.200') == 'sub-4'
    # a subnet whose service types include floating IPs
    assert backend.subnet_of(NET, '192.0.2.7') == 'sub-fip'


REFUSED = [
    ('no-net', '172.24.4.200', exceptions.FloatingIPNetworkNotFound,
     'Failed to find network no-net. Neutron knows no network no-net'),
    ('net-private', '172.24.4.200', exceptions.FloatingIPNetworkNotFound,
     'Failed to find network net-private. Network net-private is not '
     'external (router:external is false)'),
    (NET, '172.24.4.50', exceptions.NeutronUsesFloatingIP,
     'The floating IP 172.24.4.50 is used in allocation_pools or '
     'gateway_ip in subnet sub-4 . Neutron hands out the allocation pools '
     'and the gateway of subnet sub-4 (172.24.4.2-172.24.4.99, '
     '172.24.4.1) by itself'),
    (NET, '172.24.4.1', exceptions.NeutronUsesFloatingIP,
     'gateway_ip in subnet sub-4 .'),
    (NET, '2001:db8::2', exceptions.NeutronUsesFloatingIP,
     'gateway_ip in subnet sub-6 .'),
    (NET, '10.0.0.5', exceptions.FloatingIPSubnetNotFound,
     'Valid subnet for the floating IP 10.0.0.5 is not found. No subnet of '
     'network net-ext holds it (its subnets: 172.24.4.0/24, '
     '2001:db8::/64, 192.0.2.0/24, 198.51.100.0/24).'),
    # Neutron's floating IPs are IPv4 only (400 "does not contain any IPv4
    # subnet" / "Unable to find any IP address on external network")
    (NET, '2001:db8::1:1', exceptions.FloatingIPSubnetNotFound,
     "Valid subnet for the floating IP 2001:db8::1:1 is not found. "
     "Neutron's floating IPs are IPv4 addresses only: 2001:db8::1:1 is in "
     'the IPv6 subnet sub-6 (2001:db8::/64).'),
    # Neutron: 409 IpAddressGenerationFailureNoMatchingSubnet
    (NET, '198.51.100.7', exceptions.FloatingIPSubnetNotFound,
     'Valid subnet for the floating IP 198.51.100.7 is not found. Subnet '
     'sub-gw (198.51.100.0/24) holding it is for network:router_gateway '
     'only: Neutron makes floating IPs on subnets without service_types '
     'or with network:floatingip among them.'),
    (NET, '172.24.4.255', exceptions.FloatingIPSubnetNotFound,
     'is the network or broadcast address of subnet sub-4'),
]


@pytest.mark.parametrize('network,address,error,sentence', REFUSED)
def test_registrations_neutron_would_give_are_400s(backend, network,
                                                   address, error, sentence):
    with pytest.raises(error) as info:
        backend.subnet_of(network, address)
    assert info.value.code == 400
    assert sentence in str(info.value), str(info.value)


def test_neutron_failing_at_registration_is_a_503(backend, fake):
    fake.state['fail'].add('/subnets')
    with pytest.raises(exceptions.CloudUnavailable) as info:
        backend.subnet_of(NET, '172.24.4.200')
    assert info.value.code == 503
    assert 'Neutron is unavailable: listing the subnets of network net-ext'\
        ': HTTP 500 HTTPInternalServerError: boom' == str(info.value)


# -- start and end ------------------------------------------------------------

WANTED = [('172.24.4.200', 'sub-4'), ('172.24.4.201', 'sub-4')]
TAGS = ['climate', 'reservation:' + RID]


def test_start_makes_each_address_once_in_the_project(backend, fake):
    made = backend.start(RID, PROJECT, NET, WANTED)
    assert sorted(made) == ['172.24.4.200', '172.24.4.201']
    assert _fips(fake) == [('172.24.4.200', PROJECT, TAGS),
                           ('172.24.4.201', PROJECT, TAGS)]
    creates = [c[2] for c in fake.state['calls'] if c[0] == 'POST']
    assert creates[0] == {'floatingip': {
        'floating_network_id': NET, 'floating_ip_address': '172.24.4.200',
        'subnet_id': 'sub-4', 'project_id': PROJECT,
        'description': 'Reserved by Climate: reservation %s' % RID}}
    # a re-run finds them: nothing made twice, the same ids
    count = len(fake.state['calls'])
    assert backend.start(RID, PROJECT, NET, WANTED) == made
    assert not [c for c in fake.state['calls'][count:]
                if c[0] in ('POST', 'PUT')]


def test_a_rerun_after_a_crash_tags_what_it_made(backend, fake):
    fake.state['fail'].add('/floatingips/')   # the tags call fails
    with pytest.raises(exceptions.CloudUnavailable):
        backend.start(RID, PROJECT, NET, WANTED[:1])
    assert _fips(fake) == [('172.24.4.200', PROJECT, [])]
    fake.state['fail'].clear()
    backend.start(RID, PROJECT, NET, WANTED[:1])
    assert _fips(fake) == [('172.24.4.200', PROJECT, TAGS)]


def test_an_address_another_project_holds_fails_the_start(backend, fake):
    backend.start('other-reservation', 'project-b', NET, WANTED[:1])
    with pytest.raises(exceptions.CloudUnavailable) as info:
        backend.start(RID, PROJECT, NET, WANTED)
    assert ('address 172.24.4.200 of network net-ext is held by floating '
            'IP') in str(info.value)
    assert ('of project project-b (reservation other-reservation), not by '
            'reservation %s of project project-a: the start is retried '
            'until it is free' % RID) in str(info.value)


def test_the_previous_lease_of_the_project_is_waited_for(backend, fake):
    """Back to back in one project: the next reservation's start never
    takes (nor its end deletes) the floating IP the previous one has not
    given back yet."""
    backend.start('previous', PROJECT, NET, WANTED[:1])
    with pytest.raises(exceptions.CloudUnavailable):
        backend.start(RID, PROJECT, NET, WANTED[:1])
    backend.end(RID, PROJECT, NET, ['172.24.4.200'])
    assert _fips(fake) == [('172.24.4.200', PROJECT,
                            ['climate', 'reservation:previous'])]
    backend.end('previous', PROJECT, NET, ['172.24.4.200'])
    backend.start(RID, PROJECT, NET, WANTED[:1])
    assert _fips(fake) == [('172.24.4.200', PROJECT, TAGS)]
    # one the project made itself (no reservation named) is adopted
    fake.state['fips'].clear()
    fake.state['fips']['own'] = {
        'id': 'own', 'floating_network_id': NET, 'project_id': PROJECT,
        'floating_ip_address': '172.24.4.201', 'tags': [],
        'description': '', 'port_id': None}
    assert backend.start(RID, PROJECT, NET, WANTED[1:]) == {
        '172.24.4.201': 'own'}


def test_a_neutron_without_tags_keeps_the_description(backend, fake):
    fake.state['notags'] = True
    made = backend.start(RID, PROJECT, NET, WANTED[:1])
    assert _fips(fake) == [('172.24.4.200', PROJECT, [])]
    assert backend.start(RID, PROJECT, NET, WANTED[:1]) == made
    with pytest.raises(exceptions.CloudUnavailable):
        backend.start('other', PROJECT, NET, WANTED[:1])
    backend.end(RID, PROJECT, NET, ['172.24.4.200'])
    assert _fips(fake) == []


def test_end_disassociates_then_deletes_and_is_idempotent(backend, fake):
    backend.start(RID, PROJECT, NET, WANTED)
    attached = [f for f in fake.state['fips'].values()
                if f['floating_ip_address'] == '172.24.4.200'][0]
    attached['port_id'] = 'port-1'
    # another project's floating IP of an address is not the reservation's
    backend.start('other', 'project-b', NET, [('172.24.4.202', 'sub-4')])
    count = len(fake.state['calls'])
    backend.end(RID, PROJECT, NET, ['172.24.4.200', '172.24.4.201',
                                    '172.24.4.202'])
    writes = [(c[0], c[1], c[2]) for c in fake.state['calls'][count:]
              if c[0] in ('PUT', 'DELETE')]
    assert writes == [
        ('PUT', '/v2.0/floatingips/%s' % attached['id'],
         {'floatingip': {'port_id': None}}),
        ('DELETE', '/v2.0/floatingips/%s' % attached['id'], None),
        ('DELETE', writes[2][1], None)]
    assert _fips(fake) == [('172.24.4.202', 'project-b',
                            ['climate', 'reservation:other'])]
    backend.end(RID, PROJECT, NET, ['172.24.4.200', '172.24.4.201'])


def test_neutron_failing_at_the_end_is_a_503(backend, fake):
    backend.start(RID, PROJECT, NET, WANTED)
    fake.state['fail'].add('/floatingips/')
    with pytest.raises(exceptions.CloudUnavailable) as info:
        backend.end(RID, PROJECT, NET, ['172.24.4.200'])
    assert 'deleting floating IP' in str(info.value)


# -- the client ---------------------------------------------------------------

def test_an_endpoint_ending_with_the_version_is_taken_as_it_is(
        fake, monkeypatch):
    client = neutron_clients.NeutronClient(ks_session.Session(),
                                           _conf(fake, '/v2.0'))
    assert client.network(NET)['id'] == NET
    assert fake.state['calls'][-1][1] == '/v2.0/networks/%s' % NET


def test_no_answer_is_a_neutron_error(fake):
    conf = _conf(fake)
    conf.set_override('endpoint_override', 'http://127.0.0.1:9',
                      group='neutron')
    conf.set_override('connect_retries', 0, group='neutron')
    client = neutron_clients.NeutronClient(ks_session.Session(), conf)
    with pytest.raises(neutron_clients.NeutronError) as info:
        client.floatingips()
    assert info.value.status is None
    assert 'listing floating IPs' in str(info.value)


def test_calls_without_a_session_timeout_are_bounded(fake):
    client = neutron_clients.NeutronClient(ks_session.Session(),
                                           _conf(fake))
    assert client.timeout == neutron_clients.CALL_TIMEOUT
    bounded = neutron_clients.NeutronClient(
        ks_session.Session(timeout=5), _conf(fake))
    assert bounded.timeout is None
