"""Best-effort leases (``climate.manager.workers.hunts``) on the
in-process env: the static inventory's hosts with a fake cloud side
standing in for Nova (what the harness's integration tests run for
real)."""

import datetime
import time

import pytest

from climate import context as climate_context
from climate.db import api as db_api
from climate.db import hosts as db_hosts
from climate.db import work_locks
from climate.manager.workers import hunts
from climate.plugins.physical_host import evacuation
from climate.scheduling import evacuation as planner
from climate import states
from climate.tests import fixtures
from climate.tests.unit.manager import test_lease_types as types
from climate.tests.unit.plugins import test_physical_host as hosts

V = '1.11'


class FakeCloud:
    """The cloud side of a hunt: hosts outside the inventory and their
    servers; a run moves them (or fails, or takes too long)."""

    def __init__(self, outside):
        #: {host: [server ids]} of the hosts outside the inventory
        self.outside = {name: list(servers)
                        for name, servers in outside.items()}
        self.closed = set()
        self.calls = []
        self.run_delay = 0
        self.fail = False

    def plan(self, project_id, count, registered):
        self.calls.append(('plan', count, sorted(registered)))
        cands = [{'name': name, 'servers': [
            {'id': s, 'project_id': 'other', 'status': 'ACTIVE',
             'vcpus': 1, 'memory_mb': 512, 'disk_gb': 1} for s in servers]}
            for name, servers in sorted(self.outside.items())
            if name not in registered]
        room = {'receiver': {'vcpus': 8, 'memory_mb': 4096, 'disk_gb': 40}}
        return planner.plan(cands, room, count, project_id)

    def close(self, names, reason):
        self.calls.append(('close', sorted(names)))
        self.closed |= set(names)

    def reopen(self, names):
        self.calls.append(('reopen', sorted(names)))
        self.closed -= set(names)

    def run(self, plan, timeout):
        self.calls.append(('run', list(plan.hosts)))
        if self.run_delay:
            time.sleep(min(self.run_delay, timeout))
        if self.fail or self.run_delay >= timeout:
            return evacuation.Outcome([], [], {}, [], {
                h: self.outside[h] for h in plan.hosts}, True)
        for host in plan.hosts:
            self.outside[host] = []
        return evacuation.Outcome(list(plan.hosts), [m.server for m in
                                                     plan.moves], {}, [],
                                  {}, False)


@pytest.fixture
def env(monkeypatch):
    with fixtures.ClimateEnvironment(overrides=[
            ('best_effort_timeout', 'leases', 30),
            ('hunt_poll_interval', 'leases', 1)]) as environment:
        plugin = environment.plugin('physical:host')
        plugin._backend = hosts.RecordingBackend(None)
        environment.backend = plugin._backend
        cloud = FakeCloud({'c1': ['s1'], 'c2': ['s2', 's3'], 'c3': []})
        hunter = environment.manager.hunter
        hunter._layer = cloud
        monkeypatch.setattr(hunts.Hunter, 'active', staticmethod(
            lambda: True))
        environment.cloud = cloud
        yield environment


def create(env, count, expect=201, **params):
    body = types.body('be', count, lease_type='best_effort')
    body['reservations'][0].update(params)
    resp = env.request('POST', '/v1/leases', body=body, version=V)
    assert resp.status_int == expect, resp.text
    return resp.json.get('lease') or resp.json


def hostnames(env, lease):
    names = {h['id']: h['hypervisor_hostname'] for h in
             hosts.admin(env, 'GET', '/v1/os-hosts')['hosts']}
    return sorted(names[h] for h in hosts.hosts_of(env, lease))


def test_fits_is_immediate(env):
    hosts.add_hosts(env, 2)
    lease = create(env, 2)
    assert lease['status'] == states.STARTING
    assert not [c for c in env.cloud.calls if c[0] == 'plan']
    types.wait(env, lease['id'], states.ACTIVE)


def test_hunt_frees_hosts_then_active(env):
    hosts.add_hosts(env, 1)  # h00 free, one more needed
    lease = create(env, 2)
    assert lease['status'] == states.HUNTING
    assert 'freeing 1 host(s) (c3)' in lease['status_reason']
    lease = types.wait(env, lease['id'], states.ACTIVE)
    assert hostnames(env, lease) == ['c3', 'h00']
    assert ('reopen', ['c3']) in env.cloud.calls
    assert not env.cloud.closed
    # the borrowed host leaves the inventory with the lease
    env.request('DELETE', '/v1/leases/' + lease['id'])
    names = [h['hypervisor_hostname'] for h in
             hosts.admin(env, 'GET', '/v1/os-hosts')['hosts']]
    assert names == ['h00']


def test_hunt_with_migrations(env):
    lease = create(env, 2)
    assert lease['status'] == states.HUNTING
    lease = types.wait(env, lease['id'], states.ACTIVE)
    # the empty host and the one with fewer servers
    assert hostnames(env, lease) == ['c1', 'c3']
    assert env.cloud.outside['c1'] == []


def test_refusal_writes_nothing(env):
    hosts.add_hosts(env, 1)
    before = env.snapshot()
    resp = create(env, 5, expect=409)
    message = resp['error_message']
    assert message.startswith('Not enough hosts available: 1 host(s) match')
    assert 'Best effort: no 4 host(s) outside the inventory can be freed' \
        in message
    assert env.snapshot() == before
    assert not [c for c in env.cloud.calls if c[0] in ('close', 'run')]


def test_filters_are_refused(env):
    resp = create(env, 1, expect=400,
                  hypervisor_properties='["=", "$memory_mb", "4096"]')
    assert 'best_effort takes no hypervisor_properties' in \
        resp['error_message']


def test_timeout_gives_everything_back(env):
    hosts.add_hosts(env, 1)
    env.cloud.fail = True
    lease = create(env, 2)
    ctx = climate_context.admin_context()
    # the deadline passes while servers stay
    with db_api.writer(ctx):
        row = db_api.lease_get(ctx, lease['id'], for_update=True)
        row.hunt = dict(row.hunt, deadline=(
            datetime.datetime.utcnow() - datetime.timedelta(seconds=1)
        ).isoformat())
    env.manager.hunts.wake()
    lease = types.wait(env, lease['id'], states.TIMEDOUT)
    assert 'best effort' in lease['status_reason']
    assert ('reopen', ['c3']) in env.cloud.calls
    assert not env.cloud.closed
    # the free host it had booked is released
    assert hosts.hosts_of(env, lease) == []
    # a lease waiting for its hunt is busy; a timed-out one is deleted
    resp = env.request('DELETE', '/v1/leases/' + lease['id'])
    assert resp.status_int == 204, resp.text


def test_hunting_lease_is_busy(env):
    env.cloud.run_delay = 2
    lease = create(env, 1)
    resp = env.request('DELETE', '/v1/leases/' + lease['id'])
    assert resp.status_int == 409, resp.text
    types.wait(env, lease['id'], states.ACTIVE)


def test_a_restarted_manager_takes_the_hunt_over(env):
    """The hunt is on the lease: a pass of any manager (here a fresh
    worker, as after a restart) finishes it."""
    env.manager.hunts.stop()
    lease = create(env, 1)
    assert lease['status'] == states.HUNTING
    time.sleep(0.5)
    assert types.get(env, lease['id'])['status'] == states.HUNTING
    worker = hunts.HuntWorker(env.manager.leases, env.manager.hunter)
    done = worker.run_pass(climate_context.admin_context())
    assert done == {lease['id']: states.STARTING}
    types.wait(env, lease['id'], states.ACTIVE)


def test_a_pass_after_registering_takes_the_hosts_it_registered(env):
    """A manager that died between registering the freed hosts and
    booking them: the next pass books the hosts it finds borrowed."""
    env.manager.hunts.stop()
    lease = create(env, 1)
    hunter = env.manager.hunter
    ctx = climate_context.admin_context()
    row = db_api.lease_get(ctx, lease['id'])
    # as if the first pass stopped right after registering c3
    hunter._register(ctx, lease['id'], dict(row.hunt), ['c3'])
    worker = hunts.HuntWorker(env.manager.leases, hunter)
    assert worker.run_pass(ctx) == {lease['id']: states.STARTING}
    lease = types.wait(env, lease['id'], states.ACTIVE)
    assert hostnames(env, lease) == ['c3']


def test_a_pass_does_not_wait_for_another_managers_hunt(env):
    """The hunt lock held elsewhere (a manager freeing hosts, for
    minutes): a pass returns at once and leaves the lease to it."""
    env.manager.hunts.stop()
    lease = create(env, 1)
    worker = hunts.HuntWorker(env.manager.leases, env.manager.hunter)
    ctx = climate_context.admin_context()
    with work_locks.work_lock(hunts.LOCK_NAME) as held:
        assert held
        began = time.monotonic()
        assert worker.run_pass(ctx) == {}
        # the lock is held until this block ends: a pass that waited for
        # it would never return, or only after the lock's TTL
        assert time.monotonic() - began < 30
    assert types.get(env, lease['id'])['status'] == states.HUNTING
    assert worker.run_pass(ctx) == {lease['id']: states.STARTING}


def test_a_freed_host_marked_down_is_not_counted_free(env):
    """A registered host the healing pass marked down (as it once read
    every disabled compute service, the hunt's own closed ones too): the
    pass cannot book it and says why with the choice's own count, never
    "1 free, 1 needed"; the reason shows the pass; once the host is up
    again the next pass books it."""
    env.manager.hunts.stop()
    lease = create(env, 1)
    hunter = env.manager.hunter
    ctx = climate_context.admin_context()
    row = db_api.lease_get(ctx, lease['id'])
    [host_id] = hunter._register(ctx, lease['id'], dict(row.hunt), ['c3'])
    db_hosts.host_set_reservable(ctx, [host_id], False)
    worker = hunts.HuntWorker(env.manager.leases, hunter)
    assert worker.run_pass(ctx) == {lease['id']: states.HUNTING}
    reason = types.get(env, lease['id'])['status_reason']
    assert reason.startswith('freeing 1 host(s) (c3)'), reason
    assert hunts.LAST_PASS in reason, reason
    assert '1 host(s) match the filters and 0 of them are free' in reason, \
        reason
    assert '1 of them are down, disabled or not reservable' in reason
    db_hosts.host_set_reservable(ctx, [host_id], True)
    assert worker.run_pass(ctx) == {lease['id']: states.STARTING}
    lease = types.wait(env, lease['id'], states.ACTIVE)
    assert hostnames(env, lease) == ['c3']
    assert hunts.LAST_PASS not in (lease['status_reason'] or '')
