"""``virtual:instance`` on real Nova and Placement.

1. Backend level: ``NovaInstanceBackend.start``/``end`` called directly with
   the harness's hypervisors: a boot with the reservation's flavor lands on
   reserved capacity, one over ``amount`` finds no valid host, another
   project cannot use the flavor, the end leaves nothing in Nova or
   Placement (checked explicitly: flavor, aggregate, server group,
   servers, child providers, inventories, resource class).
2. Through Climate's API: a lease with a ``virtual:instance`` reservation
   starting now, a boot with flavor id = reservation id, the lease's end.
3. Heat's ``OS::Blazar::Lease`` with a ``virtual:instance`` reservation and
   an ``OS::Nova::Server`` booted with its flavor, as the project's user.

nova-scheduler runs ``ClimateFilter`` (the ``cloud`` fixture loads it).
"""

import datetime
import time
import uuid

import pytest
from novaclient import exceptions as nova_exc

from climate import exceptions
from climate.clients import placement as placement_clients
from climate.plugins.physical_host.backends import nova as host_backend
from climate.plugins.virtual_instance.backends import base
from climate.plugins.virtual_instance.backends import nova as instance_nova
from climate.tests.functional.procs import wait_for
from climate.tests.integration import compute as compute_mod

WAIT = compute_mod.WAIT


@pytest.fixture
def conf(climate_config):
    return compute_mod.backend_conf(climate_config, inventory='nova')


@pytest.fixture
def placement(conf):
    from climate.clients import keystone
    keystone.reset_service_sessions()
    return placement_clients.service_client(conf)


@pytest.fixture(autouse=True)
def clean_placement(clean_cloud, placement):
    """What ``cloud-harness.sh purge`` does not know: Climate's child
    providers and reservation classes left by a failed test (the purge has
    deleted the servers holding them)."""
    _sweep(placement)
    yield
    try:
        _sweep(placement)
    except placement_clients.PlacementError:
        pass  # servers may still hold units: the next test's purge frees


def _sweep(placement):
    # Climate's children stay (deleting one nova-compute has cached breaks
    # builds on its host): only their inventories and aggregates go
    for rp in placement.providers():
        if rp['name'].startswith(instance_nova.CHILD_PREFIX) and \
                rp['parent_provider_uuid']:
            for rc in placement.inventories(rp['uuid'])[1]:
                placement.remove_inventory(rp['uuid'], rc)
            for agg in placement.aggregates(rp['uuid'])[1]:
                placement.remove_from_aggregate(rp['uuid'], agg)
    classes = placement._call('GET', '/resource_classes', 'listing classes'
                              ).json()['resource_classes']
    for rc in classes:
        if rc['name'].startswith('CUSTOM_RESERVATION_'):
            placement.delete_resource_class(rc['name'])


class Compute(compute_mod.Compute):
    """The harness's Nova, with connection retries: nova-api's WSGI server
    closes idle keep-alive connections, and a loaded machine makes a
    reused one fail now and then."""

    def nova(self, who):
        from novaclient import client as nova_client
        return nova_client.Client('2.60', session=self.cloud.session(who),
                                  region_name=self.cloud.region,
                                  connect_retries=3)


@pytest.fixture
def compute(cloud):
    return Compute(cloud)


@pytest.fixture
def backend(conf):
    return instance_nova.NovaInstanceBackend(conf)


@pytest.fixture
def facts(cloud, conf):
    """Facts of the harness's 3 hypervisors, as the host plugin has them."""
    hosts = host_backend.NovaBackend(conf)
    names = cloud.info['compute_hosts'][:3]
    assert len(names) == 3, 'the scenario needs 3 fake hypervisors'
    return [hosts.describe_host(n) for n in names]


def reservation(amount, affinity=None, vcpus=1, memory_mb=512, disk_gb=1,
                **extra):
    return dict({'id': str(uuid.uuid4()), 'amount': amount, 'vcpus': vcpus,
                 'memory_mb': memory_mb, 'disk_gb': disk_gb,
                 'affinity': affinity, 'resource_properties': '',
                 'flavor_id': None, 'source_flavor': None,
                 'server_group_id': None, 'aggregate_id': None}, **extra)


def boot(compute, who, flavor, wait=True, **kwargs):
    """Boot as ``who`` with ``flavor``; wait until ACTIVE or ERROR and
    return the server as the admin sees it."""
    server = compute.nova(who).servers.create(
        'climate-it-' + uuid.uuid4().hex[:8], image=compute.image,
        flavor=flavor, nics='none', **kwargs)
    if not wait:
        return server
    return wait_for(lambda: compute._settled(server.id), WAIT,
                    message=f'server {server.id} ACTIVE or ERROR')


def children(placement, rid):
    """Providers holding anything of the reservation: its class, or
    membership of its Placement aggregate."""
    rc = base.resource_class(rid)
    by_agg = {rp['uuid'] for rp in placement.providers(
        member_of=instance_nova.placement_aggregate(rid))}
    by_class = {rp['uuid'] for rp in placement.providers()
                if rc in placement.inventories(rp['uuid'])[1]}
    return by_agg | by_class


def assert_nothing_left(compute, placement, rid):
    """Nothing of reservation ``rid`` in Nova or Placement."""
    admin = compute.admin
    with pytest.raises(nova_exc.NotFound):
        admin.flavors.get(rid)
    assert compute.aggregate(rid) is None
    assert not [g for g in admin.server_groups.list(all_projects=True)
                if g.name == base.flavor_name(rid)]
    assert not admin.servers.list(search_opts={'all_tenants': True},
                                  limit=-1), 'servers left'
    assert children(placement, rid) == set()
    assert not placement.resource_class_exists(base.resource_class(rid))


def test_backend_start_boot_end(cloud, compute, backend, placement, facts):
    """start → boots land on reserved capacity, amount+1 refused, other
    projects refused; end → nothing left."""
    t0 = time.monotonic()
    res = reservation(3)
    rid = res['id']
    rc = base.resource_class(rid)
    demo = compute.project_id('demo')
    booked = [(facts[0], 2), (facts[1], 1)]
    reserved = {facts[0]['hypervisor_hostname'],
                facts[1]['hypervisor_hostname']}

    made = backend.start(res, demo, booked, lambda: cloud.session('demo'))
    assert made['flavor_id'] == rid
    assert made['server_group_id'] is None
    again = backend.start(res, demo, booked, lambda: cloud.session('demo'))
    assert again == made  # a retried start changes nothing
    started = time.monotonic()

    # Nova: the private flavor, its extra specs, the project's access
    flavor = compute.admin.flavors.get(rid)
    assert flavor.name == 'reservation:' + rid
    assert (flavor.vcpus, flavor.ram, flavor.disk) == (1, 512, 1)
    assert not flavor.is_public
    assert flavor.get_keys() == {
        'resources:' + rc: '1',
        'aggregate_instance_extra_specs:reservation': rid}
    assert [a.tenant_id for a in
            compute.admin.flavor_access.list(flavor=rid)] == [demo]
    agg = compute.aggregate(rid)
    assert agg.id == made['aggregate_id']
    assert sorted(agg.hosts) == sorted(reserved)
    assert agg.metadata == {'climate:reservation': rid,
                            'climate:owner': demo, 'reservation': rid}
    # Placement: one child per booked host, total = its units
    kids = {rp['name']: rp for rp in placement.providers(
        member_of=instance_nova.placement_aggregate(rid))}
    assert sorted(kids) == sorted(
        instance_nova.child_name(h['hypervisor_hostname'])
        for h, _u in booked)
    for host, units in booked:
        child = kids[instance_nova.child_name(host['hypervisor_hostname'])]
        root = placement.provider_by_name(host['hypervisor_hostname'])
        assert child['parent_provider_uuid'] == root['uuid']
        inv = placement.inventories(child['uuid'])[1]
        assert list(inv) == [rc] and inv[rc]['total'] == units

    # another project: Nova does not even show it the flavor
    with pytest.raises((nova_exc.BadRequest, nova_exc.NotFound)):
        boot(compute, 'alt', rid, wait=False)
    # the admin sees every flavor, but is not the reservation's project:
    # ClimateFilter sends it nowhere
    intruder = boot(compute, 'admin', rid)
    assert intruder.status == 'ERROR'
    assert 'No valid host' in intruder.fault['message']

    mine = [boot(compute, 'demo', rid) for _ in range(3)]
    for s in mine:
        assert s.status == 'ACTIVE', getattr(s, 'fault', None)
    where = [compute.host_of(s) for s in mine]
    assert set(where) <= reserved
    assert where.count(facts[0]['hypervisor_hostname']) == 2
    # amount + 1: Placement has no unit of the class left
    over = boot(compute, 'demo', rid)
    assert over.status == 'ERROR'
    assert 'No valid host' in over.fault['message']
    # the project's ordinary servers do not use the reserved hosts
    plain = compute.boot('demo')
    assert plain.status == 'ACTIVE'
    assert compute.host_of(plain) not in reserved
    boots_done = time.monotonic()

    backend.end(res, booked)
    ended = time.monotonic()
    for s in mine + [over, intruder]:
        assert compute.gone(s.id)
    assert compute.admin.servers.get(plain.id).status == 'ACTIVE'
    compute.admin.servers.delete(plain.id)
    wait_for(lambda: compute.gone(plain.id), 60, message='plain deleted')
    assert_nothing_left(compute, placement, rid)
    backend.end(res, booked)  # a retried end finds nothing to do
    assert_nothing_left(compute, placement, rid)
    print(f'\nstart {started - t0:.1f} s (twice), boots '
          f'{boots_done - started:.1f} s, end {ended - boots_done:.1f} s, '
          f'total {time.monotonic() - t0:.1f} s')


def test_backend_anti_affinity_and_lost_flavor(cloud, compute, backend,
                                               placement, facts):
    """affinity=false: a server group of the project's, made through its
    session; an end whose flavor is already gone still finds the servers
    through their Placement allocations."""
    t0 = time.monotonic()
    res = reservation(2, affinity=False)
    rid = res['id']
    demo = compute.project_id('demo')
    booked = [(facts[1], 1), (facts[2], 1)]
    made = backend.start(res, demo, booked, lambda: cloud.session('demo'))
    group = compute.admin.server_groups.get(made['server_group_id'])
    assert group.name == 'reservation:' + rid
    assert group.policies == ['anti-affinity']
    assert group.project_id == demo
    res['server_group_id'] = made['server_group_id']
    assert backend.start(res, demo, booked,
                         lambda: cloud.session('demo')) == made

    servers = [boot(compute, 'demo', rid,
                    scheduler_hints={'group': made['server_group_id']})
               for _ in range(2)]
    assert all(s.status == 'ACTIVE' for s in servers)
    assert {compute.host_of(s) for s in servers} == {
        facts[1]['hypervisor_hostname'], facts[2]['hypervisor_hostname']}

    # a half-done end: the flavor went first (servers built with it no
    # longer listed by flavor)
    compute.admin.flavors.delete(rid)
    backend.end(res, booked)
    for s in servers:
        assert compute.gone(s.id)
    assert_nothing_left(compute, placement, rid)
    print(f'\nanti-affinity start/boot/end {time.monotonic() - t0:.1f} s')


def test_backend_resize_moves_units(cloud, compute, backend, placement,
                                    facts):
    """resize: a host leaves (its child goes), another joins, units
    change; the aggregate follows."""
    res = reservation(3)
    rid = res['id']
    rc = base.resource_class(rid)
    demo = compute.project_id('demo')
    backend.start(res, demo, [(facts[0], 1), (facts[1], 2)],
                  lambda: cloud.session('demo'))
    backend.resize(res, demo, [(facts[1], 1), (facts[2], 2)],
                   lambda: cloud.session('demo'))
    assert compute.hosts_of(rid) == sorted(
        [facts[1]['service_name'], facts[2]['service_name']])
    kids = {rp['name']: rp for rp in placement.providers(
        member_of=instance_nova.placement_aggregate(rid))}
    assert sorted(kids) == sorted(
        instance_nova.child_name(f['hypervisor_hostname'])
        for f in facts[1:])
    totals = {name: placement.inventories(rp['uuid'])[1][rc]['total']
              for name, rp in kids.items()}
    assert totals == {
        instance_nova.child_name(facts[1]['hypervisor_hostname']): 1,
        instance_nova.child_name(facts[2]['hypervisor_hostname']): 2}
    # the host that left keeps Climate's (empty) child, nothing of rc
    left = placement.provider_by_name(
        instance_nova.child_name(facts[0]['hypervisor_hostname']))
    assert rc not in placement.inventories(left['uuid'])[1]
    backend.end(res, [(facts[1], 1), (facts[2], 2)])
    assert_nothing_left(compute, placement, rid)


def test_backend_two_reservations_share_a_host(cloud, compute, backend,
                                               placement, facts):
    """Two projects' reservations on one host: one child, two classes;
    each project boots with its own flavor only; one end leaves the other
    reservation whole."""
    t0 = time.monotonic()
    first, second = reservation(1), reservation(1)
    demo, alt = compute.project_id('demo'), compute.project_id('alt')
    host = [(facts[0], 1)]
    backend.start(first, demo, host, lambda: cloud.session('demo'))
    backend.start(second, alt, host, lambda: cloud.session('alt'))
    child = placement.provider_by_name(
        instance_nova.child_name(facts[0]['hypervisor_hostname']))
    assert sorted(placement.inventories(child['uuid'])[1]) == sorted(
        [base.resource_class(first['id']), base.resource_class(second['id'])])
    mine = boot(compute, 'demo', first['id'])
    theirs = boot(compute, 'alt', second['id'])
    assert mine.status == theirs.status == 'ACTIVE'
    assert compute.host_of(mine) == compute.host_of(theirs) == \
        facts[0]['hypervisor_hostname']
    with pytest.raises((nova_exc.BadRequest, nova_exc.NotFound)):
        boot(compute, 'demo', second['id'], wait=False)

    backend.end(first, host)
    assert compute.gone(mine.id)
    assert compute.admin.servers.get(theirs.id).status == 'ACTIVE'
    assert_nothing_left_of = children(placement, first['id'])
    assert assert_nothing_left_of == set()
    inv = placement.inventories(child['uuid'])[1]
    assert list(inv) == [base.resource_class(second['id'])]
    assert compute.aggregate(second['id']).hosts == [
        facts[0]['service_name']]
    backend.end(second, host)
    assert_nothing_left(compute, placement, first['id'])
    assert_nothing_left(compute, placement, second['id'])
    print(f'\ntwo reservations on one host {time.monotonic() - t0:.1f} s')


def test_backend_prepare_before_start(cloud, compute, backend, placement,
                                      facts):
    """prepare (at the reservation's create, as Blazar): the flavor exists
    but nothing can boot with it before the start; a changed shape remakes
    it; start opens the slots."""
    res = reservation(1, affinity=True)
    rid = res['id']
    demo = compute.project_id('demo')
    made = backend.prepare(res, demo, lambda: cloud.session('demo'))
    assert made['flavor_id'] == rid and made['server_group_id']
    assert compute.hosts_of(rid) == []
    res.update(server_group_id=made['server_group_id'], memory_mb=1024)
    assert backend.prepare(res, demo, lambda: cloud.session('demo')) == made
    assert compute.admin.flavors.get(rid).ram == 1024
    early = boot(compute, 'demo', rid)
    assert early.status == 'ERROR'
    assert 'No valid host' in early.fault['message']

    assert backend.start(res, demo, [(facts[2], 1)],
                         lambda: cloud.session('demo')) == made
    server = boot(compute, 'demo', rid,
                  scheduler_hints={'group': made['server_group_id']})
    assert server.status == 'ACTIVE', getattr(server, 'fault', None)
    assert compute.host_of(server) == facts[2]['hypervisor_hostname']
    backend.end(res, [(facts[2], 1)])
    assert compute.gone(early.id) and compute.gone(server.id)
    assert_nothing_left(compute, placement, rid)


def test_flavor_and_capacity_read_from_the_cloud(cloud, compute, backend,
                                                 conf, placement, facts):
    """flavor(): shape, resources and traits of an existing flavor; an
    unknown one is a 400 naming it.  The host inventory's capacity() is
    Placement's inventory of the compute node."""
    admin = compute.admin
    flavor = admin.flavors.create('climate-it-src', 1024, 2, 10,
                                  ephemeral=5, swap=1536)
    flavor.set_keys({'resources:CUSTOM_MAGIC': '1', 'resources1:VGPU': '1',
                     'trait:HW_CPU_X86_AVX2': 'required',
                     'trait:CUSTOM_SLOW': 'forbidden',
                     'hw:cpu_policy': 'shared'})
    shape = backend.flavor(flavor.id)
    assert shape == {'id': flavor.id, 'vcpus': 2, 'memory_mb': 1024,
                     'disk_gb': 10 + 5 + 2,
                     'resources': {'CUSTOM_MAGIC': 1, 'VGPU': 1},
                     'traits': {'required': ['HW_CPU_X86_AVX2'],
                                'forbidden': ['CUSTOM_SLOW']}}
    with pytest.raises(exceptions.InvalidInput) as err:
        backend.flavor('no-such-flavor')
    assert 'no-such-flavor' in str(err.value)
    assert err.value.code == 400

    hosts = host_backend.NovaBackend(conf)
    cap = hosts.capacity(facts[0])
    root = placement.provider_by_name(facts[0]['hypervisor_hostname'])
    inv = placement.inventories(root['uuid'])[1]
    assert sorted(cap) == ['DISK_GB', 'MEMORY_MB', 'VCPU']
    for rc, values in cap.items():
        assert values == {k: inv[rc][k] for k in (
            'total', 'reserved', 'allocation_ratio', 'min_unit', 'max_unit',
            'step_size')}
    assert cap['VCPU']['total'] == facts[0]['vcpus']


def test_placement_errors_are_cloud_unavailable(cloud, conf, facts):
    conf.set_override('endpoint_override', 'http://127.0.0.1:9',
                      group='placement')
    conf.set_override('connect_retries', 0, group='placement')
    broken = instance_nova.NovaInstanceBackend(conf)
    with pytest.raises(exceptions.CloudUnavailable) as err:
        broken.start(reservation(1), 'p', [(facts[0], 1)], lambda: None)
    assert 'Placement' in str(err.value)
    with pytest.raises(exceptions.CloudUnavailable):
        host_backend.NovaBackend(conf).capacity(facts[0])


# -- through Climate's API -----------------------------------------------------

def register_hosts(api, token, names):
    for name in names:
        resp = api.call('POST', '/v1/os-hosts', token, {'name': name})
        assert resp.status_code == 201, resp.text


def instance_lease(name, amount, end, start='now', affinity=None):
    return {'name': name, 'start_date': start, 'end_date': end,
            'reservations': [{'resource_type': 'virtual:instance',
                              'amount': amount, 'vcpus': 1,
                              'memory_mb': 512, 'disk_gb': 1,
                              'affinity': affinity,
                              'resource_properties': ''}],
            'events': []}


def test_lease_through_the_api(cloud, api, tokens, compute, placement):
    """A virtual:instance lease starting now: the project boots `amount`
    servers with flavor id = reservation id, one more is refused, another
    project cannot; the lease's end leaves nothing in Nova or Placement."""
    from climate.tests.integration.identity import iso_in
    t0 = time.monotonic()
    names = cloud.info['compute_hosts'][:3]
    register_hosts(api, tokens['admin'], names)
    resp = api.call('POST', '/v1/leases', tokens['demo'],
                    instance_lease('two-slots', 2, iso_in(300)))
    assert resp.status_code == 201, resp.text
    lease = resp.json()['lease']
    rsv = lease['reservations'][0]
    rid = rsv['id']
    assert rsv['resource_type'] == 'virtual:instance'
    assert rsv['flavor_id'] == rid
    created = time.monotonic()
    lease = api.wait_status(tokens['demo'], lease['id'], 'ACTIVE',
                            timeout=60)
    rsv = lease['reservations'][0]
    assert rsv['flavor_id'] == rid
    assert rsv['aggregate_id'] is not None
    assert rsv['server_group_id'] is None
    active = time.monotonic()
    flavor = compute.admin.flavors.get(rid)
    assert flavor.get_keys()['resources:' + base.resource_class(rid)] == '1'

    mine = [boot(compute, 'demo', rid) for _ in range(2)]
    for s in mine:
        assert s.status == 'ACTIVE', getattr(s, 'fault', None)
        assert compute.host_of(s) in names
    over = boot(compute, 'demo', rid)
    assert over.status == 'ERROR'
    assert 'No valid host' in over.fault['message']
    with pytest.raises((nova_exc.BadRequest, nova_exc.NotFound)):
        boot(compute, 'alt', rid, wait=False)
    booted = time.monotonic()

    resp = api.update(tokens['demo'], lease['id'],
                      {'end_date': iso_in(2)})
    assert resp.status_code == 200, resp.text
    api.wait_status(tokens['demo'], lease['id'], 'TERMINATED', timeout=90)
    ended = time.monotonic()
    for s in mine + [over]:
        assert compute.gone(s.id)
    assert_nothing_left(compute, placement, rid)
    print(f'\nAPI lease: create {created - t0:.1f} s (with 3 host '
          f'registrations), ACTIVE {active - created:.1f} s later, boots '
          f'{booted - active:.1f} s, end {ended - booted:.1f} s, total '
          f'{time.monotonic() - t0:.1f} s')


# -- Heat's OS::Blazar::Lease ----------------------------------------------------

def heat_template(start, end, amount=1):
    """A lease with a virtual:instance reservation and a server booted with
    the reservation's flavor (the template a Blazar user writes)."""
    return {
        'heat_template_version': '2018-08-31',
        'resources': {
            'lease': {
                'type': 'OS::Blazar::Lease',
                'properties': {
                    'name': 'heat-instances', 'start_date': start,
                    'end_date': end,
                    'reservations': [{
                        'resource_type': 'virtual:instance',
                        'amount': amount, 'vcpus': 1, 'memory_mb': 512,
                        'disk_gb': 1, 'affinity': False,
                        'resource_properties': ''}]}},
            'server': {
                'type': 'OS::Nova::Server',
                'properties': {
                    'image': 'fake-image',
                    'networks': [{'allocate_network': 'none'}],
                    'flavor': {'get_attr': ['lease', 'reservations', 0,
                                            'flavor_id']}}},
        },
        'outputs': {
            'reservation': {'value': {'get_attr': ['lease', 'reservations',
                                                   0]}},
            'server': {'value': {'get_resource': 'server'}},
        },
    }


class Heat:
    """Heat's REST API as one of the harness's users."""

    def __init__(self, cloud, who):
        from keystoneauth1 import adapter
        self.api = adapter.Adapter(cloud.session(who),
                                   service_type='orchestration',
                                   interface='public',
                                   region_name=cloud.region)

    def create(self, name, template):
        return self.api.post('/stacks', json={
            'stack_name': name, 'template': template, 'timeout_mins': 5},
            raise_exc=False)

    def delete(self, name, timeout=90):
        """Delete the stack and wait until it is gone (while Climate's API
        runs: Heat deletes the lease through it, and a stack whose lease
        cannot be deleted blocks ``cloud-harness.sh purge``)."""
        asked = [0.0]

        def gone():
            resp = self.api.get(f'/stacks/{name}', raise_exc=False)
            if resp.status_code == 404:
                return True
            status = resp.json()['stack']['stack_status']
            if status == 'DELETE_COMPLETE':
                return True
            # a lease still starting answers 409 "try again in a moment"
            if not status.endswith('IN_PROGRESS') and \
                    time.monotonic() - asked[0] > 2:
                self.api.delete(f'/stacks/{name}', raise_exc=False)
                asked[0] = time.monotonic()
            return False
        wait_for(gone, timeout, interval=0.5,
                 message=f'stack {name} deleted')

    def stack(self, name):
        return self.api.get(f'/stacks/{name}').json()['stack']

    def settled(self, name, timeout=90):
        return wait_for(lambda: (lambda s: s if not s['stack_status'].endswith(
            'IN_PROGRESS') else None)(self.stack(name)), timeout,
            message=f'stack {name} settled')


def _iso(seconds):
    from climate.tests.integration.identity import iso_in
    return iso_in(seconds)


def _minute(offset_seconds=0):
    when = datetime.datetime.now(datetime.timezone.utc) + \
        datetime.timedelta(seconds=offset_seconds)
    return when.strftime('%Y-%m-%d %H:%M')


def _this_minute(margin=25):
    """The current minute, as Heat's Blazar resources write a start of
    "now"; first waits for the next minute when fewer than ``margin``
    seconds are left in this one: Blazar (and Climate) refuse a start in
    a minute that is over by the time the stack's lease is created."""
    second = datetime.datetime.now(datetime.timezone.utc).second
    if second > 60 - margin:
        time.sleep(60.5 - second)
    return _minute()



def test_members_see_the_pool_not_the_hosts(cloud, api, tokens):
    """Heat's OS::Blazar::Lease validates every lease, of any resource
    type, by listing hosts (``BlazarClientPlugin.has_host``: GET
    /v1/os-hosts) with the user's token.  A project member gets one
    entry standing for the pool of reservable hosts, never a host."""
    names = cloud.info['compute_hosts'][:1]
    resp = api.call('GET', '/v1/os-hosts', tokens['demo'])
    assert resp.status_code == 200, resp.text
    assert resp.json()['hosts'] == []
    register_hosts(api, tokens['admin'], names)
    resp = api.call('GET', '/v1/os-hosts', tokens['demo'])
    assert resp.status_code == 200, resp.text
    hosts = resp.json()['hosts']
    assert [h['id'] for h in hosts] == ['reservable-hosts']
    assert names[0] not in resp.text


def test_heat_lease_and_server(request, cloud, api, tokens, compute,
                               placement):
    """OS::Blazar::Lease (virtual:instance, starting now) and an
    OS::Nova::Server with its flavor_id, in one stack of a project user
    (demo); the lease's end leaves nothing behind."""
    t0 = time.monotonic()
    register_hosts(api, tokens['admin'], cloud.info['compute_hosts'][:3])
    heat = Heat(cloud, 'demo')
    resp = heat.create('instances', heat_template(_this_minute(),
                                                          _minute(600)))
    assert resp.status_code == 201, resp.text
    request.addfinalizer(lambda: heat.delete('instances'))
    stack = heat.settled('instances')
    outputs = {o['output_key']: o['output_value']
               for o in stack.get('outputs') or []}
    rsv = outputs['reservation']
    assert stack['stack_status'] == 'CREATE_COMPLETE', \
        stack['stack_status_reason']
    rid = rsv['id']
    assert rsv['flavor_id'] == rid
    # the host is the admin's to see
    server = compute.admin.servers.get(outputs['server'])
    assert compute.host_of(server) in cloud.info['compute_hosts'][:3]
    created = time.monotonic()
    lease_id = rsv['lease_id']
    resp = api.update(tokens['admin'], lease_id,
                      {'end_date': _iso(2)})
    assert resp.status_code == 200, resp.text
    api.wait_status(tokens['admin'], lease_id, 'TERMINATED', timeout=90)
    assert_nothing_left(compute, placement, rid)
    print(f'\nHeat stack {created - t0:.1f} s, lease end '
          f'{time.monotonic() - created:.1f} s')



def blazar_host_template(host, flavor, start, end):
    """Heat's OS::Blazar::Host registers a host, OS::Blazar::Lease reserves
    it (physical:host), and a server boots on it with the ``reservation``
    hint: the template an operator writes for Blazar.  ``OS::Heat::Delay``
    gives the lease, which starts now, the moment its start takes: Heat
    has no way to wait for a lease to be ACTIVE, with Blazar as with
    Climate."""
    return {
        'heat_template_version': '2018-08-31',
        'resources': {
            'host': {'type': 'OS::Blazar::Host',
                     'properties': {'name': host,
                                    'extra_capability': {'rack': 'r1'}}},
            'lease': {
                'type': 'OS::Blazar::Lease',
                'depends_on': 'host',
                'properties': {
                    'name': 'heat-hosts', 'start_date': start,
                    'end_date': end,
                    'reservations': [{
                        'resource_type': 'physical:host', 'min': 1,
                        'max': 1, 'hypervisor_properties': '',
                        'resource_properties': '["==", "$rack", "r1"]'}]}},
            'started': {'type': 'OS::Heat::Delay',
                        'depends_on': 'lease',
                        'properties': {'min_wait': 10,
                                       'actions': ['CREATE']}},
            'server': {
                'type': 'OS::Nova::Server',
                'depends_on': 'started',
                'properties': {
                    'image': 'fake-image', 'flavor': flavor,
                    'networks': [{'allocate_network': 'none'}],
                    'scheduler_hints': {'reservation': {'get_attr': [
                        'lease', 'reservations', 0, 'id']}}}},
        },
        'outputs': {
            'host': {'value': {'get_attr': ['host', 'hypervisor_hostname']}},
            'lease': {'value': {'get_resource': 'lease'}},
            'server': {'value': {'get_resource': 'server'}},
        },
    }


def test_heat_blazar_host_lease_and_server(request, cloud, api, tokens,
                                           compute):
    """OS::Blazar::Host + OS::Blazar::Lease (physical:host) + a server with
    the reservation hint, in one admin stack: the server runs on the
    host the stack registered; deleting the stack deletes the server, the
    lease and the host."""
    host = cloud.info['compute_hosts'][0]
    # Heat validates every OS::Blazar::Lease by asking that some host be
    # registered already, before the stack registers its own (with
    # Blazar as with Climate): another host is
    register_hosts(api, tokens['admin'], cloud.info['compute_hosts'][1:2])
    heat = Heat(cloud, 'admin')
    resp = heat.create('hosts', blazar_host_template(
        host, compute.flavor, _this_minute(), _minute(600)))
    assert resp.status_code == 201, resp.text
    request.addfinalizer(lambda: heat.delete('hosts'))
    stack = heat.settled('hosts')
    assert stack['stack_status'] == 'CREATE_COMPLETE', \
        stack['stack_status_reason']
    outputs = {o['output_key']: o['output_value']
               for o in stack.get('outputs') or []}
    assert outputs['host'] == host
    lease = api.lease(tokens['admin'], outputs['lease'])
    assert lease['status'] == 'ACTIVE', lease
    server = compute.admin.servers.get(outputs['server'])
    assert compute.host_of(server) == host
    rid = lease['reservations'][0]['id']
    assert compute.hosts_of(rid) == [host]

    heat.delete('hosts')
    resp = api.call('GET', '/v1/leases/%s' % lease['id'], tokens['admin'])
    assert resp.status_code == 404, resp.text
    hosts = api.call('GET', '/v1/os-hosts', tokens['admin']).json()['hosts']
    assert host not in [h['hypervisor_hostname'] for h in hosts]
    assert compute.gone(server.id)
