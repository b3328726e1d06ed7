"""The ``ironic`` power backend against a recording fake of the Bare Metal
API.

The backend runs on a real keystoneauth Session and Adapter; only the
HTTP transport under them is :class:`FakeBareMetal`, which answers as
Ironic's API reference documents: ``GET /v1/nodes/{node_ident}`` (UUID or
name; 404 for an unknown node), ``PUT /v1/nodes/{node_ident}/states/power``
answered 202 with no body, 409 ``NodeLocked`` while a conductor holds the
node, 503 ``NoFreeConductorWorkers``; errors carry Ironic's body, a
``faultstring`` inside the JSON string ``error_message``.  A power change
lands after a number of reads (the conductor's asynchronous work), with
``target_power_state`` set meanwhile.  A real Ironic (fake-hardware) is
still to come in the integration tests.
"""

import io
import json
import urllib.parse

import pytest
import requests
import urllib3
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
from oslo_config import cfg

from climate.conf import power_backends as power_conf
from climate import exceptions
from climate.plugins.physical_host.power import base
from climate.plugins.physical_host.power import ironic

ENDPOINT = 'http://baremetal.test:6385'
NODE_A = '1be26c0b-03f2-4d2e-ae87-c02d7f33c123'
NODE_B = '2be26c0b-03f2-4d2e-ae87-c02d7f33c456'


def fault_body(text):
    return {'error_message': json.dumps(
        {'faultstring': text, 'faultcode': 'Client', 'debuginfo': None})}


class FakeBareMetal(requests.adapters.BaseAdapter):
    """What the Bare Metal API answers, and every request it got."""

    def __init__(self):
        super().__init__()
        self.nodes = {}
        self.requests = []
        self.settle_after = 2  # reads before a power change lands
        self.pending = {}
        self.fail = {}  # method -> [(status, faultstring)] answered first
        self.down = False

    def add(self, uuid, name, power):
        self.nodes[uuid] = {'uuid': uuid, 'name': name,
                            'power_state': power, 'target_power_state': None,
                            'reservation': None, 'last_error': None,
                            'provision_state': 'available'}

    def _find(self, ident):
        for node in self.nodes.values():
            if ident in (node['uuid'], node['name']):
                return node
        return None

    def send(self, request, **kwargs):
        if self.down:
            raise requests.ConnectionError('connection refused')
        url = urllib.parse.urlsplit(request.url)
        body = json.loads(request.body) if request.body else None
        self.requests.append((request.method, url.path, url.query,
                              dict(request.headers), body))
        if self.fail.get(request.method):
            status, text = self.fail[request.method].pop(0)
            return self._answer(request, status, fault_body(text))
        parts = url.path.strip('/').split('/')
        node = self._find(parts[2]) if len(parts) >= 3 else None
        if node is None:
            return self._answer(request, 404, fault_body(
                'Node %s could not be found.' % parts[-1]))
        if request.method == 'GET' and len(parts) == 3:
            self._progress(node)
            fields = urllib.parse.parse_qs(url.query).get('fields')
            shown = {k: v for k, v in node.items()
                     if not fields or k in fields[0].split(',')}
            return self._answer(request, 200, shown)
        if request.method == 'PUT' and parts[3:] == ['states', 'power']:
            if node['reservation']:
                return self._answer(request, 409, fault_body(
                    'Node %s is locked by host %s, please retry after the '
                    'current operation is completed.' % (
                        node['uuid'], node['reservation'])))
            if body.get('target') not in ('power on', 'power off',
                                          'rebooting'):
                return self._answer(request, 400, fault_body(
                    'The requested action "%s" can not be performed on '
                    'node "%s" while it is in state "%s".' % (
                        body.get('target'), node['uuid'],
                        node['provision_state'])))
            node['target_power_state'] = body['target']
            self.pending[node['uuid']] = self.settle_after
            return self._answer(request, 202, None)
        return self._answer(request, 405, fault_body('Not allowed.'))

    def _progress(self, node):
        left = self.pending.get(node['uuid'])
        if left is None:
            return
        if left > 0:
            self.pending[node['uuid']] = left - 1
            return
        del self.pending[node['uuid']]
        node['power_state'] = node['target_power_state']
        node['target_power_state'] = None

    def _answer(self, request, status, payload):
        data = b'' if payload is None else json.dumps(payload).encode()
        raw = urllib3.HTTPResponse(
            body=io.BytesIO(data), status=status, preload_content=False,
            headers={'Content-Type': 'application/json',
                     'Content-Length': str(len(data)),
                     'X-OpenStack-Ironic-API-Version': '1.46'})
        return requests.adapters.HTTPAdapter().build_response(request, raw)

    def close(self):
        pass

    def puts(self):
        return [(path, body) for method, path, _q, _h, body in self.requests
                if method == 'PUT']


@pytest.fixture
def cloud():
    fake = FakeBareMetal()
    fake.add(NODE_A, 'host-a', 'power on')
    fake.add(NODE_B, 'host-b', 'power off')
    return fake


@pytest.fixture
def make(cloud):
    def make_backend(**overrides):
        conf = cfg.ConfigOpts()
        power_conf.register_opts(conf)
        conf([], default_config_files=[])
        settings = {'backend': 'ironic', 'action_timeout': 5,
                    'ironic_endpoint_override': ENDPOINT}
        settings.update(overrides)
        for key, value in settings.items():
            conf.set_override(key, value, group='power')
        transport = requests.Session()
        transport.mount('http://', cloud)
        sess = ks_session.Session(
            auth=token_endpoint.Token(ENDPOINT, 'service-token'),
            session=transport)
        backend = ironic.IronicPowerBackend(conf, session=sess)
        backend.poll_interval = 0.01
        return backend
    return make_backend


def host(name, **facts):
    return dict(hypervisor_hostname=name, service_name=name, **facts)


def test_state_reads_the_node_with_the_microversion(cloud, make):
    backend = make()
    assert backend.state(host('host-a')) == base.PowerState('on', None)
    assert backend.state(host('x', ironic_node=NODE_B)) == \
        base.PowerState('off', None)
    method, path, query, headers, _body = cloud.requests[0]
    assert (method, path) == ('GET', '/v1/nodes/host-a')
    assert 'power_state' in urllib.parse.parse_qs(query)['fields'][0]
    assert headers['X-OpenStack-Ironic-API-Version'] == '1.46'
    assert headers['OpenStack-API-Version'] == 'baremetal 1.46'
    assert headers['X-Auth-Token'] == 'service-token'


def test_the_configured_microversion_is_sent(cloud, make):
    make(ironic_api_version='1.80').state(host('host-a'))
    assert cloud.requests[0][3]['X-OpenStack-Ironic-API-Version'] == '1.80'


def test_nova_ironic_hypervisor_names_are_node_uuids(cloud, make):
    # nova-compute's ironic driver names each hypervisor after its node
    assert make().state(host(NODE_A)) == base.PowerState('on', None)


def test_power_off_asks_once_and_waits_for_the_conductor(cloud, make):
    backend = make()
    assert backend.power_off(host('host-a')) == base.PowerState('off', None)
    assert cloud.puts() == [('/v1/nodes/host-a/states/power',
                             {'target': 'power off'})]
    assert backend.power_off(host('host-a')) == base.PowerState('off', None)
    assert len(cloud.puts()) == 1


def test_power_on_of_a_node_powering_on_asks_nothing(cloud, make):
    cloud.nodes[NODE_B]['target_power_state'] = 'power on'
    cloud.pending[NODE_B] = 1
    backend = make()
    assert backend.state(host('host-b')) == base.PowerState('off', 'on')
    assert backend.power_on(host('host-b')) == base.PowerState('on', None)
    assert cloud.puts() == []


def test_a_locked_node_is_cloud_unavailable_with_ironics_words(cloud,
                                                               make):
    cloud.nodes[NODE_A]['reservation'] = 'conductor-1'
    with pytest.raises(exceptions.CloudUnavailable) as caught:
        make().power_off(host('host-a'))
    message = str(caught.value)
    assert message.startswith('Ironic is unavailable')
    assert 'HTTP 409' in message and 'locked by host conductor-1' in message
    assert cloud.nodes[NODE_A]['power_state'] == 'power on'


def test_an_unknown_node_is_cloud_unavailable(cloud, make):
    with pytest.raises(exceptions.CloudUnavailable) as caught:
        make().power_on(host('nowhere'))
    assert 'Node nowhere could not be found' in str(caught.value)


def test_no_free_conductor_is_cloud_unavailable(cloud, make):
    cloud.fail['GET'] = [(503, 'Requested action cannot be performed due to '
                             'lack of free conductor workers.')]
    with pytest.raises(exceptions.CloudUnavailable) as caught:
        make().state(host('host-a'))
    assert 'HTTP 503' in str(caught.value)
    # the next try gets through
    assert make().state(host('host-a')).power == 'on'


def test_a_refused_transition_is_cloud_unavailable(cloud, make):
    cloud.fail['PUT'] = [(400, 'The requested action "power on" can not be '
                               'performed on node "%s" while it is in state '
                               '"deploying".' % NODE_B)]
    with pytest.raises(exceptions.CloudUnavailable) as caught:
        make().power_on(host('host-b'))
    assert 'HTTP 400' in str(caught.value)
    assert 'can not be performed' in str(caught.value)
    assert cloud.nodes[NODE_B]['power_state'] == 'power off'


def test_an_unreachable_ironic_is_cloud_unavailable(cloud, make):
    cloud.down = True
    backend = make()
    for action in (backend.state, backend.power_on, backend.power_off):
        with pytest.raises(exceptions.CloudUnavailable) as caught:
            action(host('host-a'))
        assert 'Ironic' in str(caught.value)


def test_a_node_ironic_cannot_read_is_unknown(cloud, make):
    cloud.nodes[NODE_A]['power_state'] = None
    assert make().state(host('host-a')) == base.PowerState('unknown', None)


def test_a_transition_that_does_not_land_times_out(cloud, make):
    cloud.settle_after = 10 ** 6
    backend = make(action_timeout=1)
    with pytest.raises(base.TransitionTimeout) as caught:
        backend.power_off(host('host-a'))
    assert 'heading off' in str(caught.value)
    # a retry sees the transition under way and asks nothing more
    cloud.settle_after = 0
    cloud.pending[NODE_A] = 0
    assert backend.power_off(host('host-a')).power == 'off'
    assert len(cloud.puts()) == 1


def test_no_power_readings(cloud, make):
    assert make().power_watts(host('host-a')) is None
