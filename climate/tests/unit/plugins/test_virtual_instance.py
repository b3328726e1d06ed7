"""virtual:instance through the in-process API, on the ledger (SQLite):
Blazar's validation and sentences, booking, updates, start/end on the
backend, healing, mixed host and instance reservations, availability."""

import collections
import datetime
import time

import pytest

from climate import context
from climate.db import api as db_api
from climate.db import hosts as db_hosts
from climate.db.ledger import availability
from climate.db.ledger import booking
from climate.db.ledger import inventory as ledger_inventory
from climate.db import models
from climate import exceptions
from climate.plugins.virtual_instance.backends import static
from climate.tests import fixtures

START, END = '2090-01-01 00:00', '2090-01-01 02:00'


class RecordingBackend(static.StaticInstanceBackend):
    """The static backend, recording calls, with one known flavor."""

    acts_in_cloud = True

    def __init__(self, conf):
        super().__init__(conf)
        self.calls = []

    def flavor(self, flavor_id):
        if flavor_id != 'm1.small':
            raise exceptions.InvalidInput(
                reason='flavor %s could not be found' % flavor_id)
        return {'id': 'm1.small', 'vcpus': 2, 'memory_mb': 1024,
                'disk_gb': 10, 'resources': {},
                'traits': {'required': ['HW_CPU_X86_AVX2'],
                           'forbidden': []}}

    def _answer(self, reservation):
        return {'flavor_id': reservation['id'],
                'server_group_id': 'group-' + reservation['id'][:8],
                'aggregate_id': 7}

    def prepare(self, reservation, project_id, user_session):
        self.calls.append(('prepare', reservation['id'], project_id))
        return self._answer(reservation)

    def start(self, reservation, project_id, hosts, user_session):
        self.calls.append(('start', reservation['id'], project_id,
                           [(h['hypervisor_hostname'], n) for h, n in hosts],
                           reservation['flavor_id']))
        return self._answer(reservation)

    def resize(self, reservation, project_id, hosts, user_session):
        self.calls.append(('resize', reservation['id'],
                           [(h['hypervisor_hostname'], n) for h, n in hosts]))
        return self._answer(reservation)

    def end(self, reservation, hosts):
        self.calls.append(('end', reservation['id'],
                           [(h['hypervisor_hostname'], n) for h, n in hosts]))


def ensure_inventory():
    """Give each registered host its ledger inventory, unless host
    registration already wrote it (it does once hosts book the ledger)."""
    ctx = context.admin_context()
    with db_api.writer(ctx) as session:
        held = ledger_inventory.inventories_of(
            session, kind=ledger_inventory.COMPUTE_HOST)
        for host in session.query(models.ComputeHost).all():
            if str(host.id) in held:
                continue
            inv = {'HOST': {'total': 1}}
            for cls, total in (('VCPU', host.vcpus),
                               ('MEMORY_MB', host.memory_mb),
                               ('DISK_GB', host.local_gb)):
                if total:
                    inv[cls] = {'total': total}
            ledger_inventory.set_inventory(
                session, str(host.id), ledger_inventory.COMPUTE_HOST, inv)


@pytest.fixture
def env():
    with fixtures.ClimateEnvironment() as environment:
        plugin = environment.plugin('virtual:instance')
        plugin._backend = RecordingBackend(None)
        environment.backend = plugin._backend
        yield environment


def admin(env, method, path, body=None, expect=200, version=None):
    resp = env.request(method, path, body=body, persona='admin',
                       version=version)
    assert resp.status_int == expect, resp.text
    return resp.json if resp.body else None


def add_hosts(env, count, vcpus=4, memory_mb=4096, local_gb=40, **caps):
    for i in range(count):
        admin(env, 'POST', '/v1/os-hosts',
              dict(name='h%02d' % i, vcpus=vcpus, memory_mb=memory_mb,
                   local_gb=local_gb, **caps), expect=201)
    ensure_inventory()


def slots(amount=2, vcpus=1, memory_mb=512, disk_gb=1, **extra):
    return dict(resource_type='virtual:instance', amount=amount,
                vcpus=vcpus, memory_mb=memory_mb, disk_gb=disk_gb, **extra)


def lease(env, name, *reservations, start=START, end=END, expect=201):
    body = {'name': name, 'start_date': start, 'end_date': end,
            'events': [], 'reservations': list(reservations)}
    resp = env.request('POST', '/v1/leases', body=body)
    if expect is not None:
        assert resp.status_int == expect, resp.text
    return resp.json.get('lease') or resp.json


def units_of(res_id):
    """``{host id: slots}`` a reservation holds (by its VCPU bookings of
    1 VCPU each: the tests' shape unless said otherwise)."""
    ctx = context.admin_context()
    with db_api.reader(ctx) as session:
        rows = booking.bookings_of(session, res_id)
    units = collections.Counter()
    for provider, cls, amount, _s, _e in rows:
        if cls == 'VCPU':
            units[provider] += amount
    return dict(units)


def bookings():
    ctx = context.admin_context()
    with db_api.reader(ctx) as session:
        return sorted(
            (b.reservation_id, b.provider_id, b.resource_class, b.amount,
             b.start_date, b.end_date)
            for b in session.query(models.LedgerBooking).all())


def unchanged(env):
    """A snapshot of everything a lease change writes, ledger included."""
    return env.snapshot(), bookings()


def get(env, lease_id):
    return env.request('GET', '/v1/leases/' + lease_id).json['lease']


def wait_status(env, lease_id, status, timeout=10):
    deadline = time.monotonic() + timeout
    while True:
        found = get(env, lease_id)
        if found['status'] == status:
            return found
        assert time.monotonic() < deadline, found
        time.sleep(0.05)


# -- validation ---------------------------------------------------------------

BAD = [
    ({'amount': 'two'}, 'amount must be an integer. amount is'),
    ({'amount': 0}, 'amount must be >= 1.'),
    ({'amount': -3}, 'amount must be >= 1.'),
    ({'amount': 2 ** 31}, 'amount must be <= 2147483647.'),
    ({'amount': 1.5}, 'amount must be an integer.'),
    ({'amount': True}, 'amount must be an integer.'),
    ({'amount': [2]}, 'reservations[0].amount must be a string, number'),
    ({'vcpus': 0}, 'vcpus must be >= 1.'),
    ({'vcpus': 'x'}, 'vcpus must be an integer.'),
    ({'memory_mb': {}}, 'reservations[0].memory_mb must be a string'),
    ({'memory_mb': 'lots'}, 'memory_mb must be an integer.'),
    ({'memory_mb': 0}, 'memory_mb must be >= 1.'),
    ({'disk_gb': -1}, 'disk_gb must be >= 0.'),
    ({'affinity': 'maybe'},
     'Malformed parameter affinity (must be a bool value or None).'),
    ({'affinity': 2},
     'Malformed parameter affinity (must be a bool value or None).'),
    ({'affinity': 'NONE'},
     'Malformed parameter affinity (must be a bool value or None).'),
    ({'affinity': 0.5},
     'Malformed parameter affinity (must be a bool value or None).'),
    ({'resource_properties': '["=", "$gpu"'},
     'Malformed requirements ["=", "$gpu"'),
    ({'resource_properties': 42}, 'Malformed requirements 42'),
    ({'resource_properties': '["~", "$gpu", "true"]'},
     'Malformed requirements'),
    ({'colour': 'blue'}, 'colour: not a virtual:instance parameter'),
    ({'source_flavor': 'm1'}, 'source_flavor: not a virtual:instance'),
    ({'server_group_id': 'g'}, 'Malformed parameter server_group_id.'),
    ({'aggregate_id': 3}, 'Malformed parameter aggregate_id.'),
    ({'flavor_id': 'm1.small'}, 'Malformed parameter flavor_id. Give either'),
    ({'vcpus': None}, 'Missing parameter vcpus.'),
    ({'vcpus': '', 'disk_gb': None}, 'Missing parameter vcpus,disk_gb.'),
    ({'amount': None}, 'Missing parameter amount.'),
]


@pytest.mark.parametrize('change,sentence', BAD,
                         ids=[repr(c) for c, _s in BAD])
def test_each_bad_field_is_a_400_naming_it_and_nothing_is_written(
        env, change, sentence):
    add_hosts(env, 1)
    before = unchanged(env)
    resp = env.request('POST', '/v1/leases', body={
        'name': 'bad', 'start_date': START, 'end_date': END,
        'reservations': [dict(slots(), **change)]})
    assert resp.status_int == 400, resp.text
    message = resp.json['error_message']
    assert message.startswith(sentence) or sentence in message, message
    named = [k for k in change if k in message] or \
        [k for k in change if change[k] is None]
    assert named, message
    assert unchanged(env) == before


def test_missing_fields_and_an_unknown_flavor(env):
    add_hosts(env, 1)
    before = unchanged(env)
    for params, sentence in (
            ({'resource_type': 'virtual:instance', 'amount': 1},
             'Missing parameter vcpus,memory_mb,disk_gb.'),
            ({'resource_type': 'virtual:instance', 'vcpus': 1,
              'memory_mb': 1, 'disk_gb': 1}, 'Missing parameter amount.'),
            ({'resource_type': 'virtual:instance', 'amount': 1,
              'flavor_id': 'm9.huge'}, 'flavor m9.huge could not be found'),
            ({'resource_type': 'virtual:instance', 'amount': 1,
              'flavor_id': 7}, 'Malformed parameter flavor_id.')):
        resp = env.request('POST', '/v1/leases', body={
            'name': 'bad', 'start_date': START, 'end_date': END,
            'reservations': [params]})
        assert resp.status_int == 400, resp.text
        assert sentence in resp.json['error_message'], resp.text
    assert unchanged(env) == before


def test_the_static_backend_refuses_flavor_id(env):
    add_hosts(env, 1)
    env.plugin('virtual:instance')._backend = static.StaticInstanceBackend(
        None)
    resp = env.request('POST', '/v1/leases', body={
        'name': 'bad', 'start_date': START, 'end_date': END,
        'reservations': [{'resource_type': 'virtual:instance', 'amount': 1,
                          'flavor_id': 'm1.small'}]})
    assert resp.status_int == 400, resp.text
    assert resp.json['error_message'].startswith(
        'Malformed parameter flavor_id. Flavor m1.small cannot be read: '
        'flavor_id needs the nova inventory')


@pytest.mark.parametrize('given,stored', [
    (True, True), ('True', True), ('true', True), ('yes', True), ('1', True),
    (1, True), (False, False), ('False', False), ('no', False),
    ('0', False), (0, False), (None, None), ('None', None), ('none', None)])
def test_blazars_affinity_forms_are_accepted(env, given, stored):
    add_hosts(env, 2)
    made = lease(env, 'aff', slots(amount=1, affinity=given))
    assert made['reservations'][0]['affinity'] is stored


def test_the_answer_shows_blazars_fields_and_the_flavor_id(env):
    add_hosts(env, 2)
    made = lease(env, 'shape', slots(amount='2', vcpus='1',
                                     resource_properties=''))
    res = made['reservations'][0]
    assert res['flavor_id'] == res['id'] == res['resource_id']
    assert (res['amount'], res['vcpus'], res['memory_mb'],
            res['disk_gb']) == (2, 1, 512, 1)
    assert res['affinity'] is None and res['resource_properties'] == ''
    # made before the start (prepare), as Blazar makes them at create
    assert env.backend.calls == [('prepare', res['id'], 'project-a')]
    assert res['server_group_id'] == 'group-' + res['id'][:8]
    assert res['aggregate_id'] == 7
    # the listing's stored body says the same
    listed = env.request('GET', '/v1/leases').json['leases'][0]
    assert listed['reservations'][0] == res


def test_a_flavor_gives_the_shape(env):
    add_hosts(env, 1)
    made = lease(env, 'flavor', {'resource_type': 'virtual:instance',
                                 'amount': 2, 'flavor_id': 'm1.small'})
    res = made['reservations'][0]
    assert (res['vcpus'], res['memory_mb'], res['disk_gb']) == (2, 1024, 10)
    assert res['flavor_id'] == res['id']
    assert res['source_flavor']['id'] == 'm1.small'
    assert res['source_flavor']['traits']['required'] == ['HW_CPU_X86_AVX2']
    assert units_of(res['id']) == {'1': 4}


# -- booking ------------------------------------------------------------------

def test_slots_are_booked_by_affinity_and_a_conflict_says_when(env):
    add_hosts(env, 2)
    spread = lease(env, 'spread', slots(amount=2, affinity=False))
    assert units_of(spread['reservations'][0]['id']) == {'1': 1, '2': 1}
    packed = lease(env, 'packed', slots(amount=3, affinity=True))
    assert list(units_of(packed['reservations'][0]['id']).values()) == [3]
    # 4 + 4 VCPU, 5 taken (host 1 full): 3 left, on host 2 only
    before = unchanged(env)
    resp = env.request('POST', '/v1/leases', body={
        'name': 'more', 'start_date': START, 'end_date': END,
        'reservations': [slots(amount=3, affinity=False)]})
    assert resp.status_int == 409, resp.text
    assert resp.json['error_name'] == 'NotEnoughHostsAvailable'
    message = resp.json['error_message']
    assert message.startswith('Not enough hosts available: 1 instance(s) of '
                              'vcpus=1, memory_mb=512, disk_gb=1 fit on '
                              'distinct hosts'), message
    assert 'All 3 never fit' in message
    resp = env.request('POST', '/v1/leases', body={
        'name': 'more', 'start_date': START, 'end_date': END,
        'reservations': [slots(amount=4)]})
    assert resp.status_int == 409, resp.text
    assert '3 instance(s)' in resp.json['error_message']
    assert 'All 4 would fit for as long from 2090-01-01 02:00:00 UTC' in \
        resp.json['error_message']
    assert unchanged(env) == before


def test_resource_properties_pick_the_hosts(env):
    add_hosts(env, 1)
    admin(env, 'POST', '/v1/os-hosts', dict(
        name='gpu', vcpus=4, memory_mb=4096, local_gb=40, gpu='true'),
        expect=201)
    ensure_inventory()
    made = lease(env, 'gpu', slots(amount=2,
                                   resource_properties='["=", "$gpu", '
                                                       '"true"]'))
    assert units_of(made['reservations'][0]['id']) == {'2': 2}
    resp = env.request('POST', '/v1/leases', body={
        'name': 'none', 'start_date': START, 'end_date': END,
        'reservations': [slots(
            amount=1, resource_properties='["=", "$tpu", "1"]')]})
    assert resp.status_int == 409
    assert 'No reservable host matches resource_properties' in \
        resp.json['error_message']


def test_host_and_instance_reservations_never_overbook_one_host(env):
    add_hosts(env, 1)
    lease(env, 'slot', slots(amount=1))
    # a host carrying a slot cannot be taken whole over the window
    resp = env.request('POST', '/v1/leases', body={
        'name': 'whole', 'start_date': '2090-01-01 01:00',
        'end_date': '2090-01-01 03:00', 'events': [],
        'reservations': [{'resource_type': 'physical:host', 'min': 1,
                          'max': 1}]})
    assert resp.status_int == 409, resp.text
    # after it, it can
    lease(env, 'after', {'resource_type': 'physical:host', 'min': 1,
                         'max': 1}, start='2090-01-01 02:00',
          end='2090-01-01 04:00')
    # and a host taken whole carries no slot
    resp = env.request('POST', '/v1/leases', body={
        'name': 'late', 'start_date': '2090-01-01 03:00',
        'end_date': '2090-01-01 05:00', 'events': [],
        'reservations': [slots(amount=1)]})
    assert resp.status_int == 409, resp.text
    # the one rule holds at every instant
    usage = collections.defaultdict(list)
    for _res, provider, cls, amount, start, end in bookings():
        usage[provider, cls].append((start, end, amount))
    for (provider, cls), rows in usage.items():
        for start, _e, _a in rows:
            held = sum(a for s, e, a in rows if s <= start < e)
            assert held <= {'HOST': 1, 'VCPU': 4, 'MEMORY_MB': 4096,
                            'DISK_GB': 40}[cls], (provider, cls, rows)


# -- updates ------------------------------------------------------------------

def test_pending_updates_move_grow_reshape_or_refuse(env):
    add_hosts(env, 2)
    made = lease(env, 'p', slots(amount=2, affinity=False))
    res_id = made['reservations'][0]['id']
    # moved: the same hosts
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'start_date': '2090-01-02 00:00', 'end_date': '2090-01-02 02:00'})
    assert resp.status_int == 200, resp.text
    assert units_of(res_id) == {'1': 1, '2': 1}
    # grown and reshaped; flavor_id sent back as read is fine
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'reservations': [{'id': res_id, 'amount': 3, 'affinity': None,
                          'vcpus': 2, 'flavor_id': res_id}]})
    assert resp.status_int == 200, resp.text
    res = resp.json['lease']['reservations'][0]
    assert (res['amount'], res['vcpus'], res['flavor_id']) == (3, 2, res_id)
    assert sum(units_of(res_id).values()) == 6
    # the flavor is made again for the new shape; a move alone does not
    assert [c[0] for c in env.backend.calls] == ['prepare', 'prepare']
    before = unchanged(env)
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'reservations': [{'id': res_id, 'amount': 5}]})
    assert resp.status_int == 409, resp.text
    assert 'cannot change reservation %s' % res_id in \
        resp.json['error_message']
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'reservations': [{'id': res_id, 'amount': 'many'}]})
    assert resp.status_int == 400
    assert resp.json['error_message'].startswith('amount must be an integer')
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'reservations': [{'id': res_id, 'server_group_id': 'mine'}]})
    assert resp.status_int == 409
    assert resp.json['error_message'].startswith(
        'server_group_id cannot be updated')
    assert unchanged(env) == before


def test_active_reservation_grows_extends_and_refuses_the_rest(env):
    add_hosts(env, 2)
    made = lease(env, 'a', slots(amount=1, affinity=False), start='now',
                 end='2090-01-01 00:00')
    res_id = made['reservations'][0]['id']
    active = wait_status(env, made['id'], 'ACTIVE')
    assert env.backend.calls[:2] == [
        ('prepare', res_id, 'project-a'),
        ('start', res_id, 'project-a', [('h00', 1)], None)]
    res = active['reservations'][0]
    assert res['server_group_id'] == 'group-' + res_id[:8]
    assert res['aggregate_id'] == 7 and res['flavor_id'] == res_id

    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'reservations': [{'id': res_id, 'amount': 2}]})
    assert resp.status_int == 200, resp.text
    assert units_of(res_id) == {'1': 1, '2': 1}
    assert env.backend.calls[-1] == ('resize', res_id,
                                     [('h00', 1), ('h01', 1)])

    before = unchanged(env)
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'reservations': [{'id': res_id, 'amount': 1}]})
    assert resp.status_int == 409
    assert resp.json['error_message'].startswith(
        "Instance reservation doesn't allow to reduce/replace reserved "
        "instance slots when the reservation is in active status.")
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'reservations': [{'id': res_id, 'vcpus': 2}]})
    assert resp.status_int == 409
    assert resp.json['error_name'] == 'InvalidStateUpdate'
    assert resp.json['error_message'].startswith(
        'An active reservation only accepts to update amount.')
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'reservations': [{'id': res_id, 'amount': 3}]})
    assert resp.status_int == 409
    assert 'cannot grow reservation' in resp.json['error_message']
    # extension: up to the next lease that needs the capacity
    lease(env, 'next', slots(amount=2, vcpus=4, memory_mb=1, disk_gb=0),
          start='2090-01-01 06:00', end='2090-01-01 08:00')
    before = unchanged(env)
    resp = env.request('PUT', '/v1/leases/' + made['id'],
                       body={'end_date': '2090-01-01 07:00'})
    assert resp.status_int == 409, resp.text
    assert 'it can end at 2090-01-01 06:00:00 UTC at the latest' in \
        resp.json['error_message']
    assert unchanged(env) == before
    resp = env.request('PUT', '/v1/leases/' + made['id'],
                       body={'end_date': '2090-01-01 06:00'})
    assert resp.status_int == 200, resp.text


def test_start_and_end_hand_over_and_free_the_slots(env):
    add_hosts(env, 2)
    made = lease(env, 'run', slots(amount=3, affinity=None), start='now',
                 end=fixtures.iso(2))
    res_id = made['reservations'][0]['id']
    wait_status(env, made['id'], 'TERMINATED')
    kinds = [c[0] for c in env.backend.calls]
    assert kinds == ['prepare', 'start', 'end'], env.backend.calls
    assert sum(n for _h, n in env.backend.calls[1][3]) == 3
    assert env.backend.calls[2][2] == env.backend.calls[1][3]
    assert units_of(res_id) == {}


def test_delete_releases_the_slots(env):
    add_hosts(env, 1)
    made = lease(env, 'gone', slots(amount=4))
    assert units_of(made['reservations'][0]['id']) == {'1': 4}
    resp = env.request('DELETE', '/v1/leases/' + made['id'])
    assert resp.status_int == 204
    assert bookings() == []
    # what prepare made for the lease that never started goes too
    res_id = made['reservations'][0]['id']
    assert [c[:2] for c in env.backend.calls] == [('prepare', res_id),
                                                  ('end', res_id)]


# -- healing ------------------------------------------------------------------

def test_healing_places_lost_slots_again_or_flags_the_lease(env):
    add_hosts(env, 3)
    plugin = env.plugin('virtual:instance')
    ctx = context.admin_context()
    active = lease(env, 'active', slots(amount=2, affinity=False),
                   start='now', end='2090-01-01 00:00')
    wait_status(env, active['id'], 'ACTIVE')
    res_id = active['reservations'][0]['id']
    assert units_of(res_id) == {'1': 1, '2': 1}

    db_hosts.host_set_reservable(ctx, [1], False)
    assert plugin.heal(ctx) == [res_id]
    assert units_of(res_id) == {'2': 1, '3': 1}
    found = get(env, active['id'])
    assert found['reservations'][0]['resources_changed'] is True
    assert found['degraded'] is False
    assert env.backend.calls[-1] == ('resize', res_id,
                                     [('h01', 1), ('h02', 1)])

    # no spare host left: flagged; back up: cleared
    db_hosts.host_set_reservable(ctx, [2], False)
    assert plugin.heal(ctx) == [res_id]
    found = get(env, active['id'])
    assert found['reservations'][0]['missing_resources'] is True
    assert found['degraded'] is True
    assert units_of(res_id) == {'2': 1, '3': 1}
    db_hosts.host_set_reservable(ctx, [1, 2], True)
    assert plugin.heal(ctx) == [res_id]
    found = get(env, active['id'])
    assert found['reservations'][0]['missing_resources'] is False
    assert found['degraded'] is False


# -- availability (1.3) -------------------------------------------------------

def test_availability_needs_1_3_and_answers_windows(env):
    add_hosts(env, 2)
    query = {'amount': 3, 'vcpus': 2, 'memory_mb': 512, 'disk_gb': 1,
             'duration': '1h', 'earliest_start': START, 'limit': 2}
    resp = env.request('POST', '/v1/instances/availability', body=query,
                       version='1.2')
    assert resp.status_int == 404
    lease(env, 'busy', slots(amount=2, affinity=False))
    resp = env.request('POST', '/v1/instances/availability', body=query,
                       version='1.3', persona='reader', project='project-b')
    assert resp.status_int == 200, resp.text
    answer = resp.json['availability']
    assert answer['matching_hosts'] == 2
    assert [w['start'] for w in answer['windows']] == [
        '2090-01-01T02:00:00.000000', '2090-01-01T03:00:00.000000']
    assert answer['windows'][0]['slots_free'] == 4
    assert 'busy' not in resp.text and 'project-a' not in resp.text
    fixed = dict(query, start_date=START, end_date='2090-01-01 01:00')
    for key in ('duration', 'earliest_start', 'limit'):
        fixed.pop(key)
    resp = env.request('POST', '/v1/instances/availability', body=fixed,
                       version='1.3')
    assert resp.status_int == 200, resp.text
    assert resp.json['availability']['requested'] == {
        'start': '2090-01-01T00:00:00.000000',
        'end': '2090-01-01T01:00:00.000000', 'slots_free': 2, 'fits': False}


def test_availability_looks_past_its_first_horizon(env, monkeypatch):
    """The search reads the requested window first, then a horizon four
    times as long each time: a window after a long busy stretch is still
    found, and the same as a search reading everything at once would
    find, without reading the year up to latest_end."""
    add_hosts(env, 1)
    lease(env, 'long', slots(amount=4), end='2090-02-20 00:00')
    query = {'amount': 4, 'vcpus': 1, 'memory_mb': 512, 'disk_gb': 1,
             'duration': '2h', 'earliest_start': START, 'limit': 1,
             'latest_end': '2091-01-01 00:00'}
    reads = []
    real = availability.Outlook._read

    def counted(self, low, high):
        reads.append(high)
        return real(self, low, high)

    monkeypatch.setattr(availability.Outlook, '_read', counted)
    resp = env.request('POST', '/v1/instances/availability', body=query,
                       version='1.3')
    assert resp.status_int == 200, resp.text
    windows = resp.json['availability']['windows']
    assert [w['start'] for w in windows] == ['2090-02-20T00:00:00.000000']
    # 2 h, 8 h, 32 h... 2048 h (85 days): bounded reads, each of the
    # stretch after the one before, not one of a year
    start = datetime.datetime(2090, 1, 1)
    assert reads == [start + datetime.timedelta(hours=2 * 4 ** k)
                     for k in range(6)], reads


def test_availability_follows_the_host_inventory(env):
    """The hosts' inventories are cached per inventory version: a host
    enrolled or given another allocation ratio counts at once."""
    add_hosts(env, 1)
    query = {'amount': 1, 'vcpus': 1, 'memory_mb': 512, 'disk_gb': 1,
             'duration': '1h', 'earliest_start': START, 'limit': 1}

    def free():
        resp = env.request('POST', '/v1/instances/availability', body=query,
                           version='1.3')
        assert resp.status_int == 200, resp.text
        return resp.json['availability']['windows'][0]['slots_free']

    assert free() == 4
    admin(env, 'PUT', '/v1/os-hosts/1',
          {'values': {'cpu_allocation_ratio': '2.0'}})
    assert free() == 8
    admin(env, 'POST', '/v1/os-hosts',
          dict(name='more', vcpus=2, memory_mb=4096, local_gb=40),
          expect=201)
    ensure_inventory()
    assert free() == 10


@pytest.mark.parametrize('query,field', [
    ({'vcpus': 0}, 'vcpus'),
    ({'amount': 'x'}, 'amount'),
    ({'affinity': 'sometimes'}, 'affinity'),
    ({'duration': 'soon'}, 'duration'),
    ({'duration': None}, 'duration'),
    ({'limit': 0}, 'limit'),
    ({'colour': 1}, 'colour'),
    ({'start_date': START}, 'end_date'),
    ({'latest_end': '2000-01-01 00:00'}, 'latest_end'),
])
def test_availability_bad_input_is_a_400_naming_the_field(env, query, field):
    add_hosts(env, 1)
    body = dict({'amount': 1, 'vcpus': 1, 'memory_mb': 1, 'disk_gb': 0,
                 'duration': '1h'}, **query)
    if body.get('duration') is None:
        del body['duration']
    resp = env.request('POST', '/v1/instances/availability', body=body,
                       version='1.3')
    assert resp.status_int == 400, resp.text
    assert field in resp.json['error_message']


def test_a_pending_reservation_changes_between_flavor_and_shape(env):
    add_hosts(env, 1)
    made = lease(env, 'f', slots(amount=1))
    res_id = made['reservations'][0]['id']
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'reservations': [{'id': res_id, 'flavor_id': 'm1.small'}]})
    assert resp.status_int == 200, resp.text
    res = resp.json['lease']['reservations'][0]
    assert (res['vcpus'], res['memory_mb'], res['flavor_id']) == (
        2, 1024, res_id)
    assert res['source_flavor']['id'] == 'm1.small'
    assert units_of(res_id) == {'1': 2}
    # a date change keeps the flavor's shape, without reading it again
    env.backend.flavor = None
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'reservations': [{'id': res_id, 'amount': 2}]})
    assert resp.status_int == 200, resp.text
    assert resp.json['lease']['reservations'][0]['source_flavor']['id'] == \
        'm1.small'
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'reservations': [{'id': res_id, 'vcpus': 1, 'memory_mb': 256}]})
    assert resp.status_int == 200, resp.text
    res = resp.json['lease']['reservations'][0]
    assert res['source_flavor'] is None and res['vcpus'] == 1
    assert res['disk_gb'] == 10
    assert units_of(res_id) == {'1': 2}


def test_backends_load_by_inventory():
    from climate.plugins.virtual_instance import backends

    class Conf:
        class hosts:
            inventory = 'static'

    assert isinstance(backends.load(Conf), static.StaticInstanceBackend)
    assert backends.load(Conf).acts_in_cloud is False
    Conf.hosts.inventory = 'nova'
    assert backends.load(Conf).name == 'nova'
    Conf.hosts.inventory = 'ironic'
    with pytest.raises(backends.BackendUnavailable) as info:
        backends.load(Conf)
    assert 'ironic' in str(info.value)


def test_the_409_search_is_bounded_and_says_so(env):
    add_hosts(env, 1)
    resp = env.request('POST', '/v1/leases', body={
        'name': 'huge', 'start_date': START, 'end_date': END,
        'reservations': [slots(amount=5)]})
    assert resp.status_int == 409
    assert 'All 5 never fit on the matching hosts, even with nothing ' \
        'else booked.' in resp.json['error_message']
    lease(env, 'years', slots(amount=4), end='2093-01-01 00:00')
    resp = env.request('POST', '/v1/leases', body={
        'name': 'later', 'start_date': START, 'end_date': END,
        'reservations': [slots(amount=1)]})
    assert resp.status_int == 409
    assert 'All 1 do not fit for as long before 2091-01-02 00:00:00 UTC.' \
        in resp.json['error_message']
    query = {'amount': 1, 'vcpus': 1, 'memory_mb': 1, 'disk_gb': 0,
             'duration': '1h', 'earliest_start': START}
    answer = env.request('POST', '/v1/instances/availability', body=query,
                         version='1.3').json['availability']
    assert answer['windows'] == []
    assert answer['searched_until'] == '2091-01-02T00:00:00.000000'
    answer = env.request('POST', '/v1/instances/availability', body=dict(
        query, latest_end='2094-01-01 00:00'),
        version='1.3').json['availability']
    assert 'searched_until' not in answer
    assert answer['windows'][0]['start'] == '2093-01-01T00:00:00.000000'
