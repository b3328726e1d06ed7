"""climate.dashboard.api.climate against the real API: Climate's WSGI
application (ClimateEnvironment: SQLite, the manager in-process) served
by its own server on 127.0.0.1, reached through keystoneauth with the
user's token, as Horizon would."""

import pytest

from climate.dashboard.api import climate as climate_api
from climate.tests import fixtures
from climate.tests.unit.dashboard import identity
from climate.tests.unit.dashboard import served

FAR_START = '2090-01-01 12:00'
FAR_END = '2090-01-01 18:00'


@pytest.fixture(scope='module')
def api():
    with served.climate() as running:
        yield running


def _member(api, project='project-a'):
    return identity.request(api[2], 'member', project)


def _admin(api):
    return identity.request(api[2], 'admin', 'admin-project')


def test_the_user_token_reaches_the_api(api):
    env, app, _url = api
    lease = climate_api.lease_create(_member(api), fixtures.lease_body(
        'token-check'))
    assert app.tokens[-1] == 'member:project-a'
    assert lease.name == 'token-check'
    assert lease.project_id == 'project-a'
    assert lease.resource_types == ['noop']


def test_pages_of_leases_follow_the_marker(api):
    request = _member(api, 'project-pages')
    made = [climate_api.lease_create(request, fixtures.lease_body(
        'page-%d' % i)).id for i in range(3)]
    first, more = climate_api.lease_list(request, limit=2, sort_dir='asc')
    assert more is True
    assert len(first) == 2
    second, more = climate_api.lease_list(request, limit=2, sort_dir='asc',
                                          marker=first[-1].id)
    assert more is False
    # leases made in the same second are ordered by id: each once, all
    # of them, over the two pages
    assert sorted(lease.id for lease in first + second) == sorted(made)
    # another project's leases are not this one's
    assert climate_api.lease_list(_member(api, 'project-other'),
                                  limit=10) == ([], False)


def test_filters_are_the_apis(api):
    request = _member(api, 'project-filters')
    climate_api.lease_create(request, fixtures.lease_body('wanted'))
    climate_api.lease_create(request, fixtures.lease_body('other'))
    found, _more = climate_api.lease_list(request, limit=10, name='wanted')
    assert [lease.name for lease in found] == ['wanted']


def test_a_window_of_leases_in_the_order_of_their_starts(api):
    request = _member(api, 'project-window')
    for name, start, end in (('late', '2091-01-03 00:00', '2091-01-04 00:00'),
                             ('early', '2091-01-01 00:00',
                              '2091-01-02 00:00'),
                             ('outside', '2091-02-01 00:00',
                              '2091-02-02 00:00'),
                             ('across', '2090-12-31 00:00',
                              '2091-01-01 12:00')):
        climate_api.lease_create(request, fixtures.lease_body(
            name, start=start, end=end))
    first, more = climate_api.lease_window(
        request, '2091-01-01 00:00', '2091-01-08 00:00', 2)
    assert [lease.name for lease in first] == ['across', 'early']
    assert more is True
    rest, more = climate_api.lease_window(
        request, '2091-01-01 00:00', '2091-01-08 00:00', 2,
        marker=first[-1].id)
    assert [lease.name for lease in rest] == ['late']
    assert more is False


def test_update_and_delete(api):
    request = _member(api)
    lease = climate_api.lease_create(request, fixtures.lease_body(
        'to-change', start=FAR_START, end=FAR_END))
    moved = climate_api.lease_update(request, lease.id,
                                     {'prolong_for': '2h'})
    assert moved.end_date.startswith('2090-01-01T20:00')
    climate_api.lease_delete(request, lease.id)
    with pytest.raises(climate_api.ReservationNotFound):
        climate_api.lease_get(request, lease.id)


def test_a_missing_lease_is_horizons_not_found_with_the_apis_message(api):
    with pytest.raises(climate_api.ReservationNotFound) as caught:
        climate_api.lease_get(_member(api), 'no-such-lease')
    assert caught.value.status == 404
    assert 'no-such-lease' in caught.value.message
    from horizon import exceptions as horizon_exceptions
    assert isinstance(caught.value, horizon_exceptions.NotFound)


def test_not_enough_hosts_is_a_conflict_saying_when(api):
    admin = _admin(api)
    host = climate_api.host_create(admin, 'dash-compute-1',
                                   {'vcpus': 8, 'memory_mb': 16384})
    assert host.name == 'dash-compute-1'
    assert 'dash-compute-1' in [h.name for h in
                                climate_api.host_list(admin)]
    body = {'name': 'too-many', 'start_date': FAR_START,
            'end_date': FAR_END, 'events': [],
            'reservations': [{'resource_type': 'physical:host',
                              'min': 2, 'max': 2,
                              'hypervisor_properties': '',
                              'resource_properties': ''}]}
    with pytest.raises(climate_api.ReservationConflict) as caught:
        climate_api.lease_create(_member(api), body)
    assert caught.value.status == 409
    assert caught.value.message.startswith('Not enough hosts available')
    # what Horizon shows is the API's sentence
    assert str(caught.value) == caught.value.message


def test_availability_counts_without_hosts(api):
    admin = _admin(api)
    climate_api.host_create(admin, 'dash-compute-2', {'vcpus': 4})
    answer = climate_api.host_availability(
        _member(api, 'project-search'), count=1, duration='1h',
        earliest_start=FAR_START)
    assert answer['windows'], answer
    window = answer['windows'][0]
    assert window['hosts_free'] >= 1
    assert 'hosts' not in window  # counts and times only


def test_usage_and_quota_of_the_users_project(api):
    request = _member(api, 'project-usage')
    usage = climate_api.usage_get(request)
    assert usage['project_id'] == 'project-usage'
    quota = climate_api.quota_get(request)
    assert quota['project_id'] == 'project-usage'


def test_an_admin_reads_another_projects_usage_and_quota(api):
    admin = _admin(api)
    usage = climate_api.usage_get(admin, project_id='project-usage')
    assert usage['project_id'] == 'project-usage'
    quota = climate_api.quota_get(admin, 'project-usage')
    assert quota['project_id'] == 'project-usage'
    listing = climate_api.quota_list(admin)
    assert 'defaults' in listing and 'projects' in listing


def test_a_member_never_reads_another_projects_usage(api):
    member = _member(api, 'project-usage')
    with pytest.raises(climate_api.ReservationUnavailable) as caught:
        climate_api.usage_get(member, project_id='project-other')
    assert caught.value.status == 403
    with pytest.raises(climate_api.ReservationUnavailable) as caught:
        climate_api.quota_get(member, 'project-other')
    assert caught.value.status == 403
    with pytest.raises(climate_api.ReservationUnavailable) as caught:
        climate_api.quota_list(member)
    assert caught.value.status == 403


def test_the_other_inventories(api):
    admin = _admin(api)
    pool = climate_api.volume_pool_create(admin, {
        'name': 'dash@lvm#pool', 'total_capacity_gb': 100,
        'reserved_percentage': 10, 'capabilities': {'volume_types': 'fast'}})
    assert pool.capacity_gb == 90
    assert pool.id in [p.id for p in climate_api.volume_pool_list(admin)]
    fip = climate_api.floatingip_create(admin, 'dash-ext', '2001:DB8::0A')
    assert fip.name == '2001:db8::a'
    assert fip.id in [f.id for f in climate_api.floatingip_list(admin)]
    net = climate_api.network_create(admin, {
        'network_type': 'vlan', 'physical_network': 'dashnet',
        'segment_id': 1001, 'site': 'uc'})
    assert net.extra_capabilities == {'site': 'uc'}
    assert net.name == 'vlan dashnet 1001'
    with pytest.raises(climate_api.ReservationConflict):
        climate_api.network_create(admin, {
            'network_type': 'vlan', 'physical_network': 'dashnet',
            'segment_id': 1001})
    member = _member(api)
    for listing in (climate_api.volume_pool_list,
                    climate_api.floatingip_list, climate_api.network_list):
        with pytest.raises(climate_api.ReservationUnavailable) as caught:
            listing(member)
        assert caught.value.status == 403
    climate_api.volume_pool_delete(admin, pool.id)
    climate_api.floatingip_delete(admin, fip.id)
    climate_api.network_delete(admin, net.id)
    assert net.id not in [n.id for n in climate_api.network_list(admin)]


def test_a_series_and_its_cancel(api):
    request = _member(api, 'project-series')
    body = dict(fixtures.lease_body('weekly', start='2090-01-02 09:00',
                                    end='2090-01-02 11:00'),
                recurrence={'rrule': 'FREQ=WEEKLY;COUNT=3',
                            'timezone': 'Europe/Paris'})
    made = climate_api.series_create(request, body)
    assert made.rrule == 'FREQ=WEEKLY;COUNT=3'
    assert made.timezone == 'Europe/Paris'
    assert made.booked >= 1
    assert [s.id for s in climate_api.series_list(request)] == [made.id]
    shown = climate_api.series_get(request, made.id)
    assert shown.occurrences[0]['name'] == 'weekly #1'
    # another project's series is not found
    with pytest.raises(climate_api.ReservationNotFound):
        climate_api.series_get(_member(api, 'project-other'), made.id)
    climate_api.series_delete(request, made.id)
    assert climate_api.series_get(request, made.id).status == 'CANCELLED'


def test_a_maintenance_window_planned_applied_cancelled(api):
    admin = _admin(api)
    climate_api.host_create(admin, 'dash-maint-1', {'rack': 'm1'})
    lease = climate_api.lease_create(_member(api, 'project-maint'), {
        'name': 'on-m1', 'start_date': '2092-01-01 00:00',
        'end_date': '2092-01-01 06:00', 'events': [],
        'reservations': [{'resource_type': 'physical:host', 'min': 1,
                          'max': 1, 'hypervisor_properties': '',
                          'resource_properties': '["=", "$rack", "m1"]'}]})
    body = {'name': 'dash-firmware', 'reason': 'firmware',
            'start_date': '2092-01-01 02:00', 'end_date': '2092-01-01 04:00',
            'hosts': ['dash-maint-1']}
    planned = climate_api.maintenance_plan(admin, body)
    assert [h['name'] for h in planned.hosts] == ['dash-maint-1']
    [hit] = planned.affected
    assert hit['lease_id'] == lease.id
    assert 'shorten' in hit['options']
    assert climate_api.maintenance_list(admin) == []  # nothing written
    # a lease hit without an action refuses the whole window
    with pytest.raises(climate_api.ReservationConflict):
        climate_api.maintenance_apply(admin, body)
    applied = climate_api.maintenance_apply(admin, body,
                                            default_action='shorten')
    assert applied.status == 'APPLIED'
    assert climate_api.lease_get(admin, lease.id).end_date.startswith(
        '2092-01-01T02:00')
    with pytest.raises(climate_api.ReservationUnavailable) as caught:
        climate_api.maintenance_list(_member(api, 'project-maint'))
    assert caught.value.status == 403
    climate_api.maintenance_delete(admin, applied.id)
    [window] = climate_api.maintenance_list(admin)
    assert window.status == 'CANCELLED'


def test_health_is_for_admins(api):
    report = climate_api.health_get(_admin(api))
    assert report['status'] == 'ok'
    assert set(report['checks']) == {'database', 'message_bus'}
    with pytest.raises(climate_api.ReservationUnavailable) as caught:
        climate_api.health_get(_member(api))
    assert caught.value.status == 403


def test_an_unreachable_api_is_said_plainly():
    request = identity.request('http://127.0.0.1:%d' %
                               fixtures.closed_port())
    with pytest.raises(climate_api.ReservationUnavailable) as caught:
        climate_api.lease_list(request, limit=1)
    assert 'Cannot reach the reservation API' in caught.value.message


def test_a_catalog_without_the_service_is_said_plainly():
    request = identity.request('http://127.0.0.1:1')
    request.user.service_catalog = []
    with pytest.raises(climate_api.ReservationUnavailable) as caught:
        climate_api.lease_list(request, limit=1)
    assert 'no reservation endpoint' in caught.value.message
