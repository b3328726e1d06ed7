"""climate.clients.placement against a small fake Placement over HTTP.

The fake keeps providers, generations, inventories, aggregates, classes and
allocations in memory and answers as Placement 1.26 does (error bodies with
codes, 409 on a stale generation); it records the microversion header of
every request.  The real Placement runs in
``climate/tests/integration/test_instance_reservations.py``.
"""

import http.server
import json
import re
import threading
import uuid

import pytest
from keystoneauth1 import session as ks_session
from oslo_config import cfg

from climate.clients import placement
from climate.conf import clients as clients_conf


class FakePlacement(http.server.BaseHTTPRequestHandler):
    state = None  # set per server

    def log_message(self, *args):
        pass

    def _send(self, status, body=None):
        data = json.dumps(body).encode() if body is not None else b''
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status, detail, code='placement.undefined_code'):
        self._send(status, {'errors': [{'status': status, 'code': code,
                                        'title': 'x', 'detail': detail}]})

    def _body(self):
        length = int(self.headers.get('Content-Length') or 0)
        return json.loads(self.rfile.read(length) or b'null')

    def _handle(self, method):
        st = self.server.state
        st['versions'].append(self.headers.get('OpenStack-API-Version'))
        path, _sep, query = self.path.partition('?')
        params = dict(p.split('=', 1) for p in query.split('&') if p)
        body = self._body() if method in ('POST', 'PUT') else None
        rps = st['rps']
        if path == '/resource_providers' and method == 'GET':
            found = [r for r in rps.values()
                     if ('name' not in params or r['name'] == params['name'])
                     and ('member_of' not in params or
                          params['member_of'] in r['aggregates'])]
            return self._send(200, {'resource_providers': [
                _view(r) for r in found]})
        if path == '/resource_providers' and method == 'POST':
            if any(r['name'] == body['name'] for r in rps.values()):
                return self._error(409, 'name taken',
                                   'placement.duplicate_name')
            rp = {'uuid': str(uuid.uuid4()), 'name': body['name'],
                  'parent_provider_uuid': body.get('parent_provider_uuid'),
                  'generation': 0, 'inventories': {}, 'aggregates': []}
            rps[rp['uuid']] = rp
            return self._send(200, _view(rp))
        m = re.match(r'^/resource_providers/([^/]+)(/[a-z]+)?(/[A-Z_0-9]+)?$',
                     path)
        if m:
            rp = rps.get(m.group(1))
            if rp is None:
                return self._error(404, 'No resource provider')
            sub, rc = m.group(2), (m.group(3) or '/')[1:] or None
            if sub is None and method == 'GET':
                return self._send(200, _view(rp))
            if sub is None and method == 'DELETE':
                del rps[rp['uuid']]
                return self._send(204)
            if sub == '/allocations':
                return self._send(200, {'allocations': st['allocs'].get(
                    rp['uuid'], {})})
            if sub == '/usages':
                usages = {rc: 0 for rc in rp['inventories']}
                for alloc in st['allocs'].get(rp['uuid'], {}).values():
                    for rc, amount in alloc['resources'].items():
                        usages[rc] = usages.get(rc, 0) + amount
                return self._send(200, {
                    'resource_provider_generation': rp['generation'],
                    'usages': usages})
            gen_body = body.get('resource_provider_generation') \
                if isinstance(body, dict) else None
            if method in ('PUT', 'POST') and st['bump'] > 0:
                # a concurrent writer got there first
                st['bump'] -= 1
                rp['generation'] += 1
            if method in ('PUT', 'POST') and gen_body != rp['generation']:
                return self._error(409, 'generation conflict',
                                   'placement.concurrent_update')
            if sub == '/inventories':
                if method == 'GET' and rc is None:
                    return self._send(200, {
                        'resource_provider_generation': rp['generation'],
                        'inventories': rp['inventories']})
                if method == 'POST':
                    inv = {k: v for k, v in body.items()
                           if k not in ('resource_class',
                                        'resource_provider_generation')}
                    rp['inventories'][body['resource_class']] = inv
                    rp['generation'] += 1
                    return self._send(201, inv)
                if method == 'PUT':
                    if rc not in rp['inventories']:
                        return self._error(400, 'No inventory of class')
                    inv = {k: v for k, v in body.items()
                           if k != 'resource_provider_generation'}
                    rp['inventories'][rc] = inv
                    rp['generation'] += 1
                    return self._send(200, dict(
                        inv, resource_provider_generation=rp['generation']))
                if method == 'DELETE':
                    if rc not in rp['inventories']:
                        return self._error(404, 'no inventory')
                    if st['allocs'].get(rp['uuid']):
                        return self._error(
                            409, "Inventory for '%s' on resource provider "
                            "'%s' in use." % (rc, rp['uuid']),
                            'placement.concurrent_update')
                    del rp['inventories'][rc]
                    rp['generation'] += 1
                    return self._send(204)
            if sub == '/aggregates':
                if method == 'PUT':
                    rp['aggregates'] = body['aggregates']
                    rp['generation'] += 1
                return self._send(200, {
                    'resource_provider_generation': rp['generation'],
                    'aggregates': rp['aggregates']})
        m = re.match(r'^/resource_classes/([A-Z_0-9]+)$', path)
        if m:
            name = m.group(1)
            if method == 'PUT':
                fresh = name not in st['classes']
                st['classes'].add(name)
                return self._send(201 if fresh else 204)
            if name not in st['classes']:
                return self._error(404, 'no class')
            if method == 'DELETE':
                if any(name in r['inventories'] for r in rps.values()):
                    return self._error(409, 'Class is in use in inventory.')
                st['classes'].discard(name)
                return self._send(204)
            return self._send(200, {'name': name})
        return self._error(404, 'no route')

    def do_GET(self):
        self._handle('GET')

    def do_POST(self):
        self._handle('POST')

    def do_PUT(self):
        self._handle('PUT')

    def do_DELETE(self):
        self._handle('DELETE')


def _view(rp):
    return {k: rp[k] for k in ('uuid', 'name', 'generation',
                               'parent_provider_uuid')}


@pytest.fixture
def fake():
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), FakePlacement)
    server.state = {'rps': {}, 'classes': set(), 'allocs': {},
                    'versions': [], 'bump': 0}
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def client(fake, monkeypatch):
    monkeypatch.setattr(placement, 'RETRY_PAUSE', 0.001)
    conf = cfg.ConfigOpts()
    clients_conf.register_opts(conf)
    conf([], project='climate', default_config_files=[])
    conf.set_override('endpoint_override', 'http://127.0.0.1:%d' %
                      fake.server_address[1], group='placement')
    return placement.client(ks_session.Session(), conf)


def _root(fake, name='compute1'):
    rp = {'uuid': str(uuid.uuid4()), 'name': name,
          'parent_provider_uuid': None, 'generation': 3,
          'inventories': {'VCPU': {'total': 8}}, 'aggregates': []}
    fake.state['rps'][rp['uuid']] = rp
    return rp


def test_every_call_sends_the_microversion(client, fake):
    _root(fake)
    assert client.provider_by_name('compute1')['name'] == 'compute1'
    assert client.provider_by_name('nope') is None
    client.ensure_resource_class('CUSTOM_X')
    assert set(fake.state['versions']) == {'placement 1.26'}


def test_child_created_once_and_found_again(client, fake):
    root = _root(fake)
    child = client.ensure_child(root['uuid'], 'climate-compute1')
    assert child['parent_provider_uuid'] == root['uuid']
    assert client.ensure_child(root['uuid'], 'climate-compute1')['uuid'] == \
        child['uuid']
    other = _root(fake, 'compute2')
    with pytest.raises(placement.Conflict):
        # the name is taken under another parent: not silently reused
        client.ensure_child(other['uuid'], 'climate-compute1')


def test_set_inventory_creates_updates_and_skips_equal(client, fake):
    root = _root(fake)
    inv = client.set_inventory(root['uuid'], 'CUSTOM_X', total=2)
    assert inv['total'] == 2 and inv['max_unit'] == 2
    generation = fake.state['rps'][root['uuid']]['generation']
    client.set_inventory(root['uuid'], 'CUSTOM_X', total=2)  # no write
    assert fake.state['rps'][root['uuid']]['generation'] == generation
    client.set_inventory(root['uuid'], 'CUSTOM_X', total=3, reserved=3)
    have = client.inventories(root['uuid'])[1]
    assert have['CUSTOM_X']['reserved'] == 3
    assert have['VCPU'] == {'total': 8}  # other classes untouched


def test_generation_conflicts_are_retried_then_given_up(client, fake):
    root = _root(fake)
    fake.state['bump'] = 3
    client.set_inventory(root['uuid'], 'CUSTOM_X', total=1)
    assert client.inventories(root['uuid'])[1]['CUSTOM_X']['total'] == 1
    fake.state['bump'] = 100
    with pytest.raises(placement.GenerationConflict) as err:
        client.set_inventory(root['uuid'], 'CUSTOM_X', total=5)
    assert err.value.status == 409
    assert client.inventories(root['uuid'])[1]['CUSTOM_X']['total'] == 1


def test_inventory_in_use_is_a_conflict_not_a_retry(client, fake):
    root = _root(fake)
    client.set_inventory(root['uuid'], 'CUSTOM_X', total=1)
    fake.state['allocs'][root['uuid']] = {
        'c1': {'resources': {'CUSTOM_X': 1}}}
    before = len(fake.state['versions'])
    with pytest.raises(placement.Conflict) as err:
        client.remove_inventory(root['uuid'], 'CUSTOM_X')
    assert not isinstance(err.value, placement.GenerationConflict)
    assert err.value.code == placement.INVENTORY_IN_USE
    assert len(fake.state['versions']) - before == 2  # read + one delete
    fake.state['allocs'].clear()
    client.remove_inventory(root['uuid'], 'CUSTOM_X')
    client.remove_inventory(root['uuid'], 'CUSTOM_X')  # gone already: fine
    client.remove_inventory(str(uuid.uuid4()), 'CUSTOM_X')  # no provider
    assert 'CUSTOM_X' not in client.inventories(root['uuid'])[1]


def test_usages_sum_the_allocations(client, fake):
    root = _root(fake)
    assert client.usages(root['uuid']) == {'VCPU': 0}
    fake.state['allocs'][root['uuid']] = {
        'c1': {'resources': {'VCPU': 2}}, 'c2': {'resources': {'VCPU': 1}}}
    assert client.usages(root['uuid']) == {'VCPU': 3}
    with pytest.raises(placement.NotFound):
        client.usages(str(uuid.uuid4()))


def test_aggregates_and_classes(client, fake):
    root = _root(fake)
    agg = str(uuid.uuid4())
    client.add_to_aggregate(root['uuid'], agg)
    client.add_to_aggregate(root['uuid'], agg)
    assert [r['uuid'] for r in client.providers(member_of=agg)] == [
        root['uuid']]
    client.remove_from_aggregate(root['uuid'], agg)
    client.remove_from_aggregate(root['uuid'], agg)
    assert client.providers(member_of=agg) == []

    client.ensure_resource_class('CUSTOM_X')
    client.ensure_resource_class('CUSTOM_X')
    client.set_inventory(root['uuid'], 'CUSTOM_X', total=1)
    with pytest.raises(placement.Conflict):
        client.delete_resource_class('CUSTOM_X')
    client.remove_inventory(root['uuid'], 'CUSTOM_X')
    client.delete_resource_class('CUSTOM_X')
    client.delete_resource_class('CUSTOM_X')
    assert not client.resource_class_exists('CUSTOM_X')


def test_no_answer_is_a_placement_error(fake, client):
    client.api.endpoint_override = 'http://127.0.0.1:9'
    client.api.connect_retries = 0
    with pytest.raises(placement.PlacementError) as err:
        client.provider_by_name('compute1')
    assert err.value.status is None
    assert 'listing resource providers' in str(err.value)


def test_nova_inventory_capacity_comes_from_placement(fake, monkeypatch):
    """The nova host inventory's capacity(): the compute node provider's
    VCPU/MEMORY_MB/DISK_GB inventories, other classes left out."""
    from climate.clients import keystone
    from climate.conf import hosts as hosts_conf
    from climate import exceptions
    from climate.plugins.physical_host.backends import nova as host_nova
    conf = cfg.ConfigOpts()
    clients_conf.register_opts(conf)
    hosts_conf.register_opts(conf)
    conf([], project='climate', default_config_files=[])
    conf.set_override('endpoint_override', 'http://127.0.0.1:%d' %
                      fake.server_address[1], group='placement')
    monkeypatch.setattr(keystone, 'service_session',
                        lambda conf=None: ks_session.Session())
    root = _root(fake)
    full = {'total': 32, 'reserved': 2, 'min_unit': 1, 'max_unit': 16,
            'step_size': 1, 'allocation_ratio': 4.0}
    root['inventories'] = {
        'VCPU': full,
        'MEMORY_MB': dict(full, total=1024, allocation_ratio=1.5),
        'CUSTOM_GPU': dict(full, total=1)}
    backend = host_nova.NovaBackend(conf)
    assert backend.capacity({'hypervisor_hostname': 'compute1'}) == {
        'VCPU': full, 'MEMORY_MB': dict(full, total=1024,
                                        allocation_ratio=1.5)}
    with pytest.raises(exceptions.CloudUnavailable) as err:
        backend.capacity({'hypervisor_hostname': 'compute9'})
    assert 'compute9' in str(err.value) and err.value.code == 503
