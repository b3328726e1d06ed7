"""Nova's side of an evacuation against an in-memory Nova and Placement.

``FakeNova`` answers like Nova does for what the module uses: servers with
their embedded flavor, live migrations that take a few looks to finish (or
fail, leave the server in ERROR, or hang, on demand), migration records,
compute services and hypervisors.  The real Nova (fake driver) runs in
``climate/tests/integration/test_evacuation.py``.
"""

import threading
import types

from novaclient import exceptions as nova_exc
import pytest

from climate import exceptions
from climate.clients import placement as placement_clients
from climate.plugins.physical_host import evacuation as evac
from climate.scheduling import evacuation as planner

TINY = {'vcpus': 1, 'ram': 512, 'disk': 1, 'ephemeral': 0, 'swap': 0}


def make_server(sid, host, project='other', flavor=TINY, image='img',
                status='ACTIVE'):
    server = types.SimpleNamespace(id=sid, tenant_id=project, status=status,
                                   flavor=dict(flavor), image=image)
    setattr(server, evac.HOST, host)
    setattr(server, evac.TASK_STATE, None)
    return server


class FakeServers:
    def __init__(self, nova):
        self.nova = nova
        self.by_id = {}
        self.moving = {}  # id -> [looks left, target, outcome]

    def add(self, server):
        self.by_id[server.id] = server
        return server

    def _copy(self, server):
        return types.SimpleNamespace(**vars(server))

    def list(self, search_opts=None, limit=None):
        self.nova.call('servers.list')
        assert search_opts['all_tenants'] and limit == -1
        return [self._copy(s) for s in self.by_id.values()
                if getattr(s, evac.HOST) == search_opts['host']]

    def get(self, server_id):
        self.nova.call('servers.get')
        if server_id not in self.by_id:
            raise nova_exc.NotFound(404)
        self._advance(server_id)
        return self._copy(self.by_id[server_id])

    def _advance(self, server_id):
        state = self.moving.get(server_id)
        if state is None:
            return
        state[0] -= 1
        if state[0] > 0:
            return
        looks, target, outcome = self.moving.pop(server_id)
        server = self.by_id[server_id]
        if outcome == 'hang':
            self.moving[server_id] = [10 ** 9, target, outcome]
            return
        server.status = 'ERROR' if outcome == 'error' else 'ACTIVE'
        setattr(server, evac.TASK_STATE, None)
        migration = [m for m in self.nova.migrations.records
                     if m.instance_uuid == server_id][-1]
        if outcome == 'ok':
            setattr(server, evac.HOST, target)
            migration.status = 'completed'
        else:
            migration.status = 'error'

    def live_migrate(self, server_id, host, block_migration, force=None):
        self.nova.call('servers.live_migrate')
        assert block_migration == 'auto' and force is False
        server = self.by_id.get(server_id)
        if server is None:
            raise nova_exc.NotFound(404)
        if host not in self.nova.computes:
            raise nova_exc.BadRequest(400, 'Compute host %s could not be '
                                      'found.' % host)
        if getattr(server, evac.TASK_STATE) is not None:
            raise nova_exc.Conflict(409)
        barrier = self.nova.together
        if barrier is not None:
            # the moves meant to run at once: each waits for the others
            # (serial moves would break the barrier after its timeout)
            barrier.wait()
            self.nova.together = None
        server.status = 'MIGRATING'
        setattr(server, evac.TASK_STATE, 'migrating')
        outcome = self.nova.outcomes.pop(server_id, 'ok')
        self.moving[server_id] = [self.nova.looks, host, outcome]
        self.nova.migrations.records.append(types.SimpleNamespace(
            id=len(self.nova.migrations.records) + 1, instance_uuid=server_id,
            status='running'))


class FakeMigrations:
    def __init__(self):
        self.records = []

    def list(self, instance_uuid=None, migration_type=None):
        assert migration_type == 'live-migration'
        return [m for m in self.records if m.instance_uuid == instance_uuid]


class FakeNova:
    def __init__(self, computes):
        self.computes = list(computes)
        self.servers = FakeServers(self)
        self.migrations = FakeMigrations()
        self.services = types.SimpleNamespace(list=self._services)
        self.hypervisors = types.SimpleNamespace(list=self._hypervisors)
        self.state = {h: ('up', 'enabled') for h in computes}
        self.outcomes = {}  # server id -> ok | fail | error | hang
        self.looks = 2  # gets until a migration is over
        self.fail = {}
        self.calls = []
        self.together = None  # a threading.Barrier of the next moves

    def call(self, name):
        self.calls.append(name)
        exc = self.fail.get(name)
        if exc is not None:
            raise exc

    def _services(self, binary=None):
        assert binary == 'nova-compute'
        self.call('services.list')
        return [types.SimpleNamespace(host=h, state=s[0], status=s[1])
                for h, s in self.state.items()]

    def _hypervisors(self, detailed=False):
        self.call('hypervisors.list')
        return [types.SimpleNamespace(
            hypervisor_hostname=h + '.node', service={'host': h},
            state=s[0], status=s[1]) for h, s in self.state.items()]

    def place(self, host, *sids, **kwargs):
        return [self.servers.add(make_server(sid, host, **kwargs))
                for sid in sids]


class FakePlacement:
    def __init__(self):
        self.providers = {}  # name -> (inventories, usages)
        self.fail = None

    def provider_by_name(self, name):
        if self.fail is not None:
            raise self.fail
        return {'uuid': 'u-' + name} if name in self.providers else None

    def inventories(self, uuid):
        return 1, self.providers[uuid[2:]][0]

    def usages(self, uuid):
        return self.providers[uuid[2:]][1]


def inventory(vcpus=8, memory_mb=8192, disk_gb=100, ratio=1.0, reserved=0):
    return {'VCPU': {'total': vcpus, 'reserved': 0,
                     'allocation_ratio': ratio},
            'MEMORY_MB': {'total': memory_mb, 'reserved': reserved,
                          'allocation_ratio': 1.0},
            'DISK_GB': {'total': disk_gb, 'reserved': 0,
                        'allocation_ratio': 1.0}}


HOSTS = ['c1', 'c2', 'c3', 'c4']


@pytest.fixture
def nova(monkeypatch):
    monkeypatch.setattr(evac, 'POLL_INTERVAL', 0)
    return FakeNova(HOSTS)


# -- reading ------------------------------------------------------------------

def test_server_facts_take_the_flavor_as_placement_counts_it():
    facts = evac.server_facts(make_server('s', 'c1', flavor={
        'vcpus': 2, 'ram': 2048, 'disk': 20, 'ephemeral': 5, 'swap': 1500}))
    assert facts == {'id': 's', 'project_id': 'other', 'status': 'ACTIVE',
                     'task_state': None, 'vcpus': 2, 'memory_mb': 2048,
                     'disk_gb': 27}  # 20 + 5 + 1500 MB rounded up
    # booted from a volume: no image, no local root disk
    assert evac.server_facts(make_server('s', 'c1', image='', flavor={
        'vcpus': 1, 'ram': 1, 'disk': 20}))['disk_gb'] == 0
    # an old microversion (flavor without its size): unknown, not eligible
    unknown = evac.server_facts(make_server('s', 'c1', flavor={'id': '1'}))
    assert unknown['memory_mb'] is None and unknown['disk_gb'] is None
    assert 'unknown' in planner.ineligible_reason(
        {'name': 'c1', 'servers': [unknown]}, 'me')


def test_candidates_list_every_project_and_the_service(nova):
    nova.place('c1', 'a', 'b')
    nova.place('c2', 'c', project='me')
    nova.state['c2'] = ('down', 'enabled')
    nova.state['c3'] = ('up', 'disabled')
    found = evac.candidates(nova, ['c1', 'c2', 'c3', 'ghost'], workers=3)
    assert [c['name'] for c in found] == ['c1', 'c2', 'c3', 'ghost']
    assert [s['id'] for s in found[0]['servers']] == ['a', 'b']
    assert found[0]['servers'][0]['memory_mb'] == 512
    assert [c['up'] for c in found] == [True, False, True, False]
    assert nova.calls.count('services.list') == 1


def test_reading_errors_are_cloud_unavailable(nova):
    nova.fail['servers.list'] = nova_exc.ClientException(500)
    with pytest.raises(exceptions.CloudUnavailable) as err:
        evac.candidates(nova, ['c1'])
    assert 'listing servers on c1' in str(err.value)


def test_free_capacity_is_usable_minus_used():
    free = evac.free_capacity(
        inventory(vcpus=8, memory_mb=8192, ratio=4.0, reserved=512),
        {'VCPU': 30, 'MEMORY_MB': 1024, 'DISK_GB': 200})
    assert free == {'vcpus': 2, 'memory_mb': 6656, 'disk_gb': 0}
    assert evac.free_capacity({}, {}) == {'vcpus': 0, 'memory_mb': 0,
                                          'disk_gb': 0}


def test_receivers_are_the_up_enabled_hosts_not_excluded(nova):
    placement = FakePlacement()
    for h in HOSTS:
        placement.providers[h + '.node'] = (inventory(), {'VCPU': 1})
    nova.state['c3'] = ('up', 'disabled')
    del placement.providers['c4.node']  # not reported yet: no room
    free = evac.receivers(nova, placement, exclude=['c1'], workers=2)
    assert free == {'c2': {'vcpus': 7, 'memory_mb': 8192, 'disk_gb': 100},
                    'c4': {'vcpus': 0, 'memory_mb': 0, 'disk_gb': 0}}
    placement.fail = placement_clients.PlacementError('x', 503)
    with pytest.raises(exceptions.CloudUnavailable) as err:
        evac.receivers(nova, placement)
    assert err.value.kwargs['service'] == 'Placement'


# -- one live migration -------------------------------------------------------

def test_live_migrate_waits_until_active_on_the_target(nova):
    nova.place('c1', 'a')
    server = evac.live_migrate(nova, 'a', 'c2')
    assert getattr(server, evac.HOST) == 'c2' and server.status == 'ACTIVE'
    assert nova.calls.count('servers.live_migrate') == 1
    # a retried move of a server already there asks nothing
    evac.live_migrate(nova, 'a', 'c2')
    assert nova.calls.count('servers.live_migrate') == 1


@pytest.mark.parametrize('outcome,reason', [
    ('fail', 'migration error, the server is on c1'),
    ('error', 'the server is in ERROR'),
])
def test_live_migrate_reports_a_failed_migration(nova, outcome, reason):
    nova.place('c1', 'a')
    nova.outcomes['a'] = outcome
    with pytest.raises(evac.MigrationFailed) as err:
        evac.live_migrate(nova, 'a', 'c2')
    assert err.value.reason == reason
    assert err.value.server_id == 'a' and err.value.target == 'c2'


def test_live_migrate_reports_a_refusal_and_a_timeout(nova):
    nova.place('c1', 'a')
    with pytest.raises(evac.MigrationFailed) as err:
        evac.live_migrate(nova, 'a', 'nowhere')
    assert 'Nova refused' in err.value.reason and 'nowhere' in err.value.reason
    nova.outcomes['a'] = 'hang'
    with pytest.raises(evac.MigrationFailed) as err:
        evac.live_migrate(nova, 'a', 'c2', timeout=0.05)
    assert err.value.reason == 'not done after 0 s (migrating)'


def test_a_server_deleted_meanwhile_is_not_a_failure(nova):
    assert evac.live_migrate(nova, 'gone', 'c2') is None


# -- a plan -------------------------------------------------------------------

def plan_for(nova, names, count, parallel=10):
    found = evac.candidates(nova, names)
    room = {h: {'vcpus': 64, 'memory_mb': 65536, 'disk_gb': 1000}
            for h in HOSTS if h not in names}
    return planner.plan(found, room, count, 'me', parallel=parallel)


def test_run_plan_frees_the_hosts(nova):
    nova.place('c1', 'a', 'b')
    nova.place('c2', 'c')
    plan = plan_for(nova, ['c1', 'c2'], 2, parallel=2)
    # c2 first (fewer servers), one move per source host and wave
    assert [[m.server for m in w] for w in plan.waves] == [['c', 'a'], ['b']]
    nova.together = threading.Barrier(2, timeout=5)  # a wave's moves at once
    outcome = evac.run_plan(nova, plan, timeout=30)
    assert outcome.freed == ['c2', 'c1'] and outcome.complete
    assert sorted(outcome.moved) == ['a', 'b', 'c']
    assert not outcome.failed and not outcome.skipped
    assert not outcome.timed_out
    for sid in 'abc':
        assert getattr(nova.servers.by_id[sid], evac.HOST) in ('c3', 'c4')


def test_a_failed_move_stops_its_host_only(nova):
    nova.place('c1', 'a1', 'a2', 'a3')
    nova.place('c2', 'b1', 'b2', 'b3', flavor=dict(TINY, ram=1024))
    nova.outcomes['a1'] = 'fail'
    plan = plan_for(nova, ['c1', 'c2'], 2)
    outcome = evac.run_plan(nova, plan, timeout=30)
    assert outcome.freed == ['c2']
    assert set(outcome.failed) == {'a1'}
    assert sorted(outcome.skipped) == ['a2', 'a3']
    assert outcome.leftovers == {'c1': ['a1', 'a2', 'a3']}
    assert not outcome.complete and not outcome.timed_out


def test_the_deadline_stops_the_waves(nova):
    nova.place('c1', 'a1', 'a2')
    nova.outcomes['a1'] = 'hang'
    plan = plan_for(nova, ['c1'], 1)
    outcome = evac.run_plan(nova, plan, timeout=0.2)
    assert set(outcome.failed) == {'a1'}
    assert outcome.skipped == ['a2']
    assert outcome.timed_out and outcome.freed == []


def test_a_server_landing_meanwhile_keeps_the_host(nova):
    nova.place('c1', 'a')
    plan = plan_for(nova, ['c1'], 1)
    nova.place('c1', 'newcomer')
    outcome = evac.run_plan(nova, plan, timeout=30)
    assert outcome.moved == ['a']
    assert outcome.leftovers == {'c1': ['newcomer']} and outcome.freed == []
