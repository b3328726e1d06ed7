"""``pinning.pin``: a template rewritten to use what its lease's parts
hold, on templates alone (the needs derived by ``needs.derive``)."""

import copy

from climate.plugins.virtual_stack import needs as stack_needs
from climate.plugins.virtual_stack import pinning

FLAVORS = {'m1.small': {'id': '2', 'vcpus': 1, 'ram': 2048, 'disk': 20},
           'm1.large': {'id': '4', 'vcpus': 4, 'ram': 8192, 'disk': 80}}

TEMPLATE = {
    'heat_template_version': '2018-08-31',
    'resources': {
        'sg': {'type': 'OS::Nova::ServerGroup',
               'properties': {'policies': ['anti-affinity']}},
        'app': {'type': 'OS::Nova::Server',
                'properties': {'flavor': 'm1.small', 'image': 'cirros',
                               'scheduler_hints': {
                                   'group': {'get_resource': 'sg'},
                                   'zone': 'a'}}},
        'web': {'type': 'OS::Heat::ResourceGroup',
                'properties': {'count': 2, 'resource_def': {
                    'type': 'OS::Nova::Server',
                    'properties': {'flavor': 'm1.large',
                                   'image': 'cirros'}}}},
        'asg': {'type': 'OS::Heat::AutoScalingGroup',
                'properties': {'min_size': 1, 'max_size': 2, 'resource': {
                    'type': 'OS::Heat::ResourceGroup',
                    'properties': {'count': 2, 'resource_def': {
                        'type': 'OS::Nova::Server',
                        'properties': {'flavor': 'm1.large',
                                       'image': 'cirros'}}}}}},
        'db': {'type': 'OS::Nova::Server',
               'properties': {'flavor': 'm1.large', 'image': 'cirros',
                              'block_device_mapping_v2': [
                                  {'volume_size': 5, 'boot_index': 0}]}},
        'data': {'type': 'OS::Cinder::Volume',
                 'properties': {'size': 10,
                                'scheduler_hints': {'other': 'x'}}},
        'logs': {'type': 'OS::Cinder::Volume', 'properties': {'size': 1}},
        'port': {'type': 'OS::Neutron::Port',
                 'properties': {'network': 'private'}},
        'ip': {'type': 'OS::Neutron::FloatingIP',
               'depends_on': 'port',
               'properties': {'floating_network': 'public',
                              'port_id': {'get_resource': 'port'}}},
        'ip2': {'type': 'OS::Neutron::FloatingIP',
                'properties': {'floating_network': 'public'}},
        'ips': {'type': 'OS::Heat::ResourceGroup',
                'properties': {'count': 2, 'resource_def': {
                    'type': 'OS::Neutron::FloatingIP',
                    'properties': {'floating_network': 'public'}}}},
    },
}

#: The parts' views after their start, by need (see ``parts``).
PART_IDS = {
    ('virtual:instance', 'app'): 'r-app',
    ('virtual:instance', 'asg/resource/resource_def'): 'r-large',
    ('virtual:volume', 'data'): 'r-vol',
    ('virtual:floatingip', 'ip'): 'r-fip',
}


def derived(template=TEMPLATE):
    """The template's needs, each with the id of the part holding it."""
    found = stack_needs.derive(template, flavors=FLAVORS)['needs']
    return [dict(need, reservation_id=PART_IDS[
        (need['resource_type'], need['resources'][0])]) for need in found]


def parts(fip_ids=('fip-1', 'fip-2', 'fip-3', 'fip-4')):
    return {
        'r-app': {'id': 'r-app', 'resource_type': 'virtual:instance',
                  'flavor_id': 'r-app', 'server_group_id': 'sg-uuid',
                  'affinity': False},
        'r-large': {'id': 'r-large', 'resource_type': 'virtual:instance',
                    'flavor_id': 'r-large', 'server_group_id': None,
                    'affinity': None},
        'r-vol': {'id': 'r-vol', 'resource_type': 'virtual:volume'},
        'r-fip': {'id': 'r-fip', 'resource_type': 'virtual:floatingip',
                  'floatingips': ['172.24.4.%d' % i
                                  for i in range(1, len(fip_ids) + 1)],
                  'floatingip_ids': list(fip_ids)},
    }


def resources(pinned):
    return pinned['resources']


def test_the_needs_the_tests_pin():
    """The template derives the needs the other tests rely on."""
    assert [(n['resource_type'], n['resources']) for n in derived()] == [
        ('virtual:floatingip', ['ip', 'ip2', 'ips/resource_def']),
        ('virtual:instance', ['app']),
        ('virtual:instance', ['asg/resource/resource_def', 'db',
                              'web/resource_def']),
        ('virtual:volume', ['data', 'db/block_device_mapping_v2/0',
                            'logs']),
    ]


def test_the_input_template_is_not_modified():
    before = copy.deepcopy(TEMPLATE)
    pinned, _unpinned = pinning.pin(TEMPLATE, derived(), parts())
    assert TEMPLATE == before
    assert pinned != before


def test_a_server_gets_its_flavor_and_server_group_merged_into_hints():
    pinned, _unpinned = pinning.pin(TEMPLATE, derived(), parts())
    props = resources(pinned)['app']['properties']
    assert props['flavor'] == 'r-app'
    assert props['scheduler_hints'] == {'group': 'sg-uuid', 'zone': 'a'}
    assert props['image'] == 'cirros'


def test_a_part_without_server_group_leaves_the_hints_alone():
    pinned, _unpinned = pinning.pin(TEMPLATE, derived(), parts())
    db = resources(pinned)['db']['properties']
    assert db['flavor'] == 'r-large'
    assert 'scheduler_hints' not in db
    assert db['block_device_mapping_v2'] == [
        {'volume_size': 5, 'boot_index': 0}]


def test_group_members_and_nested_group_members_are_pinned():
    pinned, _unpinned = pinning.pin(TEMPLATE, derived(), parts())
    web = resources(pinned)['web']['properties']
    assert web['count'] == 2
    assert web['resource_def']['properties'] == {'flavor': 'r-large',
                                                 'image': 'cirros'}
    asg = resources(pinned)['asg']['properties']
    inner = asg['resource']['properties']['resource_def']['properties']
    assert inner == {'flavor': 'r-large', 'image': 'cirros'}
    assert asg['max_size'] == 2


def test_a_volume_gets_its_reservation_type_and_hint_merged():
    pinned, _unpinned = pinning.pin(TEMPLATE, derived(), parts())
    assert resources(pinned)['data']['properties'] == {
        'size': 10, 'volume_type': 'reservation:r-vol',
        'scheduler_hints': {'other': 'x', 'reservation': 'r-vol'}}
    assert resources(pinned)['logs']['properties'] == {
        'size': 1, 'volume_type': 'reservation:r-vol',
        'scheduler_hints': {'reservation': 'r-vol'}}


def test_top_level_floating_ips_become_the_reserved_ones_in_order():
    pinned, _unpinned = pinning.pin(TEMPLATE, derived(), parts())
    assert resources(pinned)['ip2'] == {'type': 'OS::Neutron::FloatingIP',
                                        'external_id': 'fip-2'}
    ip = resources(pinned)['ip']
    assert ip == {'type': 'OS::Neutron::FloatingIP', 'depends_on': 'port',
                  'external_id': 'fip-1'}
    # the port it was associated with stays associated
    assert resources(pinned)['ip_climate_association'] == {
        'type': 'OS::Neutron::FloatingIPAssociation',
        'properties': {'floatingip_id': {'get_resource': 'ip'},
                       'port_id': {'get_resource': 'port'}}}
    # the group's floating IPs stay Heat's to make
    assert resources(pinned)['ips'] == TEMPLATE['resources']['ips']


def test_what_cannot_be_pinned_is_listed():
    _pinned, unpinned = pinning.pin(TEMPLATE, derived(), parts())
    assert [item['resource'] for item in unpinned] == [
        'ips/resource_def', 'db/block_device_mapping_v2/0']
    assert 'inside a group' in unpinned[0]['reason']
    assert 'Nova makes this volume' in unpinned[1]['reason']


def test_fewer_reserved_floating_ips_than_resources_are_listed():
    pinned, unpinned = pinning.pin(TEMPLATE, derived(), parts(('fip-1',)))
    assert resources(pinned)['ip']['external_id'] == 'fip-1'
    assert resources(pinned)['ip2'] == TEMPLATE['resources']['ip2']
    assert {'resource': 'ip2', 'reason': 'no reserved floating IP is left '
            'for it'} in unpinned


def test_external_id_needs_hot_2016_10_14():
    old = dict(copy.deepcopy(TEMPLATE), heat_template_version='2016-04-08')
    pinned, unpinned = pinning.pin(old, derived(), parts())
    assert resources(pinned)['ip'] == TEMPLATE['resources']['ip']
    assert 'ip' in [item['resource'] for item in unpinned]
    named = dict(copy.deepcopy(TEMPLATE), heat_template_version='rocky')
    pinned, _unpinned = pinning.pin(named, derived(), parts())
    assert resources(pinned)['ip']['external_id'] == 'fip-1'


def test_a_missing_part_or_a_function_in_the_way_is_listed():
    template = copy.deepcopy(TEMPLATE)
    template['resources']['web']['properties']['resource_def'] = {
        'get_param': 'member'}
    needs = derived()
    for need in needs:
        if need['resource_type'] == 'virtual:volume':
            need['reservation_id'] = 'r-unknown'
    pinned, unpinned = pinning.pin(template, needs, parts())
    reasons = {item['resource']: item['reason'] for item in unpinned}
    assert 'function' in reasons['web/resource_def']
    assert 'r-unknown' in reasons['data']
    assert 'r-unknown' in reasons['logs']
    assert 'volume_type' not in resources(pinned)['data']['properties']
    # the other members of the need are pinned all the same
    assert resources(pinned)['db']['properties']['flavor'] == 'r-large'


def test_hints_given_through_a_function_keep_the_flavor_pinned():
    template = copy.deepcopy(TEMPLATE)
    template['resources']['app']['properties']['scheduler_hints'] = {
        'get_param': 'hints'}
    pinned, unpinned = pinning.pin(template, derived(), parts())
    app = resources(pinned)['app']['properties']
    assert app['flavor'] == 'r-app'
    assert app['scheduler_hints'] == {'get_param': 'hints'}
    assert 'sg-uuid' in {item['resource']: item['reason']
                         for item in unpinned}['app']
