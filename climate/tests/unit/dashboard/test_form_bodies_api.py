"""The create form's bodies against the real API: what the form makes
of typed input, sent through the wrapper to Climate served on 127.0.0.1
(the static inventories, capacity registered by an admin), is granted.

The pre-created servers and flavor slots need Nova (the static inventory
refuses them): test_lease_create_types.py checks a boot request with the
API's own check of it, and the rest against instances.rst.
"""

import pytest

from climate.dashboard.api import climate as climate_api
from climate.dashboard.content.leases import bodies
from climate.dashboard.content.leases import forms as lease_forms
from climate.tests.unit.dashboard import helpers
from climate.tests.unit.dashboard import identity
from climate.tests.unit.dashboard import served

TEMPLATE = helpers.STACK_TEMPLATE


@pytest.fixture(scope='module')
def api():
    with served.climate([('static_flavors', 'stacks',
                          ['m1.tiny:1:512:1'])]) as running:
        env = running[0]
        for path, version, body in (
                ('/v1/os-hosts', None, {'name': 'form-host-1', 'vcpus': 8,
                                        'memory_mb': 16384, 'local_gb': 100,
                                        'gpu': 'true'}),
                ('/v1/os-hosts', None, {'name': 'form-host-2', 'vcpus': 8,
                                        'memory_mb': 16384, 'local_gb': 100,
                                        'gpu': 'false'}),
                ('/v1/volume-pools', '1.5', {'name': 'form@lvm#lvm',
                                             'total_capacity_gb': 1000}),
                ('/v1/floatingips', None, {
                    'floating_network_id': 'ext-net',
                    'floating_ip_address': '172.24.4.200'}),
                ('/v1/floatingips', None, {
                    'floating_network_id': 'ext-net',
                    'floating_ip_address': '172.24.4.201'}),
                ('/v1/networks', None, {'network_type': 'vlan',
                                        'physical_network': 'physnet1',
                                        'segment_id': 1001})):
            resp = env.request('POST', path, body=body, persona='admin',
                               version=version)
            assert resp.status_int == 201, resp.text
        yield running

TEMPLATE = helpers.STACK_TEMPLATE


def _granted(api, day, resource_type, **fields):
    """The lease the API made of the form's body for ``fields``, on its
    own day of 2090 (the types share the hosts), or now (day 0)."""
    data = {'name': 'form-%d' % day, 'lease_type': '',
            'start_date': '2090-01-%02d 12:00' % day if day else 'now',
            'end_date': '',
            'duration': '2h', 'resource_type': resource_type}
    data.update(fields)
    form = lease_forms.CreateLeaseForm(None, data=data)
    assert form.is_valid(), form.errors
    body = bodies.create_body(form.cleaned_data)
    request = identity.request(api[2], 'member', 'project-forms')
    lease = climate_api.lease_create(request, body)
    # a stack's lease also holds the parts its template needs
    reservation, = [res for res in lease.reservations
                    if not res.get('stack_reservation_id')]
    assert reservation['resource_type'] == \
        bodies.RESOURCE_TYPES[resource_type]
    return lease, reservation


def test_hosts_with_filters(api):
    _lease, res = _granted(
        api, 1, 'host', min_hosts=1, max_hosts=1, before_end='snapshot',
        hypervisor_properties='[">=", "$vcpus", 4]',
        resource_properties='["=", "$gpu", "true"]')
    assert (res['min'], res['max'], res['before_end']) == (1, 1, 'snapshot')


def test_instance_slots(api):
    _lease, res = _granted(
        api, 2, 'instance', amount=2, vcpus=2, memory_mb=2048, disk_gb=10,
        affinity='true', resource_properties='["=", "$gpu", "false"]')
    assert (res['amount'], res['vcpus'], res['affinity']) == (2, 2, True)


def test_volume_capacity(api):
    _lease, res = _granted(api, 3, 'volume', size_gb=20, volume_count=2,
                           volume_type='fast', volume_on_end='snapshot',
                           resource_properties='["=", "$name", '
                                               '"form@lvm#lvm"]')
    assert (res['size_gb'], res['count'], res['on_end']) == (20, 2,
                                                             'snapshot')


def test_volumes_made_at_the_start(api):
    _lease, res = _granted(api, 8, 'volume', volume_source='listed',
                           volume_specs='data 10\nboot 2 image=cirros')
    # their sizes and number are the reservation's
    assert (res['size_gb'], res['count']) == (12, 2)
    assert [spec['name'] for spec in res['volumes']] == ['data', 'boot']


def test_floating_ips(api):
    _lease, res = _granted(api, 4, 'floatingip', network_id='ext-net',
                           amount=2, required_floatingips='172.24.4.201')
    assert (res['network_id'], res['amount']) == ('ext-net', 2)


def test_a_network_segment(api):
    _lease, res = _granted(
        api, 5, 'network', network_name='form-net',
        network_description='from the form',
        resource_properties='["==", "$physical_network", "physnet1"]',
        network_properties='[">=", "$segment_id", 1000]')
    assert res['network_name'] == 'form-net'


def test_a_stack_with_parameters_and_environment(api):
    lease, res = _granted(
        api, 6, 'stack', template_source='text', template_text=TEMPLATE,
        parameters='count=2', environment='parameter_defaults: {count: 1}',
        stack_name='form-web', stack_on_end='suspend')
    assert (res['stack_name'], res['on_end']) == ('form-web', 'suspend')
    # the typed count (a string, as the CLI sends it) is the group's
    need, = res['needs']
    assert need['amount'] == 2, need
    climate_api.lease_delete(identity.request(api[2], 'member',
                                              'project-forms'), lease.id)


def test_a_scheduled_lease(api):
    lease, _res = _granted(api, 7, 'volume', size_gb=1,
                           lease_type='scheduled')
    assert (lease.lease_type, lease.status) == ('scheduled', 'INACTIVE')


@pytest.mark.parametrize('lease_type, resource_type, fields', [
    ('immediate', 'volume', {'size_gb': 1}),
    ('with_retries', 'volume', {'size_gb': 1, 'max_retries': 0}),
    ('best_effort', 'host', {'min_hosts': 1, 'max_hosts': 1}),
])
def test_the_lease_types_that_start_now(api, lease_type, resource_type,
                                        fields):
    lease, _res = _granted(api, 0, resource_type, name='now-' + lease_type,
                           lease_type=lease_type, **fields)
    # granted as it was made, starting now (an empty events list is no
    # event a lease with retries refuses)
    assert (lease.lease_type, lease.status) == (lease_type, 'STARTING')
