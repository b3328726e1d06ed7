"""Climate's own Heat resource, ``OS::Climate::Lease``
(``climate/heat_plugin``, loaded by the harness's heat-engine through
``plugin_dirs``), in a project user's stack on the harness's real Heat,
Nova and Neutron.

One lease of two types Heat's ``OS::Blazar::Lease`` cannot ask for
together (instance slots and a registered floating IP address), and a
server booted on the reservation's flavor taken from the resource's
``flavor_ids`` attribute: the stack is complete once the lease is active.
A stack update that fits (a later end, one more slot) changes the same
lease in place; one that does not fit fails the update with Climate's
409 and leaves the lease as it was; deleting the stack deletes the lease
and its server.
"""

import datetime

from climate.tests.functional.procs import wait_for
from climate.tests.integration import compute as compute_mod
from climate.tests.integration.test_floatingip_reservations import FREE
from climate.tests.integration.test_floatingip_reservations import Neutron
from climate.tests.integration.test_floatingip_reservations import registered
from climate.tests.integration.test_instance_reservations import Heat
from climate.tests.integration.test_instance_reservations import \
    clean_placement  # noqa: F401 (autouse here too)
from climate.tests.integration.test_instance_reservations import \
    conf  # noqa: F401
from climate.tests.integration.test_instance_reservations import \
    placement  # noqa: F401
from climate.tests.integration.test_instance_reservations import \
    register_hosts

WAIT = compute_mod.WAIT


def _at(minutes):
    when = datetime.datetime.now(datetime.timezone.utc) + \
        datetime.timedelta(minutes=minutes)
    return when.strftime('%Y-%m-%d %H:%M')


def template(public_id, image):
    return {
        'heat_template_version': '2018-08-31',
        'parameters': {
            'end': {'type': 'string'},
            'amount': {'type': 'number', 'default': 1}},
        'resources': {
            'lease': {'type': 'OS::Climate::Lease', 'properties': {
                'end_date': {'get_param': 'end'},
                'reservations': [
                    {'resource_type': 'virtual:instance',
                     'amount': {'get_param': 'amount'}, 'vcpus': 1,
                     'memory_mb': 512, 'disk_gb': 1, 'affinity': False},
                    {'resource_type': 'virtual:floatingip',
                     'network_id': public_id, 'amount': 1}]}},
            'server': {'type': 'OS::Nova::Server', 'properties': {
                'image': image, 'networks': [{'allocate_network': 'none'}],
                'flavor': {'get_attr': ['lease', 'flavor_ids', 0]}}},
        },
        'outputs': {
            'lease': {'value': {'get_resource': 'lease'}},
            'ids': {'value': {'get_attr': ['lease', 'reservation_ids']}},
            'flavors': {'value': {'get_attr': ['lease', 'flavor_ids']}},
            'addresses': {'value': {'get_attr': ['lease', 'floatingips']}},
            'status': {'value': {'get_attr': ['lease', 'status']}},
            'server': {'value': {'get_resource': 'server'}},
        },
    }


def outputs_of(stack):
    return {o['output_key']: o['output_value']
            for o in stack.get('outputs') or []}


def by_type(lease):
    return {r['resource_type']: r for r in lease['reservations']}


def test_climate_lease_resource_create_update_delete(
        request, cloud, api, tokens, compute):
    hosts = cloud.info['compute_hosts'][:2]
    register_hosts(api, tokens['admin'], hosts)
    neutron = Neutron(cloud)
    registered(api, tokens['admin'], neutron, FREE[1])
    heat = Heat(cloud, 'demo')
    tmpl = template(neutron.public['id'], cloud.info['image'])
    resp = heat.api.post('/stacks', json={
        'stack_name': 'climate-lease', 'template': tmpl, 'timeout_mins': 5,
        'parameters': {'end': _at(30)}}, raise_exc=False)
    assert resp.status_code == 201, resp.text
    request.addfinalizer(lambda: heat.delete('climate-lease'))
    stack = heat.settled('climate-lease')
    assert stack['stack_status'] == 'CREATE_COMPLETE', \
        stack['stack_status_reason']
    out = outputs_of(stack)
    lease_id = out['lease']
    assert out['status'] == 'ACTIVE'
    lease = api.call('GET', f'/v1/leases/{lease_id}', tokens['demo']).json()[
        'lease']
    assert lease['status'] == 'ACTIVE'
    kinds = by_type(lease)
    # the attributes follow the template's order, whatever Climate's
    assert out['ids'] == [kinds['virtual:instance']['id'],
                          kinds['virtual:floatingip']['id']]
    assert out['flavors'] == [kinds['virtual:instance']['flavor_id'], None]
    assert out['addresses'] == [FREE[1]]
    server = compute.admin.servers.get(out['server'])
    assert server.flavor['original_name'] == compute.admin.flavors.get(
        kinds['virtual:instance']['flavor_id']).name
    assert compute.host_of(server) in hosts

    # an update that fits: a later end, one more slot, the same lease
    stack_url = '/stacks/climate-lease/%s' % stack['id']
    resp = heat.api.patch(stack_url, json={
        'parameters': {'end': _at(60), 'amount': 2}}, raise_exc=False)
    assert resp.status_code == 202, resp.text
    stack = heat.settled('climate-lease')
    assert stack['stack_status'] == 'UPDATE_COMPLETE', \
        stack['stack_status_reason']
    assert outputs_of(stack)['lease'] == lease_id
    updated = api.call('GET', f'/v1/leases/{lease_id}',
                       tokens['demo']).json()['lease']
    assert by_type(updated)['virtual:instance']['amount'] == 2
    assert updated['end_date'] > lease['end_date']

    # one that does not fit: Climate's 409 fails it, the lease unchanged
    resp = heat.api.patch(stack_url, json={
        'parameters': {'amount': 5000}}, raise_exc=False)
    assert resp.status_code == 202, resp.text
    stack = heat.settled('climate-lease')
    assert stack['stack_status'] == 'UPDATE_FAILED', stack
    assert 'Climate answered 409' in stack['stack_status_reason'], stack
    after = api.call('GET', f'/v1/leases/{lease_id}',
                     tokens['demo']).json()['lease']
    assert by_type(after)['virtual:instance']['amount'] == 2
    assert after['end_date'] == updated['end_date']

    heat.delete('climate-lease')
    resp = api.call('GET', f'/v1/leases/{lease_id}', tokens['demo'])
    assert resp.status_code == 404, resp.text
    wait_for(lambda: compute.gone(out['server']), WAIT,
             message='server %s deleted' % out['server'])
    assert not neutron.fips(FREE[1])
