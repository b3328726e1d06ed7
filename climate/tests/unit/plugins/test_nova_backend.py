"""The ``nova`` host backend's logic against an in-memory Nova.

``FakeNova`` answers like Nova's API does for what the backend uses
(a host already in an aggregate is 409, a host not in it 404, a deleted
aggregate 404) and can fail on demand, so that idempotency, verification,
the fan-out bound and error mapping are checked without a cloud.  The real
Nova runs in ``climate/tests/integration/test_nova_backend.py``.
"""

import threading
import time
import types

import pytest
from keystoneauth1 import exceptions as ks_exc
from novaclient import exceptions as nova_exc
from oslo_config import cfg

from climate.conf import clients as clients_conf
from climate.conf import hosts as hosts_conf
from climate import exceptions
from climate.plugins.physical_host.backends import nova as nova_backend
from climate.plugins.physical_host import inventory


class Agg:
    def __init__(self, agg_id, name):
        self.id = agg_id
        self.name = name
        self.hosts = []
        self.metadata = {}

    def copy(self):
        other = Agg(self.id, self.name)
        other.hosts, other.metadata = list(self.hosts), dict(self.metadata)
        return other


class FakeAggregates:
    def __init__(self, nova):
        self.nova = nova
        self.by_id = {}

    def _find(self, agg):
        agg_id = getattr(agg, 'id', agg)
        if agg_id not in self.by_id:
            raise nova_exc.NotFound(404)
        return self.by_id[agg_id]

    def list(self):
        self.nova.call('list')
        return [a.copy() for a in self.by_id.values()]

    def get(self, agg):
        self.nova.call('get')
        return self._find(agg).copy()

    def create(self, name, zone):
        self.nova.call('create')
        if any(a.name == name for a in self.by_id.values()):
            raise nova_exc.Conflict(409)
        agg = Agg(len(self.by_id) + 1, name)
        self.by_id[agg.id] = agg
        return agg.copy()

    def set_metadata(self, agg, metadata):
        self.nova.call('set_metadata')
        found = self._find(agg)
        found.metadata.update(metadata)
        self.nova.published.append((found.name, sorted(found.hosts)))
        return found.copy()

    def add_host(self, agg, host):
        self.nova.call('add_host', host)
        found = self._find(agg)
        if host not in self.nova.computes:
            raise nova_exc.NotFound(404)
        if host in found.hosts:
            raise nova_exc.Conflict(409)
        found.hosts.append(host)
        return found.copy()

    def remove_host(self, agg, host):
        self.nova.call('remove_host', host)
        found = self._find(agg)
        if host not in found.hosts:
            raise nova_exc.NotFound(404)
        found.hosts.remove(host)
        return found.copy()

    def delete(self, agg):
        self.nova.call('delete')
        found = self._find(agg)
        if found.hosts:
            raise nova_exc.BadRequest(400)
        del self.by_id[found.id]


class FakeServers:
    def __init__(self, nova):
        self.nova = nova
        self.on = {}  # host -> [server ids]

    def list(self, search_opts=None, limit=None):
        self.nova.call('servers.list')
        ids = self.on.get(search_opts['host'], [])
        found = [types.SimpleNamespace(id=i, tenant_id='p') for i in ids]
        return found[:limit] if limit else found

    def delete(self, server_id):
        self.nova.call('servers.delete')
        for ids in self.on.values():
            if server_id in ids:
                ids.remove(server_id)
                return
        raise nova_exc.NotFound(404)


class FakeNova:
    def __init__(self, computes):
        self.computes = set(computes)
        self.aggregates = FakeAggregates(self)
        self.servers = FakeServers(self)
        self.services = types.SimpleNamespace(list=self._services)
        self.client = types.SimpleNamespace(session=None)
        self.state = {}
        self.calls = []
        self.published = []
        self.fail = {}  # call name -> exception to raise (once per host)
        self.lock = threading.Lock()
        self.running = 0
        self.most_running = 0
        self.delay = 0.0

    def call(self, name, host=None):
        with self.lock:
            self.calls.append((name, host))
            self.running += 1
            self.most_running = max(self.most_running, self.running)
        try:
            if self.delay:
                time.sleep(self.delay)
            exc = self.fail.pop((name, host), None) or \
                self.fail.get((name, '*'))
            if exc is not None:
                raise exc
        finally:
            with self.lock:
                self.running -= 1

    def _services(self, binary=None):
        return [types.SimpleNamespace(host=h, state=s[0], status=s[1],
                                      disabled_reason=(s[2:] or [None])[0])
                for h, s in sorted(self.state.items())]


HOSTS = ['c1', 'c2', 'c3', 'c4']


def facts(name):
    return {'hypervisor_hostname': name, 'service_name': name}


@pytest.fixture
def nova():
    return FakeNova(HOSTS)


@pytest.fixture
def make(nova):
    def make_backend(**hosts):
        conf = cfg.ConfigOpts()
        clients_conf.register_opts(conf)
        hosts_conf.register_opts(conf)
        conf([], default_config_files=[])
        for key, value in hosts.items():
            conf.set_override(key, value, group='hosts')
        backend = nova_backend.NovaBackend(conf)
        backend._client = nova
        return backend
    return make_backend


def agg_named(nova, name):
    found = [a for a in nova.aggregates.by_id.values() if a.name == name]
    return found[0] if found else None


def enrolled(nova, make, names=HOSTS):
    backend = make()
    for name in names:
        backend.enroll(facts(name))
    return backend


def test_enroll_creates_the_freepool_once(nova, make):
    backend = enrolled(nova, make)
    backend.enroll(facts('c1'))
    pool = agg_named(nova, 'freepool')
    assert sorted(pool.hosts) == HOSTS
    assert pool.metadata == {'climate:freepool': 'true'}
    assert len(nova.aggregates.by_id) == 1


def test_start_moves_hosts_and_publishes_whole_aggregates(nova, make):
    backend = enrolled(nova, make)
    nova.published.clear()
    backend.start('r1', 'proj', [facts('c1'), facts('c2')])
    agg = agg_named(nova, 'r1')
    assert sorted(agg.hosts) == ['c1', 'c2']
    assert agg.metadata == {'climate:owner': 'proj',
                            'climate:reservation': 'r1'}
    assert sorted(agg_named(nova, 'freepool').hosts) == ['c3', 'c4']
    # the schedulers' last view of each aggregate is the complete one
    last = {}
    for name, hosts in nova.published:
        last[name] = hosts
    assert last == {'r1': ['c1', 'c2'], 'freepool': ['c3', 'c4']}
    # each host joins the reservation before it leaves the freepool
    moves = [(n, h) for n, h in nova.calls if n in ('add_host',
                                                     'remove_host')]
    for host in ('c1', 'c2'):
        assert moves.index(('add_host', host)) < moves.index(
            ('remove_host', host))


def test_start_rerun_does_only_what_is_missing(nova, make):
    backend = enrolled(nova, make)
    # a start that died after creating the aggregate and adding c1
    agg = nova.aggregates.create('r1', None)
    nova.aggregates.add_host(agg, 'c1')
    nova.calls.clear()
    backend.start('r1', 'proj', [facts('c1'), facts('c2')])
    assert sorted(agg_named(nova, 'r1').hosts) == ['c1', 'c2']
    assert ('add_host', 'c1') not in nova.calls
    nova.calls.clear()
    backend.start('r1', 'proj', [facts('c1'), facts('c2')])
    assert not [c for c in nova.calls if c[0] in ('add_host', 'remove_host',
                                                   'create')]


def test_end_deletes_servers_and_tolerates_a_second_run(nova, make):
    backend = enrolled(nova, make)
    backend.start('r1', 'proj', [facts('c1'), facts('c2')])
    nova.servers.on = {'c1': ['s1', 's2'], 'c3': ['s3']}
    backend.end('r1', [facts('c1'), facts('c2')])
    assert nova.servers.on == {'c1': [], 'c3': ['s3']}
    assert agg_named(nova, 'r1') is None
    assert sorted(agg_named(nova, 'freepool').hosts) == HOSTS
    backend.end('r1', [facts('c1'), facts('c2')])
    assert sorted(agg_named(nova, 'freepool').hosts) == HOSTS


def test_end_returns_hosts_it_was_not_told_about(nova, make):
    backend = enrolled(nova, make)
    backend.start('r1', 'proj', [facts('c1'), facts('c2')])
    backend.end('r1', [facts('c1')])
    assert agg_named(nova, 'r1') is None
    assert sorted(agg_named(nova, 'freepool').hosts) == HOSTS


def test_failures_are_cloud_unavailable_and_every_host_is_tried(nova, make):
    backend = enrolled(nova, make)
    nova.fail[('add_host', 'c1')] = nova_exc.ClientException(500)
    with pytest.raises(exceptions.CloudUnavailable) as err:
        backend.start('r1', 'proj', [facts('c1'), facts('c2')])
    assert 'c1' in str(err.value)
    assert sorted(agg_named(nova, 'r1').hosts) == ['c2']  # c2 went on
    backend.start('r1', 'proj', [facts('c1'), facts('c2')])  # the retry
    assert sorted(agg_named(nova, 'r1').hosts) == ['c1', 'c2']

    nova.fail[('list', '*')] = ks_exc.ConnectFailure('refused')
    with pytest.raises(exceptions.CloudUnavailable) as err:
        backend.end('r1', [facts('c1')])
    assert err.value.code == 503 and 'Nova' in str(err.value)


def test_a_move_nova_did_not_apply_is_detected(nova, make):
    backend = enrolled(nova, make)
    real_add = nova.aggregates.add_host

    def lost_add(agg, host):  # answers OK, changes nothing
        return nova.aggregates.get(agg)
    nova.aggregates.add_host = lost_add
    with pytest.raises(exceptions.CloudUnavailable) as err:
        backend.start('r1', 'proj', [facts('c1')])
    assert 'not in aggregate r1' in str(err.value)
    nova.aggregates.add_host = real_add


def test_fan_out_is_bounded_by_max_parallel(nova, make):
    enrolled(nova, make)
    nova.delay = 0.02
    nova.most_running = 0
    make(max_parallel=2).start('r1', 'p', [facts(h) for h in HOSTS])
    assert nova.most_running == 2
    nova.most_running = 0
    make(max_parallel=1).end('r1', [facts(h) for h in HOSTS])
    assert nova.most_running == 1


def test_withdraw_refuses_a_reserved_host(nova, make):
    backend = enrolled(nova, make)
    backend.start('r1', 'proj', [facts('c1')])
    with pytest.raises(exceptions.HostAllocated):
        backend.withdraw(facts('c1'))
    backend.withdraw(facts('c2'))
    backend.withdraw(facts('c2'))
    assert sorted(agg_named(nova, 'freepool').hosts) == ['c3', 'c4']


def test_replace_swaps_and_grows(nova, make):
    backend = enrolled(nova, make)
    backend.start('r1', 'proj', [facts('c1')])
    backend.replace('r1', 'proj', [facts('c1')], [facts('c2')])
    assert agg_named(nova, 'r1').hosts == ['c2']
    assert sorted(agg_named(nova, 'freepool').hosts) == ['c1', 'c3', 'c4']
    backend.replace('r1', 'proj', [], [facts('c3')])
    assert sorted(agg_named(nova, 'r1').hosts) == ['c2', 'c3']


def test_down_hosts(nova, make):
    nova.state = {'c1': ('up', 'enabled'), 'c2': ('down', 'enabled'),
                  'c3': ('up', 'disabled')}
    backend = make()
    down = backend.down_hosts([facts(h) for h in HOSTS])
    assert [h['hypervisor_hostname'] for h in down] == ['c2', 'c3', 'c4']


def test_a_host_a_hunt_closed_is_not_down(nova, make):
    # the hunt disables the service of a host it frees until it has booked
    # it: read as down, healing made it unreservable under the hunt
    nova.state = {'c1': ('up', 'disabled',
                         nova_backend.HUNT_DISABLED_REASON % 'lease-1'),
                  'c2': ('up', 'disabled', 'operator: new disks'),
                  'c3': ('down', 'disabled',
                         nova_backend.HUNT_DISABLED_REASON % 'lease-1'),
                  'c4': ('up', 'enabled')}
    down = make().down_hosts([facts(h) for h in HOSTS])
    assert [h['hypervisor_hostname'] for h in down] == ['c2', 'c3']


def test_a_host_powered_off_by_climate_is_not_down(nova, make):
    # a sleeping host's service is down and closed by the power off: read
    # as down, healing moved its next booking away and made it unreservable
    nova.state = {'c1': ('down', 'disabled',
                         nova_backend.POWER_DISABLED_REASON % 'tomorrow'),
                  'c2': ('down', 'disabled', 'operator: new disks'),
                  'c3': ('down', 'enabled'),
                  'c4': ('up', 'enabled')}
    down = make().down_hosts([facts(h) for h in HOSTS])
    assert [h['hypervisor_hostname'] for h in down] == ['c2', 'c3']


def test_a_bug_is_not_disguised_as_a_cloud_outage(nova, make):
    backend = enrolled(nova, make)
    nova.fail[('add_host', 'c2')] = KeyError('bug')
    with pytest.raises(KeyError):
        backend.start('r1', 'proj', [facts('c1'), facts('c2')])


# -- Blazar's refusals of a host create (doc/source/blazar-compatibility-hosts)


def _hypervisor(name, service):
    return types.SimpleNamespace(hypervisor_hostname=name,
                                 service={'host': service}, vcpus=4,
                                 memory_mb=8192, local_gb=100, cpu_info='{}',
                                 hypervisor_type='QEMU',
                                 hypervisor_version=2010001)


def _with_hypervisors(nova, *hypervisors):
    def search(name, detailed=False):
        found = [h for h in hypervisors if name in h.hypervisor_hostname]
        if not found:
            raise nova_exc.NotFound(404)
        return found
    nova.hypervisors = types.SimpleNamespace(
        search=search, list=lambda detailed=False: list(hypervisors))


def test_create_refuses_a_host_with_servers_in_blazars_words(nova, make):
    _with_hypervisors(nova, _hypervisor('c1', 'c1'))
    nova.servers.on = {'c1': ['s1']}
    inv = inventory.Inventory(types.SimpleNamespace(backend=make()))
    with pytest.raises(exceptions.HostHasServers) as caught:
        inv.create(None, {'name': 'c1'})
    assert caught.value.code == 409
    assert caught.value.message.startswith(
        "Servers [[{'name': None, 'uuid': 's1'}]] found for host c1. ")


def test_a_name_of_several_hypervisors_is_multiple_hosts_found(nova, make):
    _with_hypervisors(nova, _hypervisor('c1', 'c1'), _hypervisor('c1', 'c1'))
    with pytest.raises(exceptions.MultipleHostsFound) as caught:
        make().describe_host('c1')
    assert caught.value.code == 409
    assert caught.value.message.startswith(
        "Multiple Hosts found for pattern 'c1'. ")


def test_a_name_nova_does_not_know_is_host_not_found(nova, make):
    _with_hypervisors(nova, _hypervisor('c1', 'c1'))
    with pytest.raises(exceptions.HostNotInCloud) as caught:
        make().describe_host('nothing')
    assert caught.value.code == 404
    assert caught.value.message.startswith("Host 'nothing' not found! ")


def test_create_with_nova_ignores_the_facts_nova_reports(nova, make):
    _with_hypervisors(nova, _hypervisor('c1', 'c1'))
    inv = inventory.Inventory(types.SimpleNamespace(backend=make()))
    body = {'name': 'c1', 'vcpus': 99, 'availability_zone': 'az',
            'trust_id': 'given', 'x' * 65: 'v'}
    # Blazar drops the fact keys and the trust id, then refuses the long
    # capability name: nothing is written before that
    with pytest.raises(exceptions.ExtraCapabilityTooLong):
        inv.create(None, body)
