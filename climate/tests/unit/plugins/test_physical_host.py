"""physical:host through the in-process API: start/end on the backend,
updates that keep or refuse, healing, and no double booking."""

import concurrent.futures
import datetime
import time

import pytest

from climate import context
from climate import dates
from climate.db import api as db_api
from climate.db import models
from climate.plugins.physical_host.backends import static
from climate.tests import fixtures


class RecordingBackend(static.StaticBackend):
    """The static backend, recording calls, with hosts we can take down."""

    def __init__(self, conf):
        super().__init__(conf)
        self.calls = []
        self.down = set()

    def start(self, reservation_id, project_id, hosts):
        self.calls.append(('start', reservation_id, project_id,
                           sorted(h['hypervisor_hostname'] for h in hosts)))

    def end(self, reservation_id, hosts):
        self.calls.append(('end', reservation_id,
                           sorted(h['hypervisor_hostname'] for h in hosts)))

    def snapshot(self, reservation_id, hosts):
        self.calls.append(('snapshot', reservation_id,
                           sorted(h['hypervisor_hostname'] for h in hosts)))

    def replace(self, reservation_id, project_id, old_hosts, new_hosts):
        self.calls.append(('replace', reservation_id,
                           [h['hypervisor_hostname'] for h in old_hosts],
                           [h['hypervisor_hostname'] for h in new_hosts]))

    def down_hosts(self, hosts):
        return [h for h in hosts if h['hypervisor_hostname'] in self.down]


@pytest.fixture
def env():
    with fixtures.ClimateEnvironment() as environment:
        plugin = environment.plugin('physical:host')
        plugin._backend = RecordingBackend(None)
        environment.backend = plugin._backend
        yield environment


def admin(env, method, path, body=None, expect=200, version=None):
    resp = env.request(method, path, body=body, persona='admin',
                       version=version)
    assert resp.status_int == expect, resp.text
    return resp.json if resp.body else None


def add_hosts(env, count, **caps):
    for i in range(count):
        admin(env, 'POST', '/v1/os-hosts',
              dict(name='h%02d' % i, **caps), expect=201)


def host_lease(env, name, start, end, low=1, high=None, expect=201,
               **params):
    body = {'name': name, 'start_date': start, 'end_date': end,
            'events': [],
            'reservations': [dict(resource_type='physical:host', min=low,
                                  max=high or low, **params)]}
    resp = env.request('POST', '/v1/leases', body=body)
    if expect is not None:
        assert resp.status_int == expect, resp.text
    return resp.json.get('lease') or resp.json


def hosts_of(env, lease):
    res = lease['reservations'][0]['id']
    allocs = admin(env, 'GET', '/v1/os-hosts/allocations?reservation_id=' +
                   res)['allocations']
    # every host is listed (Blazar's shape), those it holds with it
    return sorted(a['resource_id'] for a in allocs if a['reservations'])


def wait_status(env, lease_id, status, timeout=10):
    import time
    deadline = time.monotonic() + timeout
    while True:
        lease = env.request('GET', '/v1/leases/' + lease_id).json['lease']
        if lease['status'] == status:
            return lease
        assert time.monotonic() < deadline, lease
        time.sleep(0.05)


def test_start_and_end_move_the_hosts_and_free_them(env):
    add_hosts(env, 3)
    soon = fixtures.iso(2)
    lease = host_lease(env, 'run', 'now', soon, low=2,
                       before_end='snapshot')
    res_id = lease['reservations'][0]['id']
    assert lease['reservations'][0]['resource_id'] == res_id
    wait_status(env, lease['id'], 'TERMINATED')
    kinds = [c[0] for c in env.backend.calls]
    assert kinds == ['start', 'snapshot', 'end'], env.backend.calls
    assert env.backend.calls[0] == ('start', res_id, 'project-a',
                                    ['h00', 'h01'])
    assert [a['reservations'] for a in admin(
        env, 'GET', '/v1/os-hosts/allocations')['allocations']] == [[]] * 3


def test_best_fit_fills_a_hole_before_an_empty_host(env):
    add_hosts(env, 2)
    # host 1 busy 00:00-01:00 and 03:00-04:00; host 2 never
    host_lease(env, 'a', '2090-01-01 00:00', '2090-01-01 01:00')
    first = host_lease(env, 'b', '2090-01-01 03:00', '2090-01-01 04:00')
    assert hosts_of(env, first) == ['1']
    hole = host_lease(env, 'c', '2090-01-01 01:00', '2090-01-01 03:00')
    assert hosts_of(env, hole) == ['1']


def test_pending_move_keeps_free_hosts_and_reallocates_others(env):
    add_hosts(env, 2)
    mover = host_lease(env, 'mover', '2090-01-01 00:00', '2090-01-01 02:00')
    assert hosts_of(env, mover) == ['1']
    blocker = host_lease(env, 'blocker', '2090-01-02 00:00',
                         '2090-01-02 02:00')
    assert hosts_of(env, blocker) == ['1']
    resp = env.request('PUT', '/v1/leases/' + mover['id'],
                       body={'start_date': '2090-01-02 01:00',
                             'end_date': '2090-01-02 03:00'})
    assert resp.status_int == 200, resp.text
    assert hosts_of(env, mover) == ['2']
    allocs = admin(env, 'GET', '/v1/os-hosts/2/allocation')['allocation']
    assert allocs['reservations'][0]['start_date'] == \
        '2090-01-02T01:00:00.000000'


def test_impossible_move_is_409_with_earliest_start_and_changes_nothing(env):
    add_hosts(env, 1)
    mover = host_lease(env, 'mover', '2090-01-01 00:00', '2090-01-01 02:00')
    host_lease(env, 'blocker', '2090-01-02 00:00', '2090-01-02 06:00')
    before = env.snapshot()
    resp = env.request('PUT', '/v1/leases/' + mover['id'],
                       body={'start_date': '2090-01-02 01:00',
                             'end_date': '2090-01-02 03:00'})
    assert resp.status_int == 409, resp.text
    assert 'from 2090-01-02 06:00:00 UTC' in resp.json['error_message']
    assert env.snapshot() == before


def test_growing_and_shrinking_a_pending_reservation(env):
    add_hosts(env, 3)
    lease = host_lease(env, 'grow', '2090-01-01 00:00', '2090-01-01 02:00')
    res_id = lease['reservations'][0]['id']
    resp = env.request('PUT', '/v1/leases/' + lease['id'], body={
        'reservations': [{'id': res_id, 'min': 3, 'max': 3}]})
    assert resp.status_int == 200, resp.text
    assert hosts_of(env, lease) == ['1', '2', '3']
    assert resp.json['lease']['reservations'][0]['min'] == 3
    resp = env.request('PUT', '/v1/leases/' + lease['id'], body={
        'reservations': [{'id': res_id, 'min': 1, 'max': 1}]})
    assert resp.status_int == 200, resp.text
    assert hosts_of(env, lease) == ['1']
    before = env.snapshot()
    resp = env.request('PUT', '/v1/leases/' + lease['id'], body={
        'reservations': [{'id': res_id, 'min': 4, 'max': 4}]})
    assert resp.status_int == 409
    assert '4 needed. Never 4: only 3 host(s) match and are usable.' in \
        resp.json['error_message']
    assert env.snapshot() == before


def test_active_extension_blocked_says_how_far_it_can_go(env):
    add_hosts(env, 1)
    lease = host_lease(env, 'active', 'now', '2090-01-01 00:00')
    wait_status(env, lease['id'], 'ACTIVE')
    host_lease(env, 'next', '2090-01-01 06:00', '2090-01-01 08:00')
    before = env.snapshot()
    resp = env.request('PUT', '/v1/leases/' + lease['id'],
                       body={'end_date': '2090-01-01 07:00'})
    assert resp.status_int == 409, resp.text
    assert 'it can end at 2090-01-01 06:00:00 UTC at the latest' in \
        resp.json['error_message']
    assert env.snapshot() == before
    resp = env.request('PUT', '/v1/leases/' + lease['id'],
                       body={'end_date': '2090-01-01 06:00'})
    assert resp.status_int == 200, resp.text


def test_active_reservation_grows_into_its_aggregate(env):
    add_hosts(env, 2)
    lease = host_lease(env, 'active', 'now', '2090-01-01 00:00')
    wait_status(env, lease['id'], 'ACTIVE')
    res_id = lease['reservations'][0]['id']
    resp = env.request('PUT', '/v1/leases/' + lease['id'], body={
        'reservations': [{'id': res_id, 'min': 2, 'max': 2}]})
    assert resp.status_int == 200, resp.text
    assert ('replace', res_id, [], ['h01']) in env.backend.calls
    resp = env.request('PUT', '/v1/leases/' + lease['id'], body={
        'reservations': [{'id': res_id, 'min': 1, 'max': 1}]})
    assert resp.status_int == 409
    assert 'cannot shrink' in resp.json['error_message']


def _lease(env, lease_id):
    return env.request('GET', '/v1/leases/' + lease_id).json['lease']


def test_healing_replaces_a_down_host_or_flags_the_lease(env):
    add_hosts(env, 3)
    plugin = env.plugin('physical:host')
    ctx = context.admin_context()
    active = host_lease(env, 'active', 'now', '2090-01-01 00:00')
    wait_status(env, active['id'], 'ACTIVE')
    future = host_lease(env, 'future', '2090-02-01 00:00',
                        '2090-02-02 00:00')
    assert hosts_of(env, active) == ['1'] and hosts_of(env, future) == ['1']
    res_active = active['reservations'][0]['id']

    env.backend.down = {'h00'}
    changed = plugin.heal(ctx)
    assert sorted(changed) == sorted([res_active,
                                      future['reservations'][0]['id']])
    assert hosts_of(env, active) == ['2']
    assert hosts_of(env, future) == ['2']
    assert ('replace', res_active, ['h00'], ['h01']) in env.backend.calls
    # the new host is held from the swap on, not from the lease's start
    held = admin(env, 'GET', '/v1/os-hosts/2/allocation?reservation_id=' +
                 res_active)['allocation']['reservations'][0]
    assert held['start_date'] >= _lease(env, active['id'])['start_date']
    assert held['end_date'] == '2090-01-01T00:00:00.000000'
    lease = _lease(env, active['id'])
    assert lease['reservations'][0]['resources_changed'] is True
    assert lease['degraded'] is False
    assert admin(env, 'GET', '/v1/os-hosts/1')['host']['reservable'] is False

    # no spare left: the lease is flagged, and cleared once the host is up
    env.backend.down = {'h00', 'h01', 'h02'}
    plugin.heal(ctx)
    lease = _lease(env, active['id'])
    assert lease['reservations'][0]['missing_resources'] is True
    assert lease['degraded'] is True
    env.backend.down = set()
    plugin.heal(ctx)
    lease = _lease(env, active['id'])
    assert lease['reservations'][0]['missing_resources'] is False
    assert lease['degraded'] is False
    assert admin(env, 'GET', '/v1/os-hosts/1')['host']['reservable'] is True


def test_healing_replaces_a_held_leases_down_host(env):
    add_hosts(env, 2)
    plugin = env.plugin('physical:host')
    resp = env.request('POST', '/v1/leases', version='1.14', body={
        'name': 'held', 'start_date': '2090-02-01 00:00',
        'end_date': '2090-02-02 00:00', 'events': [], 'hold_for': 600,
        'reservations': [{'resource_type': 'physical:host', 'min': 1,
                          'max': 1}]})
    assert resp.status_int == 201, resp.text
    held = resp.json['lease']
    assert hosts_of(env, held) == ['1']
    env.backend.down = {'h00'}
    assert plugin.heal(context.admin_context()) == [
        held['reservations'][0]['id']]
    # its confirm keeps what it holds: the healed host
    assert hosts_of(env, held) == ['2']


def test_a_host_that_does_not_wake_in_time_is_healed_as_down(
        env, monkeypatch):
    from oslo_config import cfg
    from climate.db import power as db_power
    conf = cfg.CONF
    add_hosts(env, 2)
    plugin = env.plugin('physical:host')
    ctx = context.admin_context()
    # the planner would act on the states this test writes: not in it
    monkeypatch.setattr(env.manager.power_planner, 'run_once', lambda: None)
    assert plugin.heal_interval == 0  # static inventory, planner off
    conf.set_override('enabled', True, 'power')
    try:
        assert plugin.heal_interval == conf.hosts.healing_interval
        active = host_lease(env, 'woken', 'now', '2090-01-01 00:00')
        wait_status(env, active['id'], 'ACTIVE')
        assert hosts_of(env, active) == ['1']
        started = dates.utcnow()
        grace = datetime.timedelta(seconds=conf.power.wake_grace)
        # woken for the lease's start, still not up within the grace
        db_power.set_state(ctx, 1, db_power.WAKING,
                           started - datetime.timedelta(minutes=1),
                           need_at=started)
        assert plugin.heal(ctx) == []
        db_power.set_state(ctx, 1, db_power.WAKING,
                           started - grace - datetime.timedelta(minutes=2),
                           need_at=started - grace - datetime.timedelta(
                               minutes=1))
        res_id = active['reservations'][0]['id']
        assert plugin.heal(ctx) == [res_id]
        assert hosts_of(env, active) == ['2']
        assert ('replace', res_id, ['h00'], ['h01']) in env.backend.calls
        assert admin(env, 'GET', '/v1/os-hosts/1')['host'][
            'reservable'] is False
        # up at last: reservable again, its lease kept on the spare
        db_power.set_state(ctx, 1, db_power.ON, dates.utcnow(),
                           boot_seconds=900)
        plugin.heal(ctx)
        assert admin(env, 'GET', '/v1/os-hosts/1')['host'][
            'reservable'] is True
        assert hosts_of(env, active) == ['2']
        # without the planner, a waking record is nobody's to heal
        db_power.set_state(ctx, 2, db_power.WAKING, started - 2 * grace,
                           need_at=started - 2 * grace)
        conf.clear_override('enabled', 'power')
        assert plugin.heal(ctx) == []
        assert hosts_of(env, active) == ['2']
    finally:
        conf.clear_override('enabled', 'power')


def test_a_start_waits_for_its_sleeping_host_and_says_so(env, monkeypatch):
    from oslo_config import cfg
    from climate.db import power as db_power
    from climate.plugins import values as plugin_values
    conf = cfg.CONF
    add_hosts(env, 1)
    plugin = env.plugin('physical:host')
    ctx = context.admin_context()
    monkeypatch.setattr(env.manager.power_planner, 'run_once', lambda: None)
    db_power.set_state(ctx, 1, db_power.OFF,
                       dates.utcnow() - datetime.timedelta(hours=3))
    conf.set_override('enabled', True, 'power')
    try:
        lease = host_lease(env, 'sleepy', 'now', '2090-01-01 00:00')
        deadline = time.monotonic() + 10
        while not (_lease(env, lease['id'])['status_reason'] or
                   '').startswith('start waits for'):
            assert time.monotonic() < deadline, _lease(env, lease['id'])
            time.sleep(0.05)
        waiting = _lease(env, lease['id'])
        assert waiting['status'] == 'STARTING'
        assert waiting['status_reason'].startswith(
            'start waits for host(s) h00 (off) to boot; waited '), waiting
        assert [c[0] for c in env.backend.calls] == []  # not handed over
        # a change meanwhile: refused, saying why
        resp = env.request('PUT', '/v1/leases/' + lease['id'],
                           body={'name': 'renamed'})
        assert resp.status_int == 409, resp.text
        assert 'its start waits for host(s) h00 (off) to boot' in \
            resp.json['error_message'], resp.text
        # the planner's wake under way, then the host up
        db_power.set_state(ctx, 1, db_power.WAKING, dates.utcnow(),
                           need_at=dates.utcnow())
        db_power.set_state(ctx, 1, db_power.ON, dates.utcnow(),
                           boot_seconds=60)
        started = wait_status(env, lease['id'], 'ACTIVE', timeout=20)
        reason = started['status_reason']
        assert reason.startswith('started ') and any(reason.endswith(
            'after its start date, once its resources were ready (host(s) '
            'h00 (%s) to boot)' % state) for state in ('off', 'waking')), \
            started
        assert [c[0] for c in env.backend.calls] == ['start']
        # never past the grace: by then healing has done what it can
        value = plugin_values.Lease.from_view(started)
        res = plugin_values.Reservation.from_view(started['reservations'][0])
        db_power.set_state(ctx, 1, db_power.OFF, dates.utcnow())
        soon = value.start_date + datetime.timedelta(seconds=10)
        assert plugin.start_waits_for(ctx, value, res, soon) == \
            'host(s) h00 (off) to boot'
        late = value.start_date + datetime.timedelta(
            seconds=conf.power.wake_grace)
        assert plugin.start_waits_for(ctx, value, res, late) is None
        # many hosts asleep: a few named, the rest counted
        monkeypatch.setattr(db_power, 'asleep', lambda _ctx, ids: {
            i: db_power.WAKING for i in range(1, 9)})
        assert plugin.start_waits_for(ctx, value, res, soon) == (
            'host(s) h00 (waking), 2 (waking), 3 (waking), 4 (waking), '
            '5 (waking) and 3 more to boot')
    finally:
        conf.clear_override('enabled', 'power')


def test_a_lease_starting_now_takes_a_host_that_is_on(env, monkeypatch):
    from oslo_config import cfg
    from climate.db import power as db_power
    conf = cfg.CONF
    add_hosts(env, 3)
    ctx = context.admin_context()
    monkeypatch.setattr(env.manager.power_planner, 'run_once', lambda: None)
    # without the planner the fit rule alone: the lowest id of equals
    first = host_lease(env, 'plain', '2090-01-01 00:00', '2090-01-02 00:00')
    assert hosts_of(env, first) == ['1']
    later = dates.utcnow() - datetime.timedelta(hours=1)
    db_power.set_state(ctx, 1, db_power.OFF, later)
    db_power.set_state(ctx, 2, db_power.WAKING, later, need_at=later)
    conf.set_override('enabled', True, 'power')
    try:
        now = host_lease(env, 'now', 'now', '2090-01-01 00:00')
        assert hosts_of(env, now) == ['3']
        wait_status(env, now['id'], 'ACTIVE')
        # the asleep ones when no other is free, best fit first
        more = host_lease(env, 'more', 'now', '2090-01-01 00:00')
        assert hosts_of(env, more) == ['1']
        # far enough ahead to wake one: the fit rule alone
        ahead = host_lease(env, 'ahead', '2090-02-01 00:00',
                           '2090-02-02 00:00')
        assert hosts_of(env, ahead) == ['1']
    finally:
        conf.clear_override('enabled', 'power')


def _overlaps():
    """(host bookings, pairs of them overlapping on one host)."""
    ctx = context.admin_context()
    with db_api.reader(ctx) as session:
        rows = session.query(models.LedgerBooking).filter_by(
            resource_class='HOST').all()
    bad = []
    for a in rows:
        for b in rows:
            if a.id < b.id and a.provider_id == b.provider_id and \
                    a.start_date < b.end_date and b.start_date < a.end_date:
                bad.append((a.id, b.id))
    return len(rows), bad


def test_concurrent_creates_never_double_book(env):
    add_hosts(env, 3)
    base = dates.utcnow().replace(microsecond=0) + datetime.timedelta(
        days=400)

    def create(i):
        start = base + datetime.timedelta(hours=i % 7)
        body = {'name': 'c%03d' % i, 'events': [],
                'start_date': start.isoformat(),
                'end_date': (start + datetime.timedelta(hours=3)).isoformat(),
                'reservations': [{'resource_type': 'physical:host',
                                  'min': 1, 'max': 2}]}
        return env.request('POST', '/v1/leases', body=body).status_int

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(create, range(60)))
    assert set(codes) <= {201, 409}, codes
    count, bad = _overlaps()
    assert codes.count(201) > 0 and count > 0
    assert bad == []


def test_sql_ranking_is_the_choice_rule(env, monkeypatch):
    """db.hosts.free_candidates ranks as scheduling.hosts.choose does."""
    import random

    from climate.db import hosts as db_hosts
    from climate.scheduling import hosts as sched

    monkeypatch.setattr(db_hosts, 'NEAR_BATCH', 2)
    add_hosts(env, 8)
    rng = random.Random(3)
    for i in range(30):
        start = datetime.datetime(2090, 1, 1) + datetime.timedelta(
            hours=rng.randint(0, 200))
        host_lease(env, 'r%02d' % i, start.isoformat(),
                   (start + datetime.timedelta(
                       hours=rng.randint(1, 30))).isoformat(),
                   expect=None)
    ctx = context.admin_context()
    where = db_hosts.host_filter(ctx, None, None)
    ids = db_hosts.matching_host_ids(ctx, where)
    for probe in range(20):
        start = datetime.datetime(2090, 1, 1) + datetime.timedelta(
            hours=rng.randint(0, 220))
        end = start + datetime.timedelta(hours=rng.randint(1, 10))
        horizon = datetime.timedelta(hours=rng.choice([5, 24, 400]))
        rows, free = db_hosts.free_candidates(ctx, ids, start, end, 100,
                                              horizon)
        busy = db_hosts.busy_intervals(ctx, ids, datetime.datetime(2000, 1,
                                                                   1))
        candidates = []
        for host in ids:
            spans = busy.get(host, [])
            if any(s < end and e > start for s, e in spans):
                continue
            before = [e for s, e in spans if e <= start]
            after = [s for s, e in spans if s >= end]
            candidates.append(sched.Candidate(
                host, max(before) if before else None,
                min(after) if after else None))
        assert [r[0] for r in rows] == sched.choose(
            candidates, start, end, 100, horizon), (start, end)
        # fewer wanted: the best of them, the near hosts checked for a
        # booking over the window a batch at a time (of 2 here)
        for limit in (1, 2, 3):
            few, count = db_hosts.free_candidates(ctx, ids, start, end,
                                                  limit, horizon)
            assert [r[0] for r in few] == sched.choose(
                candidates, start, end, limit, horizon), (start, limit)
            assert count >= min(limit, len(candidates))
        assert free == len(candidates)
        # hosts free far around the window come last, by id
        far = [r[0] for r in rows if r[1] is None and r[2] is None]
        assert far == sorted(far)


def test_filter_cache_follows_inventory_changes(env):
    admin(env, 'POST', '/v1/os-hosts', {'name': 'a', 'gpu': 'True'},
          expect=201)
    admin(env, 'POST', '/v1/os-hosts', {'name': 'b', 'gpu': 'False'},
          expect=201)
    gpu = '["=", "$gpu", "True"]'
    first = host_lease(env, 'one', '2090-01-01 00:00', '2090-01-02 00:00',
                       resource_properties=gpu)
    assert hosts_of(env, first) == ['1']
    host_lease(env, 'two', '2090-01-01 00:00', '2090-01-02 00:00',
               resource_properties=gpu, expect=409)
    admin(env, 'PUT', '/v1/os-hosts/2', {'gpu': 'True'})
    second = host_lease(env, 'two', '2090-01-01 00:00', '2090-01-02 00:00',
                        resource_properties=gpu)
    assert hosts_of(env, second) == ['2']
    # a host going down leaves the matching set at once
    env.backend.down = {'a'}
    env.plugin('physical:host').heal(context.admin_context())
    resp = env.request('POST', '/v1/os-hosts/availability', version='1.2',
                       body={'duration': '1h', 'resource_properties': gpu})
    assert resp.json['availability']['matching_hosts'] == 1


def test_inventory_counter_row_lost_is_written_again(env):
    """Hosts added after the counter's row vanished are still seen: the
    managers' cache of the inventory is keyed on that counter."""
    from climate import context
    from climate.db import api as db_api
    from climate.db import hosts as db_hosts
    from climate.db import models

    start, end = fixtures.iso(3600), fixtures.iso(7200)
    gpu = '["=", "$gpu", "true"]'
    add_hosts(env, 1, gpu='true')
    host_lease(env, 'a', start, end, resource_properties=gpu)
    ctx = context.admin_context()
    with db_api.writer(ctx) as session:
        session.query(models.HostInventoryVersion).delete()
    for name in ('late', 'later'):
        admin(env, 'POST', '/v1/os-hosts', {'name': name, 'gpu': 'true'},
              expect=201)
        # each change counts, so each is seen by the next create
        lease = host_lease(env, 'for-' + name, start, end,
                           resource_properties=gpu)
        assert len(hosts_of(env, lease)) == 1
    assert db_hosts.inventory_version(ctx) > 2
