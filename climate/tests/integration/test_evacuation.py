"""Freeing hosts of another project's servers by live migration, on real Nova.

The planner (``climate.scheduling.evacuation``) works on the figures
``climate.plugins.physical_host.evacuation`` reads from Nova and Placement,
and the plan is carried out by live migrations through Nova's scheduler
(the harness's fake driver migrates in about 2 s).  The servers belong to
``alt``; the reservation would be ``demo``'s.  They are put on chosen hosts
by disabling the other compute services while they boot.
"""

import contextlib

import pytest

from climate.clients import keystone
from climate.plugins.physical_host import evacuation as evac
from climate.scheduling import evacuation as planner
from climate.tests.integration import compute as compute_mod


@pytest.fixture
def clients(climate_config):
    keystone.reset_service_sessions()
    conf = compute_mod.backend_conf(climate_config, inventory='nova')
    return evac.service_clients(conf)


@pytest.fixture
def hosts(cloud):
    names = cloud.info['compute_hosts'][:3]
    assert len(names) == 3, 'the scenario needs 3 fake hypervisors'
    return names


@contextlib.contextmanager
def disabled(compute, names):
    """The nova-compute services of ``names`` disabled while inside,
    enabled again on the way out."""
    services = [s for s in compute.admin.services.list(binary='nova-compute')
                if s.host in names]
    try:
        for service in services:
            compute.admin.services.disable_log_reason(service.id,
                                                      'climate-it')
        yield
    finally:
        for service in services:
            compute.admin.services.enable(service.id)


def only(compute, host):
    """Every nova-compute but ``host``'s disabled while inside (so that a
    boot lands there)."""
    return disabled(compute, [s.host for s in compute.admin.services.list(
        binary='nova-compute') if s.host != host])


def boot_on(compute, host, count, flavor=None):
    """``count`` ACTIVE servers of alt on ``host``."""
    if flavor is not None:
        compute.flavor = flavor
    with only(compute, host):
        servers = compute.boot_active('alt', count)
    assert {compute.host_of(s) for s in servers} == {host}
    return servers


def test_two_hosts_freed_by_live_migration(compute, clients, hosts):
    nova, placement = clients
    first, second, receiver = hosts
    moving = boot_on(compute, first, 2) + boot_on(compute, second, 1)
    demo = compute.project_id('demo')

    found = evac.candidates(nova, [first, second])
    assert sorted(len(c['servers']) for c in found) == [1, 2]
    assert all(c['up'] for c in found)
    tiny = found[0]['servers'][0]
    assert tiny['project_id'] == compute.project_id('alt')
    assert tiny['memory_mb'] > 0 and tiny['vcpus'] > 0 and tiny['disk_gb'] > 0
    room = evac.receivers(nova, placement, exclude=[first, second])
    assert list(room) == [receiver]
    assert room[receiver]['memory_mb'] > 3 * tiny['memory_mb']

    plan = planner.plan(found, room, 2, demo, parallel=2)
    assert plan.ok, plan
    assert plan.hosts == [second, first]  # fewest servers first
    assert {m.target for m in plan.moves} == {receiver}
    assert len(plan.waves) == 2  # one move per source host and wave

    outcome = evac.run_plan(nova, plan, timeout=120)
    assert outcome.complete and outcome.freed == [second, first], outcome
    assert sorted(outcome.moved) == sorted(s.id for s in moving)
    assert not outcome.failed and not outcome.timed_out
    assert compute.servers_on(first) == [] and compute.servers_on(second) == []
    for s in moving:
        now = compute.admin.servers.get(s.id)
        assert now.status == 'ACTIVE' and compute.host_of(now) == receiver
    # Placement moved their allocations: the receiver has that much less
    after = evac.receivers(nova, placement, exclude=[first, second])
    assert after[receiver]['memory_mb'] == \
        room[receiver]['memory_mb'] - 3 * tiny['memory_mb']


def test_no_room_elsewhere_is_refused_and_nothing_moves(compute, clients,
                                                        hosts):
    nova, placement = clients
    # servers as large as 60 % of an empty host's memory: one per host,
    # and no host can take a second one
    empty = evac.receivers(nova, placement)[hosts[0]]
    big = compute.admin.flavors.create(
        'climate-it-big', int(empty['memory_mb'] * 0.6), 1, 1)
    servers = {h: boot_on(compute, h, 1, flavor=big.id)[0] for h in hosts}
    demo = compute.project_id('demo')

    found = evac.candidates(nova, [hosts[0]])
    room = evac.receivers(nova, placement, exclude=[hosts[0]])
    assert sorted(room) == sorted(hosts[1:])
    refusal = planner.plan(found, room, 1, demo)
    assert not refusal.ok and refusal.most == 0
    assert 'room for the servers of 0 of the 1' in refusal.reason

    # the reserving project's own server makes a host ineligible, however
    # much room there is
    mine = planner.plan(
        [dict(found[0], servers=[dict(s, project_id=demo)
                                 for s in found[0]['servers']])],
        {h: empty for h in hosts[1:]}, 1, demo)
    assert not mine.ok and 'reserving project' in mine.ineligible[hosts[0]]

    # nothing was touched
    for host, server in servers.items():
        now = compute.admin.servers.get(server.id)
        assert now.status == 'ACTIVE' and compute.host_of(now) == host
        assert compute.admin.migrations.list(instance_uuid=server.id) == []



def test_a_failed_migration_is_reported_and_the_server_stays(compute, clients,
                                                             hosts):
    nova, _placement = clients
    source, target, _other = hosts
    server = boot_on(compute, source, 1)[0]
    moves = [planner.Move(server.id, source, target, 512)]
    plan = planner.Plan([source], moves, planner.make_waves(moves, 2))
    # Nova's scheduler refuses a disabled target: the migration fails and
    # the server stays ACTIVE where it was
    with disabled(compute, [target]):
        outcome = evac.run_plan(nova, plan, timeout=60)
    assert outcome.freed == [] and outcome.leftovers == {source: [server.id]}
    assert list(outcome.failed) == [server.id]
    assert outcome.failed[server.id] == \
        'migration error, the server is on %s' % source
    now = compute.admin.servers.get(server.id)
    assert now.status == 'ACTIVE' and compute.host_of(now) == source
