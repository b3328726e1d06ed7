"""virtual:volume through the in-process API on the static inventory
(SQLite): validation (each malformed field a 400 naming it, nothing
written), booking on one pool in the ledger, the 409's sentence, pending
and active updates, start/end on the backend, and the pool inventory
(/v1/volume-pools, 1.5) with its ledger inventory."""

import datetime

import pytest

from climate import context
from climate.db import api as db_api
from climate.db.ledger import booking
from climate.db.ledger import inventory
from climate.db.ledger import slot_search
from climate.db import models
from climate.db import volume_pools as db_pools
from climate.plugins.virtual_volume.backends import static
from climate.plugins.virtual_volume import plugin as volume_plugin
from climate.tests import fixtures

START, END = '2090-01-01 00:00', '2090-01-01 02:00'
V = '1.5'


class RecordingBackend(static.StaticVolumeBackend):
    """The static backend, recording calls, making volume ids."""

    acts_in_cloud = True

    def __init__(self, conf):
        super().__init__(conf)
        self.calls = []

    def start(self, reservation, project_id, pool, user_session):
        self.calls.append(('start', reservation['id'], project_id,
                           pool['name'] if pool else None))
        return {'volume_ids': ['vol-%d' % i
                               for i in range(reservation['count'] or 1)]}

    def end(self, reservation, on_end):
        self.calls.append(('end', reservation['id'], on_end))
        return {'image_ids': ['image-1'] if on_end == 'snapshot' else []}


@pytest.fixture
def env():
    with fixtures.ClimateEnvironment() as environment:
        plugin = environment.plugin('virtual:volume')
        plugin._backend = RecordingBackend(volume_plugin.CONF)
        environment.backend = plugin._backend
        yield environment


def admin(env, method, path, body=None, expect=200, version=V):
    resp = env.request(method, path, body=body, persona='admin',
                       version=version)
    assert resp.status_int == expect, resp.text
    return resp.json if resp.body else None


def add_pool(env, name, total, **extra):
    return admin(env, 'POST', '/v1/volume-pools',
                 dict(name=name, total_capacity_gb=total, **extra),
                 expect=201)['volume_pool']


def volumes(size_gb=10, **extra):
    return dict(resource_type='virtual:volume', size_gb=size_gb, **extra)


def lease(env, name, *reservations, start=START, end=END, expect=201):
    body = {'name': name, 'start_date': start, 'end_date': end,
            'events': [], 'reservations': list(reservations)}
    resp = env.request('POST', '/v1/leases', body=body)
    if expect is not None:
        assert resp.status_int == expect, resp.text
    return resp.json.get('lease') or resp.json


def get(env, lease_id):
    return env.request('GET', '/v1/leases/' + lease_id).json['lease']


def held(res_id):
    """``{(provider, class): amount}`` the reservation books."""
    ctx = context.admin_context()
    with db_api.reader(ctx) as session:
        rows = booking.bookings_of(session, res_id)
    out = {}
    for provider, cls, amount, _s, _e in rows:
        out[provider, cls] = out.get((provider, cls), 0) + amount
    return out


def unchanged(env):
    return (env.snapshot(), sorted(
        (p.id, p.name, p.total_capacity_gb, p.reservable)
        for p in env.rows(models.VolumePool)))


# -- validation ---------------------------------------------------------------

BAD = [
    ({'size_gb': 0}, 'size_gb', 'size_gb must be >= 1.'),
    ({'size_gb': -2}, 'size_gb', 'size_gb must be >= 1.'),
    ({'size_gb': 'ten'}, 'size_gb', 'size_gb must be an integer.'),
    ({'size_gb': True}, 'size_gb', 'size_gb is a whole number'),
    ({'size_gb': 2 ** 31}, 'size_gb', 'size_gb must be <= 2147483647.'),
    ({'size_gb': None}, 'size_gb', 'Missing parameter size_gb.'),
    ({'count': 0}, 'count', 'count must be >= 1.'),
    ({'count': 'x'}, 'count', 'count must be an integer.'),
    ({'count': 11}, 'count',
     'count is 11 volumes but size_gb is 10 GB: a volume has at least 1 GB.'),
    ({'colour': 'red'}, 'colour', 'colour: not a virtual:volume parameter'),
    ({'on_end': 'shelve'}, 'on_end', 'on_end is one of delete, snapshot'),
    ({'on_end': 3}, 'on_end', 'on_end is one of'),
    ({'volume_type': 7}, 'volume_type', 'Malformed parameter volume_type.'),
    ({'volume_type': '   '}, 'volume_type', 'volume_type is the name'),
    ({'resource_properties': '["=", "$tier"'}, 'resource_properties',
     'Malformed requirements'),
    ({'resource_properties': 42}, 'resource_properties',
     'Malformed requirements 42'),
    ({'pool': 'x'}, 'pool', 'pool is set by Climate'),
    ({'volume_ids': ['v']}, 'volume_ids', 'volume_ids is set by Climate'),
    ({'volumes': 'a'}, 'volumes', 'volumes is a list'),
    ({'volumes': []}, 'volumes', 'volumes is a list'),
    ({'volumes': [3]}, 'volumes[0]', 'volumes[0] is an object'),
    ({'volumes': [{'size_gb': 1}]}, 'volumes[0].name',
     'Missing parameter volumes[0].name.'),
    ({'volumes': [{'name': 'a'}]}, 'volumes[0].size_gb',
     'Missing parameter volumes[0].size_gb.'),
    ({'volumes': [{'name': 'a', 'size_gb': 1},
                  {'name': 'b', 'size_gb': 0}]}, 'volumes[1].size_gb',
     'volumes[1].size_gb must be >= 1.'),
    ({'volumes': [{'name': 'a', 'size_gb': 1, 'x': 1}]}, 'volumes[0].x',
     'volumes[0].x: not a field of a volume spec'),
    ({'volumes': [{'name': 'a', 'size_gb': 1, 'volume_type': 5}]},
     'volumes[0].volume_type', 'Malformed parameter volumes[0].volume_type'),
    ({'volumes': [{'name': 'a', 'size_gb': 1, 'image_id': 'i',
                   'snapshot_id': 's'}]}, 'volumes[0].snapshot_id',
     'not both'),
    ({'volumes': [{'name': 'a', 'size_gb': 4}], 'size_gb': 5}, 'size_gb',
     'size_gb is the sum of their sizes (4)'),
    ({'volumes': [{'name': 'a', 'size_gb': 4}], 'count': 2,
      'size_gb': None}, 'count',
     'count is how many they are (1)'),
]


@pytest.mark.parametrize('extra,field,sentence', BAD,
                         ids=[repr(b[0])[:40] for b in BAD])
def test_each_malformed_field_is_a_400_naming_it(env, extra, field,
                                                 sentence):
    add_pool(env, 'p', 100)
    before = unchanged(env)
    body = dict(volumes(), **extra)
    body = {k: v for k, v in body.items() if v is not None}
    answer = lease(env, 'bad', body, expect=400)
    assert sentence in answer['error_message'], answer
    assert field in answer['error_message']
    assert unchanged(env) == before


# -- booking ------------------------------------------------------------------

def test_all_volumes_on_one_matching_pool_in_the_ledger(env):
    gold = add_pool(env, 'n@ceph#gold', 100, capabilities={'tier': 'gold'})
    add_pool(env, 'n@lvm#lvm', 1000)
    made = lease(env, 'gold', volumes(
        60, count=3, resource_properties='["=", "$tier", "gold"]'))
    res = made['reservations'][0]
    assert (res['size_gb'], res['count'], res['on_end']) == (
        60, 3, 'delete')
    provider = db_pools.provider(gold['id'])
    assert held(res['id']) == {(provider, 'VOLUME_GB'): 60,
                               (provider, 'VOLUME'): 3}
    # no count: no limit on the number, booked as the most volumes the
    # gigabytes can hold
    assert get(env, made['id'])['reservations'][0]['pool'] == 'n@ceph#gold'
    made = lease(env, 'any', volumes(
        7, resource_properties='["=", "$tier", "gold"]'))
    res = made['reservations'][0]
    assert res['count'] is None
    assert held(res['id']) == {(provider, 'VOLUME_GB'): 7,
                               (provider, 'VOLUME'): 7}


def test_pre_created_volumes_book_their_sum(env):
    pool = add_pool(env, 'p', 100)
    made = lease(env, 'pre', dict(resource_type='virtual:volume', volumes=[
        {'name': 'a', 'size_gb': 4}, {'name': 'b', 'size_gb': 6}]))
    res = made['reservations'][0]
    assert (res['size_gb'], res['count']) == (10, 2)
    assert held(res['id']) == {(db_pools.provider(pool['id']), 'VOLUME_GB'):
                               10, (db_pools.provider(pool['id']), 'VOLUME'):
                               2}


def test_the_409_says_what_is_free_and_from_when(env):
    add_pool(env, 'p', 50)
    lease(env, 'first', volumes(40, count=2))
    answer = lease(env, 'second', volumes(20, count=2), start='2090-01-01 '
                   '01:00', end='2090-01-01 03:00', expect=409)
    message = answer['error_message']
    assert answer['error_name'] == 'NotEnoughVolumeCapacity'
    assert message.startswith('Not enough volume capacity available: '), \
        message
    assert ('20 GB in at most 2 volume(s) asked on one pool from '
            '2090-01-01 01:00:00 to 2090-01-01 03:00:00 UTC; at most 10 GB '
            'free on one of the 1 reservable pool(s) matching (of those '
            'with room for 2 more volume(s)).') in message
    assert 'It would fit for as long from 2090-01-01 02:00:00 UTC.' in \
        message
    assert lease(env, 'never', volumes(60), expect=409)[
        'error_message'].endswith(
        'It never fits on one matching pool, even with nothing else '
        'booked.')


def test_the_409_counts_no_gigabytes_of_a_pool_without_room_for_the_volumes(
        env):
    """Issue 39's kind: the booking takes the whole shape (gigabytes and
    volumes) on one pool; the refusal counts a pool's free gigabytes only
    where the volumes fit too, never 90 GB free for 20 refused."""
    add_pool(env, 'p', 100, capabilities={'max_volumes': 1})
    lease(env, 'first', volumes(10, count=1))
    message = lease(env, 'second', volumes(20, count=1), expect=409)[
        'error_message']
    assert ('20 GB in at most 1 volume(s) asked on one pool from 2090-01-01 '
            '00:00:00 to 2090-01-01 02:00:00 UTC; at most 0 GB free on '
            'one of the 1 reservable pool(s) matching (of those with room '
            'for 1 more volume(s)). It would fit for as long from '
            '2090-01-01 02:00:00 UTC.') in message, message


def test_pools_fill_and_are_never_overbooked(env):
    add_pool(env, 'a', 30, reserved_percentage=10,
             max_over_subscription_ratio=2.0)   # 54 GB usable
    made = [lease(env, 'l%d' % i, volumes(10), expect=None)
            for i in range(7)]
    assert [('id' in m) for m in made] == [True] * 5 + [False] * 2
    total = sum(amount for (p, cls), amount in held_all().items()
                if cls == 'VOLUME_GB')
    assert total == 50


def held_all():
    ctx = context.admin_context()
    out = {}
    with db_api.reader(ctx) as session:
        for b in session.query(models.LedgerBooking).all():
            key = (b.provider_id, b.resource_class)
            out[key] = out.get(key, 0) + b.amount
    return out


def test_unreservable_pools_are_not_offered(env):
    pool = add_pool(env, 'p', 50)
    admin(env, 'PUT', '/v1/volume-pools/%d' % pool['id'],
          {'reservable': False})
    assert 'No reservable volume pool matches' in lease(
        env, 'x', volumes(1), expect=409)['error_message']


def test_matching_pools_follow_every_change_of_the_inventory(env):
    # cached per inventory version: create, update, delete each bump it
    plugin = env.plugin('virtual:volume')
    ctx = context.admin_context()
    pool = add_pool(env, 'p', 50, capabilities={'tier': 'gold'})
    gold = {'resource_properties': '["=", "$tier", "gold"]'}
    before = db_pools.inventory_version(ctx)
    assert plugin.matching_pools(ctx, gold) == (
        (db_pools.provider(pool['id']),
         {db_pools.VOLUME_GB: 50, db_pools.VOLUME: db_pools.MAX_VOLUMES}),)
    admin(env, 'PUT', '/v1/volume-pools/%d' % pool['id'],
          {'total_capacity_gb': 80})
    assert db_pools.inventory_version(ctx) > before
    assert plugin.matching_pools(ctx, gold)[0][1][db_pools.VOLUME_GB] == 80
    admin(env, 'PUT', '/v1/volume-pools/%d' % pool['id'],
          {'capabilities': {'tier': 'silver'}})
    assert plugin.matching(ctx, gold) == []
    other = add_pool(env, 'q', 10, capabilities={'tier': 'gold'})
    assert plugin.matching(ctx, gold) == [db_pools.provider(other['id'])]
    admin(env, 'DELETE', '/v1/volume-pools/%d' % other['id'], expect=204)
    assert plugin.matching(ctx, gold) == []


def test_a_request_no_pool_holds_is_refused_without_a_search(env,
                                                             monkeypatch):
    add_pool(env, 'p', 50)
    lease(env, 'a', volumes(20))

    def search(*args, **kwargs):
        raise AssertionError('searched')
    monkeypatch.setattr(slot_search, 'place', search)
    message = lease(env, 'x', volumes(60), expect=409)['error_message']
    assert 'at most 30 GB free on one of the 1 reservable pool(s) ' \
        'matching (of those with room for 60 more volume(s))' in message
    assert 'It never fits on one matching pool' in message


def test_a_pool_listing_its_volume_types_serves_only_them(env):
    add_pool(env, 'ssd', 50, capabilities={'volume_types': ['fast']})
    add_pool(env, 'hdd', 500)
    made = lease(env, 'fast', volumes(40, volume_type='fast'))
    assert get(env, made['id'])['reservations'][0]['pool'] == 'ssd'
    made = lease(env, 'slow', volumes(40, volume_type='slow'))
    assert get(env, made['id'])['reservations'][0]['pool'] == 'hdd'


# -- updates ------------------------------------------------------------------

def test_pending_updates_move_resize_or_refuse(env):
    add_pool(env, 'p', 50)
    made = lease(env, 'a', volumes(20))
    res_id = made['reservations'][0]['id']
    lease(env, 'b', volumes(30))
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'start_date': '2090-01-02 00:00', 'end_date': '2090-01-02 02:00'})
    assert resp.status_int == 200, resp.text
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'reservations': [{'id': res_id, 'size_gb': 50}]})
    assert resp.status_int == 200, resp.text
    assert held(res_id)[(db_pools.provider(1), 'VOLUME_GB')] == 50
    before = unchanged(env)
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'reservations': [{'id': res_id, 'size_gb': 51}]})
    assert resp.status_int == 409, resp.text
    assert 'cannot change reservation %s' % res_id in resp.json[
        'error_message']
    assert unchanged(env) == before


def update(env, lease_id, body, timeout=5):
    """PUT the lease, again while an event of it is running."""
    import time
    deadline = time.monotonic() + timeout
    while True:
        resp = env.request('PUT', '/v1/leases/' + lease_id, body=body)
        if 'is running; try again' not in resp.text or \
                time.monotonic() > deadline:
            return resp
        time.sleep(0.05)


def test_start_and_end_run_the_backend_and_free_the_capacity(env):
    add_pool(env, 'p', 50)
    end = (datetime.datetime.utcnow() + datetime.timedelta(
        seconds=8)).strftime('%Y-%m-%d %H:%M:%S')
    made = lease(env, 'now', volumes(10, count=2, on_end='snapshot'),
                 start='now', end=end)
    res_id = made['reservations'][0]['id']
    found = wait_for(env, made['id'], 'ACTIVE')
    res = found['reservations'][0]
    assert res['volume_ids'] == ['vol-0', 'vol-1']
    assert res['pool'] == 'p'
    resp = update(env, made['id'], {
        'reservations': [{'id': res_id, 'count': 1}]})
    assert resp.status_int == 409
    assert 'count may grow, not shrink' in resp.json['error_message']
    resp = update(env, made['id'], {
        'reservations': [{'id': res_id, 'size_gb': 6}]})
    assert resp.status_int == 409
    assert 'size_gb may grow, not shrink' in resp.json['error_message']
    resp = update(env, made['id'], {
        'reservations': [{'id': res_id, 'size_gb': 12, 'count': 3}]})
    assert resp.status_int == 200, resp.text
    assert held(res_id) == {(db_pools.provider(1), 'VOLUME_GB'): 12,
                            (db_pools.provider(1), 'VOLUME'): 3}
    resp = update(env, made['id'], {
        'reservations': [{'id': res_id, 'size_gb': 51}]})
    assert resp.status_int == 409
    assert 'cannot grow reservation %s' % res_id in resp.json[
        'error_message']
    found = wait_for(env, made['id'], 'TERMINATED')
    assert ('start', res_id, 'project-a', 'p') in env.backend.calls
    assert ('end', res_id, 'snapshot') in env.backend.calls
    assert found['reservations'][0]['image_ids'] == ['image-1']
    assert held(res_id) == {}


def wait_for(env, lease_id, status, timeout=15):
    import time
    deadline = time.monotonic() + timeout
    while True:
        found = get(env, lease_id)
        if found['status'] == status:
            return found
        assert time.monotonic() < deadline, found
        time.sleep(0.05)


# -- the pool inventory -------------------------------------------------------

def test_pool_registration_writes_its_ledger_inventory(env):
    pool = add_pool(env, 'p', 100, reserved_percentage=25,
                    max_over_subscription_ratio=1.5,
                    capabilities={'max_volumes': 3})
    assert pool['capacity_gb'] == 112
    ctx = context.admin_context()
    with db_api.reader(ctx) as session:
        inv = inventory.inventories_of(session, kind=inventory.VOLUME_POOL)
    provider = db_pools.provider(pool['id'])
    assert inv[provider]['VOLUME_GB'].total == 112
    assert inv[provider]['VOLUME'].total == 3
    assert lease(env, 'four', volumes(4, count=4), expect=409)
    assert lease(env, 'many', volumes(4), expect=409)
    three = lease(env, 'three', volumes(4, count=3))
    assert env.request('DELETE', '/v1/leases/' + three['id']).status_int \
        == 204
    admin(env, 'PUT', '/v1/volume-pools/%d' % pool['id'],
          {'total_capacity_gb': 10})
    with db_api.reader(ctx) as session:
        inv = inventory.inventories_of(session, kind=inventory.VOLUME_POOL)
    assert inv[provider]['VOLUME_GB'].total == 11
    admin(env, 'DELETE', '/v1/volume-pools/%d' % pool['id'], expect=204)
    with db_api.reader(ctx) as session:
        assert inventory.inventories_of(
            session, kind=inventory.VOLUME_POOL) == {}


def test_pool_ids_never_meet_host_ids_in_the_ledger(env):
    admin(env, 'POST', '/v1/os-hosts', dict(name='h1', vcpus=2,
                                            memory_mb=1024, local_gb=10),
          expect=201, version=None)
    pool = add_pool(env, 'p', 10)
    assert pool['id'] == 1
    made = lease(env, 'v', volumes(10, count=1))
    assert held(made['reservations'][0]['id']) == {
        ('volume_pool:1', 'VOLUME_GB'): 10, ('volume_pool:1', 'VOLUME'): 1}


def test_volume_pools_need_1_5_and_admin(env):
    assert env.request('GET', '/v1/volume-pools', persona='admin',
                       version='1.4').status_int == 404
    assert env.request('GET', '/v1/volume-pools', persona='member',
                       version=V).status_int == 403


def test_the_cinder_inventory_refuses_create_and_delete():
    with fixtures.ClimateEnvironment(overrides=[
            ('inventory', 'volumes', 'cinder')]) as env:
        resp = env.request('POST', '/v1/volume-pools', persona='admin',
                           version=V, body={'name': 'p',
                                            'total_capacity_gb': 1})
        assert resp.status_int == 400, resp.text
        assert 'pools come from Cinder' in resp.json['error_message']
        resp = env.request('DELETE', '/v1/volume-pools/1', persona='admin',
                           version=V)
        assert resp.status_int == 400, resp.text
