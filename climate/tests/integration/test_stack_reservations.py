"""``virtual:stack`` on the harness's real Heat, Nova, Cinder and Neutron
(``[stacks] inventory = heat``), through Climate's API, as a project user.

A template of servers in a resource group, a volume and a floating IP
of ``public``: the lease books three parts (instance slots on the
registered hosts, gigabytes on a Cinder pool, the registered address).
At the start Heat makes the stack as the user, pinned to them: the
servers run with the reservation's flavor on the reserved hosts, the
volume has the reservation's volume type, the floating IP is the
reserved address.  The reservation shows the stack's id, status and
outputs.  Scaled from one server to two while active, the instance part
grows in place and Heat updates the stack (UPDATE_COMPLETE), the new
server on the reserved capacity too.  At the end the stack, its servers, volume and floating IP are
gone.  A template Heat refuses is a 400 with Heat's reason, nothing
written.

``on_start: wake`` with ``on_end: snapshot`` (one lease for both): the
stack is made after the create and its servers are SHELVED_OFFLOADED
before the start, ACTIVE on the instance part's hosts after it; at the
end an image of each server is in Glance, the project's, and the stack
is gone.  The instance part's flavor boots nothing while the woken
servers hold its slots (its Placement units all reserved).
"""

import time

from climate.plugins.virtual_instance.backends import base as \
    instance_backend
from climate.tests.functional.procs import wait_for
from climate.tests.integration import compute as compute_mod
from climate.tests.integration.identity import assert_error
from climate.tests.integration.identity import iso_in
from climate.tests.integration.test_floatingip_reservations import FREE
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
from climate.tests.integration.test_volume_reservations import \
    cinder  # noqa: F401
from climate.tests.integration.test_volume_reservations import \
    pools  # noqa: F401

WAIT = compute_mod.WAIT


def server_def(flavor, image):
    """An OS::Nova::Server definition without a network."""
    return {'type': 'OS::Nova::Server', 'properties': {
        'flavor': flavor, 'image': image,
        'networks': [{'allocate_network': 'none'}]}}


def template(public_id, flavor, image):
    return {
        'heat_template_version': '2018-08-31',
        'parameters': {'count': {'type': 'number', 'default': 1}},
        'resources': {
            'web': {'type': 'OS::Heat::ResourceGroup', 'properties': {
                'count': {'get_param': 'count'},
                'resource_def': server_def(flavor, image)}},
            'data': {'type': 'OS::Cinder::Volume',
                     'properties': {'size': 1}},
            'ip': {'type': 'OS::Neutron::FloatingIP',
                   'properties': {'floating_network': public_id}},
            # holds no capacity (the harness has no project network type
            # for an OS::Neutron::Net)
            'sg': {'type': 'OS::Neutron::SecurityGroup'},
        },
        'outputs': {
            'servers': {'value': {'get_attr': ['web', 'refs']}},
            'volume': {'value': {'get_resource': 'data'}},
            'address': {'value': {'get_attr': ['ip', 'floating_ip_address']}},
        },
    }


def parts_of(lease):
    [stack] = [r for r in lease['reservations']
               if r['resource_type'] == 'virtual:stack']
    parts = {r['resource_type']: r for r in lease['reservations']
             if r is not stack}
    return stack, parts


def test_a_stack_is_made_pinned_at_the_start_and_removed_at_the_end(
        cloud, api, tokens, compute, neutron, cinder, pools):
    # ``pools``: Climate has read the Cinder pools again since the purge
    # emptied its tables (its manager does so every few seconds)
    t0 = time.monotonic()
    hosts = cloud.info['compute_hosts'][:2]
    register_hosts(api, tokens['admin'], hosts)
    registered(api, tokens['admin'], neutron, FREE[0])
    public = neutron.public['id']
    resp = api.call('POST', '/v1/leases', tokens['demo'], {
        'name': 'web-stack', 'start_date': 'now', 'end_date': iso_in(900),
        'events': [], 'reservations': [{
            'resource_type': 'virtual:stack', 'stack_name': 'climate-it-web',
            'template': template(public, 'm1.tiny', cloud.info['image']),
            'parameters': {'count': 1}}]})
    assert resp.status_code == 201, resp.text
    lease = resp.json()['lease']
    stack, parts = parts_of(lease)
    assert sorted(parts) == ['virtual:floatingip', 'virtual:instance',
                             'virtual:volume']
    assert parts['virtual:instance']['amount'] == 1
    assert parts['virtual:floatingip']['floatingips'] == [FREE[0]]
    assert stack['free'] == [{'resource': 'sg',
                              'type': 'OS::Neutron::SecurityGroup'}]

    lease = api.wait_status(tokens['demo'], lease['id'], 'ACTIVE',
                            timeout=300)
    active = time.monotonic()
    heat = Heat(cloud, 'demo')
    stack, parts = parts_of(lease)
    assert stack['stack_status'] == 'CREATE_COMPLETE', stack
    first = {o['output_key']: o['output_value'] for o in stack['outputs']}
    assert len(first['servers']) == 1, first

    # the started stack scaled from one server to two: its instance part
    # grows in place, then Climate updates the stack as the user
    resp = api.update(tokens['demo'], lease['id'], {
        'reservations': [{'id': stack['id'], 'parameters': {'count': 2}}]})
    assert resp.status_code == 200, resp.text
    asked_grow = time.monotonic()
    grown, grown_parts = parts_of(resp.json()['lease'])
    assert grown_parts['virtual:instance']['id'] == \
        parts['virtual:instance']['id']
    assert grown_parts['virtual:instance']['amount'] == 2
    assert grown['stack_status'] in ('UPDATE_IN_PROGRESS',
                                     'UPDATE_COMPLETE'), grown

    def updated():
        found, _parts = parts_of(api.lease(tokens['demo'], lease['id']))
        assert found['stack_status'] in ('UPDATE_IN_PROGRESS',
                                         'UPDATE_COMPLETE'), found
        return found['stack_status'] == 'UPDATE_COMPLETE' and found
    stack = wait_for(updated, WAIT, interval=0.5,
                     message='the stack updated')
    updated_at = time.monotonic()
    assert heat.stack('climate-it-web')['stack_status'] == \
        'UPDATE_COMPLETE'
    outputs = {o['output_key']: o['output_value']
               for o in stack['outputs']}
    # Heat shows the user the same stack, in the project
    shown = heat.stack('climate-it-web')
    assert shown['id'] == stack['stack_id']
    assert {'climate', 'reservation:' + stack['id']} <= set(
        shown.get('tags') or [])
    # the servers run with the reservation's flavor on the reserved hosts
    instance = parts['virtual:instance']
    flavor = compute.admin.flavors.get(instance['flavor_id']).name
    assert len(outputs['servers']) == 2
    for server_id in outputs['servers']:
        server = compute.admin.servers.get(server_id)
        assert server.flavor['original_name'] == flavor, server.flavor
        assert compute.host_of(server) in hosts
    # the floating IP is the reserved address, the project's
    assert outputs['address'] == FREE[0]
    made = neutron.fips(FREE[0])[FREE[0]]
    assert made['project_id'] == neutron.project_id('demo')
    # the volume is of the reservation's volume type
    volume = cinder.get(outputs['volume'])
    assert volume.volume_type == 'reservation:%s' % \
        parts['virtual:volume']['id'], volume

    # an update Heat fails is rolled back by Heat, and the reservation
    # says why; the stack still runs its two servers
    failing = template(public, 'm1.tiny', cloud.info['image'])
    failing['resources']['boom'] = {'type': 'OS::Heat::TestResource',
                                    'properties': {'fail': True}}
    resp = api.update(tokens['demo'], lease['id'], {
        'reservations': [{'id': stack['id'], 'template': failing}]})
    assert resp.status_code == 200, resp.text
    asked = time.monotonic()

    def settled():
        found, _parts = parts_of(api.lease(tokens['demo'], lease['id']))
        status = found['stack_status']
        return status != 'UPDATE_ASKED' and \
            not status.endswith('_IN_PROGRESS') and found
    failed = wait_for(settled, WAIT, interval=0.5,
                      message='the failed update settled')
    rolled_back = time.monotonic()
    # (the harness's Heat sometimes fails the rollback itself, on an
    # IntegrityError of its own database: shown as such)
    assert failed['stack_status'] in ('ROLLBACK_COMPLETE',
                                      'ROLLBACK_FAILED'), failed[
        'stack_status_reason']
    # Heat's reason: the failed resource, named by its own UPDATE_FAILED
    # event or the stack's (which of them Heat writes last depends on its
    # engine's timing), never a cancellation that followed it
    assert failed['stack_status_reason'].startswith(
        'the update failed ('), failed
    assert 'resources.boom: Test Resource failed' in \
        failed['stack_status_reason'], failed
    for server_id in outputs['servers']:
        assert compute.admin.servers.get(server_id).status == 'ACTIVE'

    lease = api.end_now(tokens['demo'], lease['id'], timeout=120)
    ended = time.monotonic()
    stack, _parts = parts_of(lease)
    assert stack['stack_status'] == 'DELETE_COMPLETE', stack
    resp = heat.api.get('/stacks/climate-it-web', raise_exc=False)
    assert resp.status_code == 404 or resp.json()['stack'][
        'stack_status'] == 'DELETE_COMPLETE', resp.text
    for server_id in outputs['servers']:
        wait_for(lambda: compute.gone(server_id), WAIT,
                 message='server %s deleted' % server_id)
    assert not neutron.fips(FREE[0])
    print('\nstack: ACTIVE %.1f s after the create, updated to two '
          'servers %.1f s after the lease update, a failed update rolled '
          'back in %.1f s, ended in %.1f s' % (
              active - t0, updated_at - asked_grow, rolled_back - asked,
              ended - rolled_back))


def test_a_template_heat_refuses_is_a_400_with_its_reason(
        cloud, api, tokens, neutron):
    register_hosts(api, tokens['admin'], cloud.info['compute_hosts'][:1])
    bad = template(neutron.public['id'], 'm1.tiny', cloud.info['image'])
    # a property OS::Neutron::SecurityGroup does not have: Climate reads
    # nothing of that resource, Heat's validation refuses it
    bad['resources']['sg']['properties'] = {'colour': 'blue'}
    resp = api.call('POST', '/v1/leases', tokens['demo'], {
        'name': 'bad-stack', 'start_date': iso_in(3600),
        'end_date': iso_in(7200), 'events': [],
        'reservations': [{'resource_type': 'virtual:stack',
                          'template': bad}]})
    body = assert_error(resp, 400)
    assert 'Heat refused the template: ' in body['error_message'], body
    assert 'colour' in body['error_message'], body
    leases = api.call('GET', '/v1/leases', tokens['demo']).json()['leases']
    assert leases == []


def test_an_autoscaling_group_reserves_its_maximum_and_updates_fit_or_409(
        cloud, api, tokens, neutron):
    register_hosts(api, tokens['admin'], cloud.info['compute_hosts'][:1])
    asg = {
        'heat_template_version': '2018-08-31',
        'parameters': {'most': {'type': 'number', 'default': 2}},
        'resources': {'workers': {
            'type': 'OS::Heat::AutoScalingGroup', 'properties': {
                'min_size': 1, 'max_size': {'get_param': 'most'},
                'resource': server_def('m1.tiny', cloud.info['image'])}}}}
    resp = api.call('POST', '/v1/leases', tokens['demo'], {
        'name': 'workers', 'start_date': iso_in(3600),
        'end_date': iso_in(7200), 'events': [],
        'reservations': [{'resource_type': 'virtual:stack',
                          'template': asg}]})
    assert resp.status_code == 201, resp.text
    lease = resp.json()['lease']
    stack, parts = parts_of(lease)
    # the group's maximum, not its minimum
    assert parts['virtual:instance']['amount'] == 2
    assert stack['needs'][0]['resources'] == ['workers/resource']
    # more than the one host holds: 409 naming the group, nothing changed
    resp = api.update(tokens['demo'], lease['id'], {
        'reservations': [{'id': stack['id'],
                          'parameters': {'most': 100000}}]})
    body = assert_error(resp, 409)
    assert body['error_message'].startswith(
        "the template's resource workers/resource (virtual:instance): "), \
        body
    assert api.lease(tokens['demo'], lease['id'])['reservations'] == \
        lease['reservations']
    # three fit: the parts are booked anew
    resp = api.update(tokens['demo'], lease['id'], {
        'reservations': [{'id': stack['id'], 'parameters': {'most': 3}}]})
    assert resp.status_code == 200, resp.text
    _stack, parts = parts_of(resp.json()['lease'])
    assert parts['virtual:instance']['amount'] == 3


def test_a_wake_stack_sleeps_shelved_until_the_start_and_keeps_images(
        cloud, api, tokens, compute, placement):
    """``on_start: wake``: the stack is made after the create and its
    servers (a resource group's, nested) are SHELVED_OFFLOADED before the
    start; the start unshelves them onto the instance part's hosts.
    ``on_end: snapshot``: an image of each server outlives the stack."""
    t0 = time.monotonic()
    hosts = cloud.info['compute_hosts'][:2]
    register_hosts(api, tokens['admin'], hosts)
    servers_only = {
        'heat_template_version': '2018-08-31',
        'resources': {'web': {
            'type': 'OS::Heat::ResourceGroup', 'properties': {
                'count': 2,
                'resource_def': server_def('m1.tiny', cloud.info['image'])}}}}
    resp = api.call('POST', '/v1/leases', tokens['demo'], {
        'name': 'sleeping', 'start_date': iso_in(3600),
        'end_date': iso_in(7200), 'events': [],
        'reservations': [{'resource_type': 'virtual:stack',
                          'stack_name': 'climate-it-wake',
                          'template': servers_only, 'on_start': 'wake',
                          'on_end': 'snapshot'}]})
    assert resp.status_code == 201, resp.text
    lease = resp.json()['lease']
    stack, parts = parts_of(lease)
    # asked of Heat after the commit, followed by the periodic pass
    assert stack['stack_status'] == 'CREATE_IN_PROGRESS', stack

    def shelved():
        found, _parts = parts_of(api.lease(tokens['demo'], lease['id']))
        servers = found.get('servers') or []
        return len(servers) == 2 and all(
            s['status'] == 'SHELVED_OFFLOADED' for s in servers) and found
    stack = wait_for(shelved, WAIT, interval=0.5,
                     message='the stack\'s servers shelved')
    asleep = time.monotonic()
    assert stack['stack_status'] == 'CREATE_COMPLETE', stack
    assert {s['resource'] for s in stack['servers']} == {'web'}
    server_ids = [s['server_id'] for s in stack['servers']]
    for server_id in server_ids:
        server = compute.admin.servers.get(server_id)
        assert server.status == 'SHELVED_OFFLOADED', server_id
        assert not compute.host_of(server), server_id
    assert api.lease(tokens['demo'], lease['id'])['status'] == 'PENDING'

    resp = api.update(tokens['demo'], lease['id'],
                      {'start_date': iso_in(2)})
    assert resp.status_code == 200, resp.text
    moved = time.monotonic()
    lease = api.wait_status(tokens['demo'], lease['id'], 'ACTIVE',
                            timeout=300)
    active = time.monotonic()
    stack, parts = parts_of(lease)
    assert [s['server_id'] for s in stack['servers']] == server_ids
    assert all(s['status'] == 'ACTIVE' and s['error'] is None
               for s in stack['servers']), stack['servers']
    # on the hosts the instance part holds (its aggregate's)
    reserved = compute.admin.aggregates.get(
        parts['virtual:instance']['aggregate_id']).hosts
    for server_id in server_ids:
        server = compute.admin.servers.get(server_id)
        assert server.status == 'ACTIVE', server_id
        assert compute.host_of(server) in reserved, (server_id, reserved)
    # the woken servers hold the part's slots: its flavor's units are all
    # reserved, so the project cannot boot two more servers with it
    part_id = parts['virtual:instance']['id']
    rc = instance_backend.resource_class(part_id)
    units = [placement.inventories(rp['uuid'])[1][rc]
             for rp in placement.providers(member_of=part_id)]
    assert sum(u['total'] for u in units) == 2, units
    assert all(u['reserved'] == u['total'] for u in units), units

    lease = api.end_now(tokens['demo'], lease['id'], timeout=240)
    ended = time.monotonic()
    stack, _parts = parts_of(lease)
    assert stack['stack_status'] == 'DELETE_COMPLETE', stack
    heat = Heat(cloud, 'demo')
    resp = heat.api.get('/stacks/climate-it-wake', raise_exc=False)
    assert resp.status_code == 404 or resp.json()['stack'][
        'stack_status'] == 'DELETE_COMPLETE', resp.text
    images = {i['server_id']: i['image_id'] for i in stack['images']}
    assert sorted(images) == sorted(server_ids)
    for server_id in server_ids:
        assert compute.gone(server_id)
        [image] = compute.images_named('reservation-%s-%s' % (
            stack['id'], server_id))
        assert image['id'] == images[server_id]
        # Nova's snapshot of that server (the fake driver uploads no
        # data: the image stays queued), in the lease's project
        assert image['instance_uuid'] == server_id, image
        assert image['owner'] == compute.project_id('demo'), image
        compute.image_api.delete('/v2/images/%s' % image['id'])
    print('\nwake stack: shelved %.1f s after the create, ACTIVE %.1f s '
          'after the start moved, ended (snapshots, delete) in %.1f s' % (
              asleep - t0, active - moved, ended - active))
