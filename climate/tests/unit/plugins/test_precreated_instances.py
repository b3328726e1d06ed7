"""virtual:instance, pre-created mode (microversion 1.4), through the
in-process API on SQLite with a recording backend: the mode's fields and
sentences, booking the server's flavor, the boot/shelve before the start,
unshelve at the start, the end action, a server deleted meanwhile."""

import pytest

from climate import context
from climate.plugins.virtual_instance.backends import static
from climate.tests import fixtures
from climate.tests.unit.plugins import test_virtual_instance as base

START, END = base.START, base.END
SERVERS = {'srv-1': 'project-a', 'srv-2': 'project-b'}


class ServerBackend(base.RecordingBackend):
    """The recording backend, with servers."""

    holds_servers = True

    def __init__(self, conf):
        super().__init__(conf)
        self.deleted = set()

    def server(self, server_id):
        if server_id not in SERVERS:
            raise base.exceptions.InvalidInput(
                reason='server_id: server %s could not be found.' %
                server_id)
        return {'id': server_id, 'project_id': SERVERS[server_id],
                'status': 'ACTIVE', 'flavor': self.flavor('m1.small')}

    def boot(self, reservation, project_id, user_session):
        self.calls.append(('boot', reservation['id'], project_id,
                           reservation['server']['name']))
        return 'booted-' + reservation['id'][:8]

    def hold(self, reservation):
        self.calls.append(('hold', reservation['id'],
                           reservation['server_id']))
        if reservation['server_id'] in self.deleted:
            return {'server_status': 'DELETED',
                    'server_error': 'Server %s was deleted before the '
                                    'lease started.' %
                                    reservation['server_id']}
        return {'server_status': 'SHELVED_OFFLOADED', 'server_error': None}

    def wake(self, reservation, project_id, host, user_session):
        self.calls.append(('wake', reservation['id'],
                           reservation['server_id'],
                           host['hypervisor_hostname']))
        return {'server_status': 'ACTIVE', 'server_error': None,
                'aggregate_id': 9}

    def discard(self, reservation):
        self.calls.append(('discard', reservation['id'],
                           reservation['server_id']))

    def release(self, reservation):
        self.calls.append(('release', reservation['id'],
                           reservation['server_id'], reservation['on_end']))
        return {'server_status': 'DELETED', 'snapshot_id': None}


@pytest.fixture
def env():
    with fixtures.ClimateEnvironment() as environment:
        plugin = environment.plugin('virtual:instance')
        plugin._backend = ServerBackend(None)
        environment.backend = plugin._backend
        yield environment


def create(env, reservation, start=START, end=END, version='1.4',
           expect=201, name=None):
    create.count = getattr(create, 'count', 0) + 1
    body = {'name': name or 'pre-%d' % create.count, 'start_date': start,
            'end_date': end,
            'reservations': [dict(reservation,
                                  resource_type='virtual:instance')]}
    resp = env.request('POST', '/v1/leases', body=body, version=version)
    assert resp.status_int == expect, resp.text
    return resp.json.get('lease') or resp.json


def test_the_fields_need_microversion_1_4(env):
    base.add_hosts(env, 1)
    before = base.unchanged(env)
    for version in (None, '1.3'):
        resp = env.request('POST', '/v1/leases', body={
            'name': 'pre', 'start_date': START, 'end_date': END,
            'reservations': [{'resource_type': 'virtual:instance',
                              'server_id': 'srv-1'}]}, version=version)
        assert resp.status_int == 400, resp.text
        assert resp.json['error_message'].endswith(
            'server_id needs microversion 1.4 or later (send '
            '"OpenStack-API-Version: reservation 1.4")'), resp.text
    assert base.unchanged(env) == before


def test_an_existing_server_books_its_flavor_and_is_shelved(env):
    base.add_hosts(env, 1)
    made = create(env, {'server_id': 'srv-1'})
    res = made['reservations'][0]
    assert (res['server_id'], res['on_end'], res['amount']) == (
        'srv-1', 'delete', 1)
    assert (res['vcpus'], res['memory_mb'], res['disk_gb'],
            res['flavor_id']) == (2, 1024, 10, 'm1.small')
    # booked: one slot of the flavor (2 VCPU) on the host
    assert base.units_of(res['id']) == {'1': 2}
    # shelved right after the create
    assert env.backend.calls == [('hold', res['id'], 'srv-1')]
    found = base.get(env, made['id'])['reservations'][0]
    assert found['server_status'] == 'SHELVED_OFFLOADED'
    assert found['server_error'] is None


def test_a_boot_request_is_booted_as_the_user_then_shelved(env):
    base.add_hosts(env, 1)
    made = create(env, {'server': {'name': 'vm', 'imageRef': 'img',
                                   'flavorRef': 'm1.small',
                                   'networks': 'none'},
                        'on_end': 'snapshot'})
    res_id = made['reservations'][0]['id']
    booted = 'booted-' + res_id[:8]
    assert env.backend.calls == [('boot', res_id, 'project-a', 'vm'),
                                 ('hold', res_id, booted)]
    found = base.get(env, made['id'])['reservations'][0]
    assert found['server_id'] == booted
    assert found['server']['imageRef'] == 'img'
    assert found['on_end'] == 'snapshot'


BAD = [
    ({'server_id': 'srv-9'}, 'server srv-9 could not be found'),
    ({'server_id': 'srv-2'},
     'Server srv-2 is not a server of project project-a'),
    ({'server_id': 7}, 'Malformed parameter server_id.'),
    ({'server_id': 'srv-1', 'server': {'name': 'x'}},
     'Malformed parameter server_id. Give either server_id'),
    ({'server_id': 'srv-1', 'amount': 2}, 'Malformed parameter amount.'),
    ({'server_id': 'srv-1', 'on_end': 'keep'}, 'Malformed parameter on_end.'),
    ({'server_id': 'srv-1', 'vcpus_x': 1}, 'vcpus_x: not a parameter'),
    ({'server': 'vm'}, 'Malformed parameter server.'),
    ({'server': {'name': 'vm', 'imageRef': 'i'}},
     'server.flavorRef is required'),
    ({'server': {'name': 'vm', 'imageRef': 'i', 'flavorRef': 'm9'}},
     'flavor m9 could not be found'),
    ({'server': {'name': 'vm', 'imageRef': 'i', 'flavorRef': 'm1.small',
                 'networks': 'lots'}}, 'Malformed parameter server.networks'),
    ({'server': {'name': 'vm', 'imageRef': 'i', 'flavorRef': 'm1.small',
                 'networks': [{'net': 'x'}]}},
     'Malformed parameter server.networks'),
    ({'server': {'name': 'vm', 'imageRef': 'i', 'flavorRef': 'm1.small',
                 'host': 'h1'}}, 'server.host: not a field'),
    ({'server': {'name': '', 'imageRef': 'i', 'flavorRef': 'm1.small'}},
     'server.name is required'),
    ({'server': {'name': 'vm', 'imageRef': 'i', 'flavorRef': 'm1.small',
                 'metadata': {'a': 1}}},
     'Malformed parameter server.metadata'),
]


@pytest.mark.parametrize('params,sentence', BAD,
                         ids=[repr(p) for p, _s in BAD])
def test_bad_input_is_a_400_naming_the_field_and_writes_nothing(
        env, params, sentence):
    base.add_hosts(env, 1)
    before = base.unchanged(env)
    resp = create(env, params, expect=400)
    assert sentence in resp['error_message'], resp
    assert base.unchanged(env) == before
    assert env.backend.calls == []


def test_the_static_inventory_refuses_the_mode(env):
    base.add_hosts(env, 1)
    env.plugin('virtual:instance')._backend = static.StaticInstanceBackend(
        None)
    resp = create(env, {'server_id': 'srv-1'}, expect=400)
    assert resp['error_message'].startswith(
        'Malformed parameter server_id. Pre-created instances (server_id, '
        'server) need the nova inventory ([hosts] inventory = nova)')


def test_no_room_for_the_flavor_is_a_409(env):
    base.add_hosts(env, 1, vcpus=2)
    # the host's 2 VCPUs taken by capacity slots (two leases naming one
    # server over one window are refused for the server: see
    # test_precreated_instance_servers)
    base.lease(env, 'full', base.slots(amount=2))
    resp = create(env, {'server_id': 'srv-1'}, expect=409)
    assert 'instance(s) of vcpus=2, memory_mb=1024, disk_gb=10 fit' in \
        resp['error_message'], resp


def test_start_unshelves_onto_the_booked_host_and_end_acts(env):
    base.add_hosts(env, 2)
    made = create(env, {'server_id': 'srv-1', 'on_end': 'shelve'},
                  start='now', end=fixtures.iso(2))
    res_id = made['reservations'][0]['id']
    base.wait_status(env, made['id'], 'TERMINATED')
    kinds = [c[0] for c in env.backend.calls]
    assert kinds == ['hold', 'wake', 'release'], env.backend.calls
    assert env.backend.calls[1][3] in ('h00', 'h01')
    assert env.backend.calls[2] == ('release', res_id, 'srv-1', 'shelve')
    assert base.units_of(res_id) == {}
    found = base.get(env, made['id'])['reservations'][0]
    assert found['server_status'] == 'DELETED'


def test_a_hold_read_before_the_start_neither_shelves_nor_overwrites(env):
    """The periodic pass lists the pending reservations, then the start
    wakes the server before that pass shelves it: the pass must leave the
    woken server (and what the wake stored) alone."""
    base.add_hosts(env, 1)
    made = create(env, {'server_id': 'srv-1'}, start=fixtures.iso(3),
                  end=fixtures.iso(3600))
    plugin = env.plugin('virtual:instance')
    ctx = context.admin_context()
    pending = [(lease, res) for lease, res in
               base.db_api.pending_reservations(ctx, 'virtual:instance')]
    base.wait_status(env, made['id'], 'ACTIVE')
    assert [c[0] for c in env.backend.calls] == ['hold', 'wake']
    for lease, res in pending:
        assert plugin._hold(ctx, lease, res) is False
    assert [c[0] for c in env.backend.calls] == ['hold', 'wake']
    found = base.get(env, made['id'])['reservations'][0]
    assert found['server_status'] == 'ACTIVE'


def test_a_server_deleted_meanwhile_is_a_visible_error(env):
    base.add_hosts(env, 1)
    env.backend.deleted.add('srv-1')
    made = create(env, {'server_id': 'srv-1'})
    found = base.get(env, made['id'])
    res = found['reservations'][0]
    assert res['server_error'] == ('Server srv-1 was deleted before the '
                                   'lease started.')
    assert res['missing_resources'] is True and found['degraded'] is True
    # the periodic pass says the same, once, and does not clear the flag
    plugin = env.plugin('virtual:instance')
    assert plugin.heal(context.admin_context()) == []
    found = base.get(env, made['id'])
    assert found['reservations'][0]['missing_resources'] is True


def test_updates_keep_the_server(env):
    base.add_hosts(env, 1)
    made = create(env, {'server_id': 'srv-1'})
    res = made['reservations'][0]
    before = base.unchanged(env)
    for change, status, sentence in (
            ({'server_id': 'srv-2'}, 409, 'server_id cannot be updated.'),
            ({'amount': 3}, 409, 'amount cannot be updated.'),
            ({'vcpus': 1}, 409, 'vcpus cannot be updated.'),
            ({'on_end': 'later'}, 400, 'Malformed parameter on_end.')):
        resp = env.request('PUT', '/v1/leases/' + made['id'], body={
            'reservations': [dict(change, id=res['id'])]}, version='1.4')
        assert resp.status_int == status, resp.text
        assert sentence in resp.json['error_message'], resp.text
    assert base.unchanged(env) == before
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'end_date': '2090-01-01 05:00',
        'reservations': [{'id': res['id'], 'on_end': 'snapshot',
                          'server_id': 'srv-1'}]}, version='1.4')
    assert resp.status_int == 200, resp.text
    res = resp.json['lease']['reservations'][0]
    assert res['on_end'] == 'snapshot' and res['server_id'] == 'srv-1'
    assert base.units_of(res['id']) == {'1': 2}


def test_delete_before_the_start_removes_only_a_server_climate_booted(env):
    base.add_hosts(env, 1)
    own = create(env, {'server_id': 'srv-1'})
    env.request('DELETE', '/v1/leases/' + own['id'])
    assert [c[0] for c in env.backend.calls] == ['hold']
    booted = create(env, {'server': {'name': 'vm', 'imageRef': 'i',
                                     'flavorRef': 'm1.small'}})
    env.request('DELETE', '/v1/leases/' + booted['id'])
    assert [c[0] for c in env.backend.calls] == ['hold', 'boot', 'hold',
                                                 'discard']
    assert base.bookings() == []
