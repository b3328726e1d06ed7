"""``network`` on the harness's real Neutron, through Climate's API.

The harness configures VLAN ranges ``physnet1:1000:1099``; Climate's
manager runs with ``[networks] inventory = neutron``.  An admin registers
the segment ``vlan physnet1 1001``; the demo project leases it, starting
a few seconds later.  At the start a network of the demo project exists
with that segment (provider attributes, read as admin) and the
reservation shows it; the project gives it a subnet and a port during
the lease; at the end the port, the subnet and the network are gone and
the reservation reports nothing left behind.
"""

import json

from keystoneauth1 import adapter

from climate.tests.integration.identity import iso_in

#: Seconds from a lease's create to its start.
LEAD = 6


def neutron(cloud, who):
    return adapter.Adapter(cloud.session(who), service_type='network',
                           interface='public', region_name=cloud.region)


def _get(net_api, path, ok=(200,)):
    resp = net_api.get('/v2.0' + path, raise_exc=False)
    assert resp.status_code in ok, resp.text
    return resp


def test_a_network_made_on_the_segment_and_cleared_at_the_end(
        cloud, api, tokens):
    admin, demo = neutron(cloud, 'admin'), neutron(cloud, 'demo')
    demo_project = cloud.session('demo').get_project_id()
    resp = api.call('POST', '/v1/networks', tokens['admin'], {
        'network_type': 'vlan', 'physical_network': 'physnet1',
        'segment_id': 1001})
    assert resp.status_code == 201, resp.text
    resp = api.call('POST', '/v1/leases', tokens['demo'], {
        'name': 'a-vlan', 'start_date': iso_in(LEAD),
        'end_date': iso_in(LEAD + 600), 'events': [],
        'reservations': [{
            'resource_type': 'network', 'network_name': 'reserved-net',
            'resource_properties': json.dumps(
                ['==', '$physical_network', 'physnet1'])}]})
    assert resp.status_code == 201, resp.text
    lease = resp.json()['lease']
    lease = api.wait_status(tokens['demo'], lease['id'], 'ACTIVE',
                            timeout=120)
    res = lease['reservations'][0]
    assert (res['network_type'], res['physical_network'],
            res['segment_id']) == ('vlan', 'physnet1', 1001)
    net_id = res['network_id']
    assert net_id
    net = _get(admin, '/networks/' + net_id).json()['network']
    assert net['provider:network_type'] == 'vlan'
    assert net['provider:physical_network'] == 'physnet1'
    assert net['provider:segmentation_id'] == 1001
    assert net['project_id'] == demo_project
    assert net['name'] == 'reserved-net'
    assert 'reservation:' + res['id'] in net.get('tags', [])

    # the project uses it
    resp = demo.post('/v2.0/subnets', json={'subnet': {
        'network_id': net_id, 'cidr': '10.77.0.0/24', 'ip_version': 4,
        'name': 'reserved-subnet'}}, raise_exc=False)
    assert resp.status_code == 201, resp.text
    subnet_id = resp.json()['subnet']['id']
    resp = demo.post('/v2.0/ports', json={'port': {
        'network_id': net_id, 'name': 'reserved-port'}}, raise_exc=False)
    assert resp.status_code == 201, resp.text
    port_id = resp.json()['port']['id']

    resp = api.update(tokens['demo'], lease['id'],
                      {'end_date': iso_in(2)})
    assert resp.status_code == 200, resp.text
    lease = api.wait_status(tokens['demo'], lease['id'], 'TERMINATED',
                            timeout=120)
    assert lease['reservations'][0].get('cleanup_errors') in ([], None)
    _get(admin, '/ports/' + port_id, ok=(404,))
    _get(admin, '/subnets/' + subnet_id, ok=(404,))
    _get(admin, '/networks/' + net_id, ok=(404,))
    # the segment is free again
    seg = api.call('GET', '/v1/networks', tokens['admin']).json()['networks']
    assert [s['segment_id'] for s in seg] == [1001]
