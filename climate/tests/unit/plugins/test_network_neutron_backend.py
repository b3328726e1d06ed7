"""The ``neutron`` network backend against a small fake Neutron over
HTTP (the plumbing of the floating IP backend's fake): networks with
provider attributes and tags, subnets, ports, router interfaces; 409s
for what is in use; failures injected per path.  The real Neutron is the
integration tests' part."""

import http.server
import threading
import urllib.parse
import uuid

from keystoneauth1 import session as ks_session
from oslo_config import cfg
import pytest

from climate.clients import keystone
from climate.conf import clients as clients_conf
from climate.conf import networks as networks_conf
from climate import exceptions
from climate.plugins.network.backends import neutron as backend_mod
from climate.tests.unit.plugins import test_floatingip_neutron_backend as fipt

RID = 'a1b2c3d4-0000-4000-8000-000000000002'
PROJECT = 'project-a'
VLAN = {'network_type': 'vlan', 'physical_network': 'physnet1',
        'segment_id': 1001}


class FakeNetworkNeutron(fipt.FakeNeutron):

    def _handle(self, method):
        st = self.server.state
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        length = int(self.headers.get('Content-Length') or 0)
        body = fipt.json.loads(self.rfile.read(length) or b'null')
        st['calls'].append((method, url.path, body or query or None))
        path = url.path[len(st['prefix']):]
        for failing in st['fail']:
            if path.startswith(failing) and method in st['fail_methods']:
                return self._error(500, 'HTTPInternalServerError', 'boom')
        parts = path.strip('/').split('/')
        coll = {'networks': st['networks'], 'subnets': st['subnets'],
                'ports': st['ports']}.get(parts[0])
        if coll is not None and len(parts) == 1 and method == 'GET':
            return self._send(200, {parts[0]: [
                x for x in coll.values()
                if all(str(x.get(k)) == v for k, v in query.items()
                       if k != 'limit')]})
        if parts == ['networks'] and method == 'POST':
            net = dict(body['network'], id=str(uuid.uuid4()), tags=[],
                       subnets=[])
            st['networks'][net['id']] = net
            return self._send(201, {'network': net})
        if parts[0] == 'networks' and parts[2:] == ['tags']:
            st['networks'][parts[1]]['tags'] = list(body['tags'])
            return self._send(200, body)
        if parts[0] == 'routers' and parts[2:] == [
                'remove_router_interface']:
            port = st['ports'].pop(body['port_id'], None)
            if port is None:
                return self._error(404, 'PortNotFound', 'no port')
            return self._send(200, {'id': parts[1]})
        if coll is not None and len(parts) == 2 and method == 'DELETE':
            if parts[1] not in coll:
                return self._error(404, 'NotFound', 'gone')
            if parts[1] in st['in_use']:
                return self._error(409, 'InUse', '%s is in use' % parts[1])
            if parts[0] == 'subnets' and any(
                    any(ip.get('subnet_id') == parts[1]
                        for ip in p.get('fixed_ips', []))
                    for p in st['ports'].values()
                    if not p['device_owner'].startswith('network:dhcp')):
                return self._error(409, 'SubnetInUse', 'ports left')
            if parts[0] == 'networks' and any(
                    p['network_id'] == parts[1]
                    and not p['device_owner'].startswith('network:dhcp')
                    for p in st['ports'].values()):
                return self._error(409, 'NetworkInUse', 'ports left')
            del coll[parts[1]]
            return self._send(204)
        return self._error(404, 'HTTPNotFound', 'no route %s %s' % (
            method, path))


@pytest.fixture
def fake():
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0),
                                             FakeNetworkNeutron)
    server.state = {'prefix': '/v2.0', 'calls': [], 'fail': set(),
                    'fail_methods': {'GET', 'POST', 'PUT', 'DELETE'},
                    'networks': {}, 'subnets': {}, 'ports': {},
                    'in_use': set()}
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def backend(fake, monkeypatch):
    monkeypatch.setattr(keystone, 'service_session',
                        lambda conf=None: ks_session.Session())
    conf = cfg.ConfigOpts()
    clients_conf.register_opts(conf)
    networks_conf.register_opts(conf)
    conf([], project='climate', default_config_files=[])
    conf.set_override('endpoint_override', 'http://127.0.0.1:%d' %
                      fake.server_address[1], group='neutron')
    return backend_mod.NeutronNetworkBackend(conf)


def _network(fake, net_id):
    return fake.state['networks'][net_id]


def test_start_makes_a_provider_network_once(backend, fake):
    net_id = backend.start(RID, PROJECT, VLAN, 'my-net', 'lab')
    net = _network(fake, net_id)
    assert net['provider:network_type'] == 'vlan'
    assert net['provider:physical_network'] == 'physnet1'
    assert net['provider:segmentation_id'] == 1001
    assert net['project_id'] == PROJECT and net['name'] == 'my-net'
    assert net['description'] == 'lab'
    assert sorted(net['tags']) == ['climate', 'reservation:' + RID]
    # a re-run keeps it
    assert backend.start(RID, PROJECT, VLAN, 'my-net', 'lab') == net_id
    assert len(fake.state['networks']) == 1


def test_a_crash_before_tagging_is_found_again(backend, fake):
    net_id = backend.start(RID, PROJECT, VLAN, 'my-net')
    _network(fake, net_id)['tags'] = []
    _network(fake, net_id)['description'] = 'mine'
    assert backend.start(RID, PROJECT, VLAN, 'my-net') == net_id
    assert 'reservation:' + RID in _network(fake, net_id)['tags']


def test_vxlan_and_flat_attributes(backend, fake):
    vx = _network(fake, backend.start(RID, PROJECT, {
        'network_type': 'vxlan', 'physical_network': None,
        'segment_id': 5000}, 'vx'))
    assert 'provider:physical_network' not in vx
    assert vx['provider:segmentation_id'] == 5000
    flat = _network(fake, backend.start('other', PROJECT, {
        'network_type': 'flat', 'physical_network': 'physnet2',
        'segment_id': 0}, 'flat'))
    assert 'provider:segmentation_id' not in flat


def test_a_segment_used_by_someone_else_fails_the_start(backend, fake):
    backend.start('someone-else', 'project-b', VLAN, 'theirs')
    with pytest.raises(exceptions.CloudUnavailable) as err:
        backend.start(RID, PROJECT, VLAN, 'mine')
    assert 'project-b' in str(err.value) and 'someone-else' in str(
        err.value)


def test_neutron_failing_is_cloud_unavailable(backend, fake):
    fake.state['fail'].add('/networks')
    with pytest.raises(exceptions.CloudUnavailable):
        backend.start(RID, PROJECT, VLAN, 'my-net')


def _ports(fake, net_id):
    st = fake.state
    st['subnets']['sub1'] = {'id': 'sub1', 'network_id': net_id}
    for port_id, owner, device in (
            ('dhcp', 'network:dhcp', 'dhcp-agent'),
            ('rif', 'network:router_interface', 'router1'),
            ('vm', 'compute:nova', 'server1'),
            ('loose', '', '')):
        st['ports'][port_id] = {
            'id': port_id, 'network_id': net_id, 'device_owner': owner,
            'device_id': device,
            'fixed_ips': [{'subnet_id': 'sub1', 'ip_address': '10.0.0.2'}]}


def test_end_removes_interfaces_ports_subnets_then_the_network(
        backend, fake):
    net_id = backend.start(RID, PROJECT, VLAN, 'my-net')
    _ports(fake, net_id)
    assert backend.end(RID, PROJECT, VLAN, net_id) == []
    st = fake.state
    assert st['networks'] == {} and st['subnets'] == {}
    assert set(st['ports']) == {'dhcp'}   # Neutron's own, with the net
    paths = [(m, p) for m, p, _b in st['calls'] if m != 'GET']
    assert ('PUT', '/v2.0/routers/router1/remove_router_interface') in paths
    assert paths.index(('DELETE', '/v2.0/ports/vm')) < paths.index(
        ('DELETE', '/v2.0/subnets/sub1')) < paths.index(
        ('DELETE', '/v2.0/networks/' + net_id))
    # again: nothing left, nothing to say
    assert backend.end(RID, PROJECT, VLAN, net_id) == []
    assert backend.end(RID, PROJECT, VLAN) == []


def test_what_neutron_refuses_is_reported_not_hidden(backend, fake):
    net_id = backend.start(RID, PROJECT, VLAN, 'my-net')
    _ports(fake, net_id)
    fake.state['in_use'].add('vm')
    errors = backend.end(RID, PROJECT, VLAN)   # found by its tag
    assert len(errors) == 3, errors
    assert errors[0].startswith('port vm (compute:nova): ')
    assert 'in use' in errors[0]
    assert errors[1].startswith('subnet sub1: ')
    assert errors[2].startswith('network %s: ' % net_id)
    assert 'loose' not in fake.state['ports']


def test_end_on_a_failing_neutron_is_retried(backend, fake):
    net_id = backend.start(RID, PROJECT, VLAN, 'my-net')
    fake.state['fail'].add('/ports')
    with pytest.raises(exceptions.CloudUnavailable):
        backend.end(RID, PROJECT, VLAN, net_id)
    assert net_id in fake.state['networks']
