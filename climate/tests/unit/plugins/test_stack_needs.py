"""What a Heat stack needs (climate.plugins.virtual_stack.needs): each
resource kind, merging, groups (ResourceGroup count, AutoScalingGroup
max_size, nesting), block device volumes, affinity, parameters and the
environment's precedence, the resource registry, conditions, and each
400; and a property: the instances derived are the servers a brute-force
expansion of random nested groups counts."""

import collections

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import pytest

from climate import exceptions
from climate.plugins.virtual_stack import needs

# fixed seed, bounded: the same examples on every run
PROPERTY = settings(derandomize=True, max_examples=150, deadline=None,
                    database=None)

FLAVORS = {
    'm1.small': {'id': 'f-small', 'vcpus': 1, 'ram': 2048, 'disk': 20},
    'm1.large': {'id': 'f-large', 'vcpus': 4, 'ram': 8192, 'disk': 80},
}


def hot(resources, **sections):
    """A HOT template of ``resources`` (and other sections)."""
    return dict(heat_template_version='2021-04-16', resources=resources,
                **sections)


def server(flavor='m1.small', **props):
    return {'type': 'OS::Nova::Server',
            'properties': dict(flavor=flavor, image='cirros', **props)}


def volume(size, **props):
    return {'type': 'OS::Cinder::Volume',
            'properties': dict(size=size, **props)}


def fip(network='public'):
    return {'type': 'OS::Neutron::FloatingIP',
            'properties': {'floating_network': network}}


def group(member, count=None):
    props = {'resource_def': member}
    if count is not None:
        props['count'] = count
    return {'type': 'OS::Heat::ResourceGroup', 'properties': props}


def asg(member, max_size, min_size=1):
    return {'type': 'OS::Heat::AutoScalingGroup',
            'properties': {'min_size': min_size, 'max_size': max_size,
                           'resource': member}}


def derive(resources, **kwargs):
    kwargs.setdefault('flavors', FLAVORS)
    sections = {k: kwargs.pop(k) for k in ('parameters_section',
                                           'conditions') if k in kwargs}
    if 'parameters_section' in sections:
        sections['parameters'] = sections.pop('parameters_section')
    return needs.derive(hot(resources, **sections), **kwargs)


def by_type(derived, resource_type):
    return [n for n in derived['needs'] if n['resource_type'] == resource_type]


def invalid(resources, *words, **kwargs):
    """derive() must be a 400 whose sentence holds each of ``words``."""
    with pytest.raises(exceptions.InvalidInput) as caught:
        derive(resources, **kwargs)
    assert caught.value.code == 400
    for word in words:
        assert word in str(caught.value), str(caught.value)
    return str(caught.value)


# -- each kind ----------------------------------------------------------------

def test_server_is_an_instance_slot_of_its_flavor():
    derived = derive({'web': server('m1.large')})
    assert derived == {
        'needs': [{'resource_type': 'virtual:instance', 'amount': 1,
                   'vcpus': 4, 'memory_mb': 8192, 'disk_gb': 80,
                   'affinity': None, 'resources': ['web']}],
        'free': [], 'unreservable': []}


def test_flavor_by_id_is_the_same_flavor():
    derived = derive({'a': server('m1.small'), 'b': server('f-small')})
    assert by_type(derived, 'virtual:instance') == [
        {'resource_type': 'virtual:instance', 'amount': 2, 'vcpus': 1,
         'memory_mb': 2048, 'disk_gb': 20, 'affinity': None,
         'resources': ['a', 'b']}]


def test_volume_is_volume_capacity():
    derived = derive({'data': volume(10, volume_type='ssd')})
    assert derived['needs'] == [
        {'resource_type': 'virtual:volume', 'size_gb': 10, 'count': 1,
         'volume_type': 'ssd', 'resources': ['data']}]


def test_floating_ip_is_an_address_of_its_network():
    derived = derive({'ip': fip('ext-net')})
    assert derived['needs'] == [
        {'resource_type': 'virtual:floatingip', 'network_id': 'ext-net',
         'amount': 1, 'resources': ['ip']}]


def test_floating_network_id_is_read_too():
    derived = derive({'ip': {'type': 'OS::Neutron::FloatingIP',
                             'properties': {'floating_network_id': 'n1'}}})
    assert derived['needs'][0]['network_id'] == 'n1'


def test_free_and_unreservable_are_listed():
    derived = derive({
        'web': server(),
        'net': {'type': 'OS::Neutron::Net'},
        'port': {'type': 'OS::Neutron::Port', 'properties': {'network': 'x'}},
        'sg': {'type': 'OS::Neutron::SecurityGroup'},
        'assoc': {'type': 'OS::Neutron::FloatingIPAssociation'},
        'key': {'type': 'OS::Nova::KeyPair'},
        'attach': {'type': 'OS::Cinder::VolumeAttachment'},
        'db': {'type': 'OS::Trove::Instance'},
        'nested': {'type': 'lib/app.yaml'},
        'stack': {'type': 'OS::Heat::Stack'},
        'custom': {'type': 'My::Thing'},
    })
    assert derived['free'] == [
        {'resource': 'assoc', 'type': 'OS::Neutron::FloatingIPAssociation'},
        {'resource': 'attach', 'type': 'OS::Cinder::VolumeAttachment'},
        {'resource': 'key', 'type': 'OS::Nova::KeyPair'},
        {'resource': 'net', 'type': 'OS::Neutron::Net'},
        {'resource': 'port', 'type': 'OS::Neutron::Port'},
        {'resource': 'sg', 'type': 'OS::Neutron::SecurityGroup'}]
    reasons = {u['resource']: (u['type'], u['reason'])
               for u in derived['unreservable']}
    assert [u['resource'] for u in derived['unreservable']] == [
        'custom', 'db', 'nested', 'stack']
    assert reasons['db'][0] == 'OS::Trove::Instance'
    assert 'no reservation for this resource type' in reasons['db'][1]
    assert 'nested template' in reasons['nested'][1]
    assert 'nested stack' in reasons['stack'][1]
    assert 'unknown resource type' in reasons['custom'][1]


# -- merging and order --------------------------------------------------------

def test_needs_merge_per_flavor_type_and_network_in_sorted_order():
    derived = derive({
        'w1': server('m1.small'), 'w2': server('m1.small'),
        'big': server('m1.large'),
        'v1': volume(5), 'v2': volume(7), 'v3': volume(1, volume_type='ssd'),
        'ip1': fip('public'), 'ip2': fip('public'), 'ip3': fip('other'),
    })
    assert [(n['resource_type'], n['resources']) for n in derived['needs']] \
        == [('virtual:floatingip', ['ip1', 'ip2']),
            ('virtual:floatingip', ['ip3']),
            ('virtual:instance', ['big']),
            ('virtual:instance', ['w1', 'w2']),
            ('virtual:volume', ['v1', 'v2']),
            ('virtual:volume', ['v3'])]
    instances = {tuple(n['resources']): n['amount']
                 for n in by_type(derived, 'virtual:instance')}
    assert instances == {('big',): 1, ('w1', 'w2'): 2}
    volumes = {n['volume_type']: (n['size_gb'], n['count'])
               for n in by_type(derived, 'virtual:volume')}
    assert volumes == {None: (12, 2), 'ssd': (1, 1)}
    ips = {n['network_id']: n['amount']
           for n in by_type(derived, 'virtual:floatingip')}
    assert ips == {'public': 2, 'other': 1}


def test_result_does_not_depend_on_the_resources_order():
    resources = {'b': server(), 'a': volume(3), 'c': fip(), 'd': server()}
    reversed_ = dict(reversed(list(resources.items())))
    assert derive(resources) == derive(reversed_)


def test_reservations_of_drops_the_resources_key():
    derived = derive({'web': server(), 'v': volume(2)})
    assert needs.reservations_of(derived) == [
        {'resource_type': 'virtual:instance', 'amount': 1, 'vcpus': 1,
         'memory_mb': 2048, 'disk_gb': 20, 'affinity': None},
        {'resource_type': 'virtual:volume', 'size_gb': 2, 'count': 1,
         'volume_type': None}]
    assert 'resources' in derived['needs'][0]       # not changed


# -- groups -------------------------------------------------------------------

def test_resource_group_count_from_a_parameter():
    derived = derive({'g': group(server(), {'get_param': 'n'})},
                     parameters_section={'n': {'type': 'number',
                                               'default': 2}},
                     parameters={'n': '5'})
    need, = derived['needs']
    assert need['amount'] == 5
    assert need['resources'] == ['g/resource_def']


def test_resource_group_default_count_is_one_and_zero_is_nothing():
    derived = derive({'one': group(server()),
                      'none': group(server('m1.large'), 0)})
    need, = derived['needs']
    assert (need['amount'], need['resources']) == (1, ['one/resource_def'])


def test_autoscaling_group_reserves_max_size():
    derived = derive({'asg': asg(server(), max_size=6, min_size=2)})
    assert derived['needs'][0]['amount'] == 6
    assert derived['needs'][0]['resources'] == ['asg/resource']


def test_resource_group_nested_in_autoscaling_group_multiplies():
    member = group(server(), 3)
    derived = derive({'asg': asg(member, max_size=4), 'solo': server()})
    need, = derived['needs']
    assert need['amount'] == 4 * 3 + 1
    assert need['resources'] == ['asg/resource/resource_def', 'solo']


def test_group_of_volumes_and_ips_multiplies_size_count_and_amount():
    derived = derive({'vols': group(volume(10), 3), 'ips': group(fip(), 2)})
    vol, = by_type(derived, 'virtual:volume')
    assert (vol['size_gb'], vol['count']) == (30, 3)
    ip, = by_type(derived, 'virtual:floatingip')
    assert ip['amount'] == 2


def test_free_members_of_groups_keep_their_path():
    derived = derive({'web': server(),
                      'ports': group({'type': 'OS::Neutron::Port'}, 3)})
    assert derived['free'] == [{'resource': 'ports/resource_def',
                                'type': 'OS::Neutron::Port'}]


# -- block device mappings ----------------------------------------------------

def test_bdm_volume_size_needs_volume_capacity():
    bdm = [{'image': 'cirros', 'volume_size': 30, 'boot_index': 0},
           {'volume_id': {'get_resource': 'data'}, 'volume_size': 99},
           {'swap_size': 1}]
    derived = derive({'db': group(server(block_device_mapping_v2=bdm), 2),
                      'data': volume(5)})
    vol, = by_type(derived, 'virtual:volume')
    # 2 x 30 GB created by Nova + the template's own 5 GB volume; the
    # mapping of an existing volume creates nothing
    assert (vol['size_gb'], vol['count']) == (65, 3)
    assert vol['resources'] == [
        'data', 'db/resource_def/block_device_mapping_v2/0']
    assert by_type(derived, 'virtual:instance')[0]['amount'] == 2


def test_bdm_volume_size_unresolvable_is_a_400():
    bdm = [{'image': 'cirros', 'volume_size': {'get_attr': ['x', 'size']}}]
    invalid({'db': server(block_device_mapping_v2=bdm)},
            'block_device_mapping_v2[0].volume_size', 'resource db')


# -- affinity -----------------------------------------------------------------

def sg(policy):
    return {'type': 'OS::Nova::ServerGroup',
            'properties': {'policies': [policy]}}


def in_group(name, flavor='m1.small'):
    return server(flavor, scheduler_hints={'group': {'get_resource': name}})


def test_server_groups_set_affinity_and_split_needs():
    derived = derive({
        'near': sg('affinity'), 'far': sg('anti-affinity'),
        'soft': sg('soft-affinity'),
        'a1': in_group('near'), 'a2': in_group('near'),
        'b': group(in_group('far'), 3),
        'c': in_group('soft'), 'd': server(),
    })
    got = sorted((n['resources'], n['amount'], n['affinity'])
                 for n in derived['needs'])
    assert got == [(['a1', 'a2'], 2, True),
                   (['b/resource_def'], 3, False),
                   (['c'], 1, None),
                   (['d'], 1, None)]
    assert {'resource': 'near', 'type': 'OS::Nova::ServerGroup'} in \
        derived['free']


# -- parameters ---------------------------------------------------------------

def test_get_param_list_path_and_typed_values():
    params = {'sizes': {'type': 'json'},
              'flavors': {'type': 'comma_delimited_list',
                          'default': 'm1.small,m1.large'}}
    derived = derive(
        {'v': volume({'get_param': ['sizes', 'data', 1]}),
         'w': server({'get_param': ['flavors', 1]})},
        parameters_section=params,
        parameters={'sizes': '{"data": [1, 40]}'})
    assert by_type(derived, 'virtual:volume')[0]['size_gb'] == 40
    assert by_type(derived, 'virtual:instance')[0]['vcpus'] == 4


def test_missing_parameter_is_a_400_naming_it():
    invalid({'w': server({'get_param': 'flavor'})}, 'flavor', 'parameter',
            parameters_section={'flavor': {'type': 'string'},
                                'other': {'type': 'string', 'default': 'x'}})


def test_undeclared_parameter_is_a_400():
    invalid({'w': server({'get_param': 'nope'})}, 'nope', 'declares no')


def test_get_param_path_not_in_the_value_is_a_400():
    invalid({'w': server({'get_param': ['f', 'missing']})}, 'missing',
            parameters_section={'f': {'type': 'json', 'default': {}}})


def test_environment_precedence():
    section = {name: {'type': 'number', 'default': 1}
               for name in ('a', 'b', 'c', 'd')}
    resources = {name: group(volume(1), {'get_param': name})
                 for name in ('a', 'b', 'c', 'd')}
    environment = {'parameters': {'a': 3, 'b': 4},
                   'parameter_defaults': {'a': 7, 'b': 7, 'c': 5}}
    derived = derive(resources, parameters_section=section,
                     parameters={'a': 2}, environment=environment)
    vol, = derived['needs']
    # explicit a=2 > environment b=4 > parameter_defaults c=5 > default d=1
    assert vol['count'] == 2 + 4 + 5 + 1


def test_pseudo_parameters_stay_unresolved():
    invalid({'w': server({'get_param': 'OS::stack_name'})},
            'cannot evaluate the flavor of resource w')


# -- values Climate cannot evaluate -------------------------------------------

def test_unknown_flavor_is_a_400_naming_resource_and_flavor():
    invalid({'web': server('m9.huge')}, 'web', 'm9.huge', 'flavor')


def test_no_flavors_given_is_an_unknown_flavor():
    invalid({'web': server()}, 'm1.small', flavors=None)


def test_unresolvable_count_is_a_400():
    message = invalid({'g': group(server(), {'get_attr': ['x', 'n']})},
                      'count', 'resource g', 'OS::Heat::ResourceGroup')
    assert 'get_attr' in message


@pytest.mark.parametrize('resources, words', [
    ({'a': asg(server(), {'get_resource': 'x'})}, ('max_size', 'a')),
    ({'a': asg(server(), None)}, ('max_size', 'gives no')),
    ({'v': volume({'str_replace': {'template': '1', 'params': {}}})},
     ('size', 'v')),
    ({'v': {'type': 'OS::Cinder::Volume', 'properties': {'image': 'x'}}},
     ('size', 'gives no')),
    ({'v': volume(0)}, ('size', 'at least 1')),
    ({'v': volume('ten')}, ('size', 'whole number')),
    ({'g': group(server(), -1)}, ('count', 'at least 0')),
    ({'w': server({'get_attr': ['f', 'name']})}, ('flavor', 'w')),
    ({'ip': fip({'get_resource': 'net'})}, ('floating_network', 'ip')),
    ({'v': volume(1, volume_type={'get_resource': 't'})},
     ('volume_type', 'v')),
    ({'g': group({'get_attr': ['x', 'def']}, 2)}, ('resource_def', 'g')),
])
def test_values_that_matter_must_evaluate(resources, words):
    invalid(resources, *words)


# -- environment's resource registry ------------------------------------------

def test_resource_registry_mapping_makes_a_type_unreservable():
    environment = {'resource_registry': {
        'OS::Nova::Server': 'my_server.yaml',
        'OS::Neutron::*': 'OS::Other::*',
        'resources': {'special': {'OS::Cinder::Volume': 'vol.yaml'}}}}
    derived = derive({'web': server(), 'net': {'type': 'OS::Neutron::Net'},
                      'special': volume(3), 'plain': volume(4)},
                     environment=environment)
    assert derived['needs'] == [
        {'resource_type': 'virtual:volume', 'size_gb': 4, 'count': 1,
         'volume_type': None, 'resources': ['plain']}]
    reasons = {u['resource']: u['reason'] for u in derived['unreservable']}
    assert set(reasons) == {'net', 'special', 'web'}
    assert 'maps it to my_server.yaml' in reasons['web']
    assert 'OS::Other::*' in reasons['net']
    assert 'vol.yaml' in reasons['special']


def test_registry_mapping_a_type_to_itself_changes_nothing():
    environment = {'resource_registry': {'OS::Nova::Server':
                                         'OS::Nova::Server'}}
    derived = derive({'web': server()}, environment=environment)
    assert derived['needs'][0]['amount'] == 1


# -- conditions ---------------------------------------------------------------

def test_conditions_skip_only_what_is_known_false():
    conditions = {
        'prod': {'equals': [{'get_param': 'env'}, 'prod']},
        'dev': {'not': 'prod'},
        'both': {'and': ['prod', True]},
        'either': {'or': ['dev', False]},
        'unknown': {'equals': [{'get_attr': ['x', 'y']}, 'a']},
    }
    resources = {
        'p': dict(server(), condition='prod'),
        'd': dict(server(), condition='dev'),
        'b': dict(server(), condition='both'),
        'e': dict(server(), condition='either'),
        'u': dict(server(), condition='unknown'),
        'f': dict(server(), condition=False),
        'n': dict(server(), condition={'not': 'unknown'}),
    }
    derived = derive(resources, conditions=conditions,
                     parameters_section={'env': {'type': 'string',
                                                 'default': 'dev'}})
    # dev: prod and both are false, f is literally false; the unknown
    # ones are counted (reserve the maximum)
    assert derived['needs'][0]['resources'] == ['d', 'e', 'n', 'u']
    derived = derive(resources, conditions=conditions,
                     parameters_section={'env': {'type': 'string'}},
                     parameters={'env': 'prod'})
    assert derived['needs'][0]['resources'] == ['b', 'n', 'p', 'u']


def test_undefined_condition_is_a_400():
    invalid({'w': dict(server(), condition='nope')}, 'condition nope')


# -- nothing to reserve, shape ------------------------------------------------

def test_no_resources_is_a_400():
    invalid({}, 'needs nothing Climate can reserve', 'no resources')


def test_nothing_reservable_tells_what_it_found():
    message = invalid({'net': {'type': 'OS::Neutron::Net'},
                       'db': {'type': 'OS::Trove::Instance'},
                       'g': group(server(), 0)},
                      'needs nothing Climate can reserve')
    assert 'net (OS::Neutron::Net)' in message
    assert 'db (OS::Trove::Instance' in message
    assert 'g/resource_def' in message


@pytest.mark.parametrize('template, words', [
    ('heat_template_version: x', ('HOT', 'not str')),
    ({'resources': {}}, ('heat_template_version',)),
    ({'heat_template_version': '2021-04-16', 'resources': ['a']},
     ('resources must be a mapping',)),
    ({'heat_template_version': '2021-04-16',
      'resources': {'a': {'properties': {}}}}, ('resource a', 'no type')),
])
def test_template_shape(template, words):
    with pytest.raises(exceptions.InvalidInput) as caught:
        needs.derive(template, flavors=FLAVORS)
    for word in words:
        assert word in str(caught.value)


def test_missing_resources_section_is_nothing_to_reserve():
    with pytest.raises(exceptions.InvalidInput, match='no resources'):
        needs.derive({'heat_template_version': '2021-04-16'})


def test_environment_must_be_a_mapping():
    invalid({'w': server()}, 'environment must be a mapping',
            environment=['x'])


# -- property: instances equal a brute-force expansion ------------------------

def trees(depth=3):
    """A random resource: a server of one of the flavors, or a
    ResourceGroup (count literal, default or from a parameter) or an
    AutoScalingGroup around one."""
    leaf = st.sampled_from(sorted(FLAVORS)).map(lambda f: ('server', f))
    if depth == 0:
        return leaf
    inner = trees(depth - 1)
    return st.one_of(
        leaf,
        st.tuples(st.just('rg'), st.integers(0, 3) | st.none()
                  | st.just('param'), inner),
        st.tuples(st.just('asg'), st.integers(0, 3), inner))


def build(tree, n_param):
    """The template resource of ``tree``."""
    if tree[0] == 'server':
        return server(tree[1])
    if tree[0] == 'rg':
        count = {'get_param': 'n'} if tree[1] == 'param' else tree[1]
        return group(build(tree[2], n_param), count)
    return asg(build(tree[2], n_param), tree[1])


def expand(tree, n_param):
    """Brute force: the servers of ``tree``, one flavor name per copy."""
    if tree[0] == 'server':
        return [tree[1]]
    if tree[0] == 'rg':
        count = {'param': n_param, None: 1}.get(tree[1], tree[1])
    else:
        count = tree[1]
    servers = []
    for _ in range(count):
        servers += expand(tree[2], n_param)
    return servers


@PROPERTY
@given(st.lists(trees(), min_size=1, max_size=4), st.integers(0, 3))
def test_instances_are_the_brute_force_count_of_servers(forest, n_param):
    expected = collections.Counter()
    for tree in forest:
        expected.update(expand(tree, n_param))
    resources = {'r%d' % i: build(tree, n_param)
                 for i, tree in enumerate(forest)}
    template = hot(resources, parameters={'n': {'type': 'number'}})
    if not expected:
        with pytest.raises(exceptions.InvalidInput, match='nothing'):
            needs.derive(template, {'n': n_param}, flavors=FLAVORS)
        return
    derived = needs.derive(template, {'n': n_param}, flavors=FLAVORS)
    got = collections.Counter()
    for need in derived['needs']:
        flavor = next(name for name, f in FLAVORS.items()
                      if f['vcpus'] == need['vcpus'])
        got[flavor] += need['amount']
    assert got == expected
    assert derived['needs'] == sorted(
        derived['needs'], key=lambda n: (n['resource_type'],
                                         n['resources'][0]))
