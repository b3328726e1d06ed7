"""NovaInstanceBackend without a cloud: names, flavor reading, errors.

The whole life (start, boots, end) runs against real Nova and Placement in
``climate/tests/integration/test_instance_reservations.py``.
"""

import uuid

import pytest
from novaclient import exceptions as nova_exc
from oslo_config import cfg

from climate import exceptions
from climate.clients import placement as placement_clients
from climate.conf import clients as clients_conf
from climate.conf import hosts as hosts_conf
from climate.plugins.virtual_instance.backends import base
from climate.plugins.virtual_instance.backends import nova


@pytest.fixture
def backend():
    conf = cfg.ConfigOpts()
    clients_conf.register_opts(conf)
    hosts_conf.register_opts(conf)
    conf([], project='climate', default_config_files=[])
    return nova.NovaInstanceBackend(conf)


class Flavor:
    def __init__(self, specs, **fields):
        self.id = fields.pop('id', 'f1')
        self._specs = specs
        self._info = dict(fields)
        for key, value in fields.items():
            setattr(self, key, value)

    def to_dict(self):
        return dict(self._info)

    def get_keys(self):
        return dict(self._specs)


class Flavors:
    def __init__(self, flavors):
        self.flavors = flavors

    def get(self, flavor_id):
        if flavor_id not in self.flavors:
            raise nova_exc.NotFound(404)
        return self.flavors[flavor_id]


class Nova:
    def __init__(self, flavors):
        self.flavors = Flavors(flavors)


def test_is_the_nova_instance_backend(backend):
    assert isinstance(backend, base.InstanceBackend)
    assert backend.name == 'nova' and backend.acts_in_cloud


def test_names():
    rid = str(uuid.uuid4())
    assert nova.placement_aggregate(rid) == rid
    other = nova.placement_aggregate('not-a-uuid')
    assert str(uuid.UUID(other)) == other
    assert other == nova.placement_aggregate('not-a-uuid')
    assert nova.child_name('compute1') == 'climate-compute1'
    assert len(nova.child_name('h' * 300)) == nova.NAME_MAX
    assert base.resource_class('ab-12') == 'CUSTOM_RESERVATION_AB_12'


def test_flavor_shape_resources_and_traits(backend):
    backend._nova = Nova({'f1': Flavor(
        {'resources:VCPU': '0', 'resources:PCPU': '2',
         'resources1:CUSTOM_GPU': '1', 'resources_net:CUSTOM_GPU': '1',
         'trait:HW_CPU_X86_AVX2': 'required',
         'trait1:CUSTOM_SLOW': 'forbidden', 'hw:cpu_policy': 'dedicated',
         'resourcesX:NOT_A_GROUP': '9', 'traits:NOPE': 'required'},
        vcpus=2, ram=2048, disk=10, swap=1025,
        **{'OS-FLV-EXT-DATA:ephemeral': 4})})
    assert backend.flavor('f1') == {
        'id': 'f1', 'vcpus': 2, 'memory_mb': 2048,
        'disk_gb': 10 + 4 + 2,  # swap rounded up to GiB
        'resources': {'VCPU': 0, 'PCPU': 2, 'CUSTOM_GPU': 2},
        'traits': {'required': ['HW_CPU_X86_AVX2'],
                   'forbidden': ['CUSTOM_SLOW']}}


def test_dedicated_cpus_are_pcpu(backend):
    backend._nova = Nova({'f1': Flavor({'hw:cpu_policy': 'dedicated'},
                                       vcpus=4, ram=512, disk=1)})
    assert backend.flavor('f1')['resources'] == {'PCPU': 4, 'VCPU': 0}


def test_a_trait_is_required_or_forbidden(backend):
    backend._nova = Nova({'f1': Flavor({'trait:CUSTOM_X': 'preferred'},
                                       vcpus=1, ram=512, disk=1)})
    with pytest.raises(exceptions.MalformedParameter) as err:
        backend.flavor('f1')
    assert str(err.value).startswith('Invalid value for trait CUSTOM_X.')
    assert err.value.code == 400


def test_flavor_without_extras(backend):
    backend._nova = Nova({'f1': Flavor({}, vcpus=1, ram=512, disk=1,
                                       swap='')})
    shape = backend.flavor('f1')
    assert shape['disk_gb'] == 1
    assert shape['resources'] == {}
    assert shape['traits'] == {'required': [], 'forbidden': []}


def test_unknown_or_odd_flavor_is_a_400_naming_it(backend):
    backend._nova = Nova({'f1': Flavor({'resources:VCPU': 'two'}, vcpus=1,
                                       ram=512, disk=1)})
    with pytest.raises(exceptions.InvalidInput) as err:
        backend.flavor('nope')
    assert err.value.code == 400 and 'nope' in str(err.value)
    with pytest.raises(exceptions.InvalidInput) as err:
        backend.flavor('f1')
    assert 'resources:VCPU=two' in str(err.value)


def test_cloud_errors_are_cloud_unavailable(backend):
    class Broken:
        def get(self, flavor_id):
            raise nova_exc.ClientException(500, 'boom')
    backend._nova = Nova({})
    backend._nova.flavors = Broken()
    with pytest.raises(exceptions.CloudUnavailable) as err:
        backend.flavor('f1')
    assert err.value.code == 503 and 'Nova' in str(err.value)

    class NoPlacement:
        def provider_by_name(self, name):
            raise placement_clients.PlacementError('listing', detail='down')
    backend._placement = NoPlacement()
    with pytest.raises(exceptions.CloudUnavailable) as err:
        backend._compute_node('compute1')
    assert 'Placement' in str(err.value)


def test_booked_merges_and_drops_empty_hosts(backend):
    a = {'hypervisor_hostname': 'a', 'service_name': 'a'}
    b = {'hypervisor_hostname': 'b', 'service_name': 'b'}
    assert backend._booked([(b, 1), (a, 0), (b, 2), (a, None)]) == [(b, 3)]


@pytest.mark.parametrize('value, expected', [
    (None, None), ('None', None), ('', None), (True, True), (False, False),
    ('true', True), ('False', False)])
def test_affinity(value, expected):
    assert nova._affinity(value) is expected


class FakePlacement:
    """Placement's providers, inventories and aggregates, in memory."""

    def __init__(self):
        self.providers_ = {}
        self.inventories_ = {}
        self.aggregates = {}

    def ensure_resource_class(self, rc):
        pass

    def provider_by_name(self, name):
        return {'uuid': 'root-' + name, 'name': name}

    def ensure_child(self, root, name):
        self.providers_[name] = {'uuid': name, 'name': name}
        return self.providers_[name]

    def add_to_aggregate(self, uuid, agg):
        self.aggregates.setdefault(agg, set()).add(uuid)

    def set_inventory(self, uuid, rc, total, reserved=0, max_unit=None):
        self.inventories_.setdefault(uuid, {})[rc] = {
            'total': total, 'reserved': reserved,
            'max_unit': total if max_unit is None else max_unit}

    def inventories(self, uuid):
        return 1, dict(self.inventories_.get(uuid, {}))

    def providers(self, member_of=None):
        return [self.providers_[u] for u in sorted(
            self.aggregates.get(member_of, ()))]


@pytest.mark.parametrize('held, reserved', [(False, 0), (True, 2)])
def test_slots_held_by_woken_servers_are_closed_to_the_flavor(
        backend, held, reserved):
    """A woken stack's instance part (``slots_held``): its inventory has
    every unit reserved, at the start and when it is resized again (grown,
    healed), so that its flavor boots nothing beside the stack's own
    servers; any other reservation's units are all open."""
    backend._placement = FakePlacement()
    rid = str(uuid.uuid4())
    rc = base.resource_class(rid)
    for units in (1, 2):
        backend._placement_up(rid, rc, [(
            {'hypervisor_hostname': 'c1'}, units)], closed=held)
    assert backend._placement.inventories_['climate-c1'][rc] == {
        'total': 2, 'reserved': reserved, 'max_unit': 2}
