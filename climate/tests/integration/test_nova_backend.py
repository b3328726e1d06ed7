"""The ``nova`` inventory backend and ClimateFilter against real Nova.

Backend level: Climate's ``NovaBackend`` drives Nova's aggregates, servers
and services; the servers are booted by the harness's users through Nova's
scheduler, which runs ``climate_filter.ClimateFilter``.
"""

import uuid

import pytest

from climate import exceptions
from climate.plugins.physical_host.backends import nova as nova_backend
from climate.tests.integration import compute as compute_mod


@pytest.fixture
def backend(climate_config):
    return nova_backend.NovaBackend(
        compute_mod.backend_conf(climate_config, inventory='nova'))


@pytest.fixture
def hosts(cloud, backend):
    """The harness's hypervisors, described and enrolled in the freepool."""
    names = cloud.info['compute_hosts'][:3]
    assert len(names) == 3, 'the scenario needs 3 fake hypervisors'
    facts = [backend.describe_host(n) for n in names]
    for f in facts:
        backend.enroll(f)
    return facts


def _rid():
    return str(uuid.uuid4())


def test_describe_enroll_withdraw(cloud, backend, compute):
    name = cloud.info['compute_hosts'][0]
    facts = backend.describe_host(name)
    assert facts['hypervisor_hostname'] == name
    assert facts['service_name'] == name
    assert facts['vcpus'] > 0 and facts['memory_mb'] > 0 and facts['local_gb'] > 0
    assert facts['hypervisor_type'] == 'fake'
    assert backend.host_has_servers(facts) is False

    with pytest.raises(exceptions.HostNotFound):
        backend.describe_host('no-such-' + uuid.uuid4().hex[:6])

    backend.enroll(facts)
    backend.enroll(facts)  # idempotent
    pool = compute.aggregate('freepool')
    assert pool.hosts == [name]
    assert pool.metadata['climate:freepool'] == 'true'

    backend.withdraw(facts)
    backend.withdraw(facts)  # idempotent
    assert compute.hosts_of('freepool') == []


def test_host_with_servers_is_seen(cloud, backend, compute):
    server = compute.boot('demo')
    assert server.status == 'ACTIVE'
    facts = backend.describe_host(compute.host_of(server))
    assert backend.host_has_servers(facts) is True


def test_start_filter_end(cloud, backend, compute, hosts):
    """The whole life of a reservation on Nova, with the filter deciding."""
    rid = _rid()
    demo = compute.project_id('demo')
    reserved, free = hosts[:2], hosts[2]
    reserved_names = sorted(h['hypervisor_hostname'] for h in reserved)

    backend.start(rid, demo, reserved)
    agg = compute.aggregate(rid)
    assert sorted(agg.hosts) == reserved_names
    assert agg.metadata['climate:owner'] == demo
    assert agg.metadata['climate:reservation'] == rid
    assert compute.hosts_of('freepool') == [free['hypervisor_hostname']]

    backend.start(rid, demo, reserved)  # a retried start changes nothing
    assert compute.hosts_of(rid) == reserved_names

    # the project with the hint: only on its reserved hosts; without it:
    # never there; another project's hint: no valid host
    mine, plain = compute.check_filter(rid, reserved_names, 3)
    # an unknown reservation: no valid host either
    ghost = compute.boot('demo', hint=_rid())
    assert ghost.status == 'ERROR'

    backend.end(rid, reserved)
    for s in mine:
        assert compute.gone(s.id)
    for s in plain:  # servers on hosts that were not reserved are untouched
        assert compute.admin.servers.get(s.id).status == 'ACTIVE'
    compute.assert_released(rid, [h['hypervisor_hostname'] for h in hosts])

    backend.end(rid, reserved)  # a retried end changes nothing
    compute.assert_released(rid, [h['hypervisor_hostname'] for h in hosts])


def test_half_done_start_and_end_complete(cloud, backend, compute, hosts):
    rid = _rid()
    demo = compute.project_id('demo')
    names = sorted(h['hypervisor_hostname'] for h in hosts[:2])
    # a start that died after creating the aggregate (no metadata yet) and
    # adding one host, which is still in the freepool too
    admin = compute.admin
    agg = admin.aggregates.create(rid, None)
    admin.aggregates.add_host(agg, names[0])

    backend.start(rid, demo, hosts[:2])
    agg = compute.aggregate(rid)
    assert sorted(agg.hosts) == names
    assert agg.metadata == {'climate:owner': demo, 'climate:reservation': rid}
    assert compute.hosts_of('freepool') == [hosts[2]['hypervisor_hostname']]

    # an end that died after moving one host back to the freepool
    server = compute.boot('demo', hint=rid)
    assert server.status == 'ACTIVE'
    pool = compute.aggregate('freepool')
    admin.aggregates.add_host(pool, names[1])
    admin.aggregates.remove_host(agg, names[1])

    backend.end(rid, hosts[:2])
    assert compute.gone(server.id)
    compute.assert_released(rid, [h['hypervisor_hostname'] for h in hosts])


def test_replace_swaps_hosts(cloud, backend, compute, hosts):
    rid = _rid()
    demo = compute.project_id('demo')
    backend.start(rid, demo, hosts[:1])
    backend.replace(rid, demo, hosts[:1], hosts[1:2])
    assert compute.hosts_of(rid) == [hosts[1]['hypervisor_hostname']]
    assert compute.hosts_of('freepool') == sorted(
        h['hypervisor_hostname'] for h in (hosts[0], hosts[2]))
    # grow: no host leaves
    backend.replace(rid, demo, [], hosts[2:])
    assert compute.hosts_of(rid) == sorted(
        h['hypervisor_hostname'] for h in hosts[1:])
    backend.end(rid, hosts[1:])
    assert compute.aggregate(rid) is None


def test_snapshot_before_end(cloud, backend, compute, hosts):
    rid = _rid()
    demo = compute.project_id('demo')
    backend.start(rid, demo, hosts[:1])
    server = compute.boot('demo', hint=rid)
    assert server.status == 'ACTIVE'

    backend.snapshot(rid, hosts[:1])
    name = f'climate-{rid}-{server.id}'
    images = compute.images_named(name)
    assert len(images) == 1, images
    assert images[0]['owner'] == demo
    assert images[0]['climate_reservation'] == rid
    assert compute.admin.servers.get(server.id).status == 'ACTIVE'

    backend.snapshot(rid, hosts[:1])  # once per server, however often asked
    assert len(compute.images_named(name)) == 1
    compute.image_api.delete(f"/v2/images/{images[0]['id']}")
    backend.end(rid, hosts[:1])


def test_down_hosts_from_compute_services(cloud, backend, compute, hosts):
    assert backend.down_hosts(hosts) == []
    victim = hosts[1]['service_name']
    service = compute.admin.services.list(host=victim, binary='nova-compute')[0]
    compute.admin.services.disable_log_reason(service.id, 'climate test')
    try:
        assert backend.down_hosts(hosts) == [hosts[1]]
    finally:
        compute.admin.services.enable(service.id)
    assert backend.down_hosts(hosts) == []
    ghost = dict(hosts[0], hypervisor_hostname='gone', service_name='gone')
    assert backend.down_hosts([ghost]) == [ghost]


def test_nova_errors_are_cloud_unavailable(cloud, climate_config):
    conf = compute_mod.backend_conf(climate_config, inventory='nova')
    conf.set_override('endpoint_override', 'http://127.0.0.1:9/v2.1',
                      group='nova')
    broken = nova_backend.NovaBackend(conf)
    with pytest.raises(exceptions.CloudUnavailable) as err:
        broken.start(_rid(), 'p', [{'hypervisor_hostname': 'x',
                                    'service_name': 'x'}])
    assert err.value.code == 503
    assert 'Nova' in str(err.value)
