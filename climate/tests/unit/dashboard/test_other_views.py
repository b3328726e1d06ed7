"""Availability, usage and quotas (project), hosts and health (admin),
and who sees which panel; the API wrapper mocked."""

from unittest import mock
import urllib.parse

from django.urls import reverse

from climate.dashboard.api import climate as climate_api
from climate.tests.unit.dashboard import helpers

AVAILABILITY = reverse('horizon:project:availability:index')
USAGE = reverse('horizon:project:reservation_usage:index')
HOSTS = reverse('horizon:admin:reservation_hosts:index')
HOST_CREATE = reverse('horizon:admin:reservation_hosts:create')
HEALTH = reverse('horizon:admin:reservation_health:index')

WINDOWS = {'count': 2, 'duration': 14400, 'matching_hosts': 3,
           'earliest_start': '2090-01-01T00:00:00.000000',
           'latest_end': None,
           'windows': [{'start': '2090-01-01T06:00:00.000000',
                        'end': '2090-01-02T00:00:00.000000',
                        'latest_start': '2090-01-01T20:00:00.000000',
                        'hosts_free': 2}]}


class AvailabilityTests(helpers.TestCase):

    def test_the_form_alone_asks_nothing(self):
        search = self.mock_api('host_availability')
        response = self.client.get(AVAILABILITY)
        self.assertEqual(response.status_code, 200)
        self.assertContains(response, 'availability_search')
        search.assert_not_called()

    def test_windows_with_a_button_to_book_them(self):
        search = self.mock_api('host_availability', return_value=WINDOWS)
        response = self.client.get(AVAILABILITY + '?' + urllib.parse.urlencode(
            {'count': 2, 'duration': '4h', 'earliest_start': '',
             'latest_end': '', 'resource_properties': '',
             'hypervisor_properties': '[">=", "$vcpus", "8"]'}))
        self.assertEqual(response.status_code, 200)
        self.assertEqual(search.call_args.kwargs['count'], 2)
        self.assertEqual(search.call_args.kwargs['duration'], '4h')
        self.assertContains(response, '2090-01-01 06:00 UTC')
        self.assertContains(response, '2090-01-01 20:00 UTC')
        link = reverse('horizon:project:leases:create') + '?' + \
            urllib.parse.urlencode({
                'start_date': '2090-01-01 06:00',
                'end_date': '2090-01-01 10:00', 'resource_type': 'host',
                'min_hosts': 2, 'max_hosts': 2,
                'hypervisor_properties': '[">=", "$vcpus", "8"]'})
        self.assertContains(response, link.replace('&', '&amp;'))

    def test_no_window_is_said(self):
        self.mock_api('host_availability', return_value=dict(
            WINDOWS, windows=[]))
        response = self.client.get(AVAILABILITY + '?count=9&duration=1w')
        self.assertContains(response, 'No window in the searched range')

    def test_bad_input_is_refused_before_asking(self):
        search = self.mock_api('host_availability')
        response = self.client.get(AVAILABILITY +
                                   '?count=0&duration=forever')
        errors = response.context['form'].errors
        self.assertEqual(set(errors), {'count', 'duration'})
        search.assert_not_called()

    def test_the_apis_refusal_is_its_message(self):
        self.mock_api('host_availability', side_effect=climate_api.
                      ReservationBadRequest("Invalid filter: unknown "
                                            "operator '~'", 400))
        response = self.client.get(AVAILABILITY + '?count=1&duration=1h')
        self.assertTrue(any("unknown operator '~'" in m
                            for m in self.messages_of(response)))


USAGE_ANSWER = {'project_id': 'project-a',
                'start': '2090-01-01T00:00:00.000000',
                'end': '2090-02-01T00:00:00.000000',
                'totals': [{'resource_type': 'physical:host',
                            'resource_class': 'HOST', 'past': 3.0,
                            'current': None, 'future': 6.0, 'total': 9.0,
                            'unit': 'host-hours'}]}
QUOTA_ANSWER = {'project_id': 'project-a', 'budget': {'HOST': 100},
                'budget_period': 'month',
                'max_concurrent': {'VCPU': 64}, 'max_extension': -1,
                'max_lease_duration': 604800,
                'usage': {'held_now': {'VCPU': 8},
                          'budget_used': {'HOST': 9.0}}}


class UsageTests(helpers.TestCase):

    def test_usage_and_quotas(self):
        self.mock_api('usage_get', return_value=USAGE_ANSWER)
        self.mock_api('quota_get', return_value=QUOTA_ANSWER)
        response = self.client.get(USAGE)
        self.assertEqual(response.status_code, 200)
        usage = response.context['usage_table'].data
        self.assertEqual([(r.resource_class, r.total) for r in usage],
                         [('HOST', 9.0)])
        quotas = {r.id: (str(r.limit), r.used)
                  for r in response.context['quotas_table'].data}
        self.assertEqual(quotas['concurrent/VCPU'], ('64', 8))
        self.assertEqual(quotas['budget/HOST'], ('100', 9.0))
        self.assertEqual(quotas['max_lease_duration'][0], '168 h')
        self.assertEqual(quotas['max_extension'][0], 'No limit')
        self.assertContains(response, '2090-01-01 00:00 UTC')

    def test_the_chart_of_the_usage(self):
        self.mock_api('usage_get', return_value=dict(USAGE_ANSWER, totals=[
            dict(USAGE_ANSWER['totals'][0]),
            {'resource_type': 'physical:host', 'resource_class': 'VCPU',
             'past': 0.0, 'current': 16.0, 'future': 16.0, 'total': 32.0,
             'unit': 'vCPU-hours'},
            {'resource_type': 'virtual:instance', 'resource_class': 'VCPU',
             'past': 8.0, 'current': None, 'future': 0.0, 'total': 8.0,
             'unit': 'vCPU-hours'}]))
        self.mock_api('quota_get', return_value=QUOTA_ANSWER)
        response = self.client.get(USAGE)
        bars = {b['id']: b for b in response.context['bars']}
        parts = {key: {p['key']: p['percent'] for p in bar['parts']}
                 for key, bar in bars.items()}
        # each bar against the longest of its unit
        self.assertEqual(parts['physical:host/HOST'],
                         {'past': 33.33, 'current': 0, 'future': 66.67})
        self.assertEqual(parts['physical:host/VCPU'],
                         {'past': 0, 'current': 50.0, 'future': 50.0})
        self.assertEqual(parts['virtual:instance/VCPU'],
                         {'past': 25.0, 'current': 0, 'future': 0})
        self.assertContains(response, 'id="usage_chart"')
        self.assertContains(response, 'style="width: 66.67%"')
        self.assertContains(response, 'title="Booked ahead: 6.0 host-hours"')

    def test_no_usage_no_chart(self):
        self.mock_api('usage_get', return_value=dict(USAGE_ANSWER,
                                                     totals=[]))
        self.mock_api('quota_get', return_value=QUOTA_ANSWER)
        response = self.client.get(USAGE)
        self.assertNotContains(response, 'id="usage_chart"')

    def test_one_failing_call_leaves_the_other_table(self):
        self.mock_api('usage_get', return_value=USAGE_ANSWER)
        self.mock_api('quota_get', side_effect=climate_api.
                      ReservationUnavailable('Policy does not allow '
                                             'climate:quotas:get', 403))
        response = self.client.get(USAGE)
        self.assertEqual(len(response.context['usage_table'].data), 1)
        self.assertEqual(response.context['quotas_table'].data, [])
        self.assertTrue(any('climate:quotas:get' in m
                            for m in self.messages_of(response)))


class AdminPanelsForMembersTests(helpers.TestCase):

    def test_a_member_gets_no_admin_panel(self):
        listing = self.mock_api('host_list')
        health = self.mock_api('health_get')
        for url in (HOSTS, HEALTH):
            response = self.client.get(url)
            self.assertNotEqual(response.status_code, 200, url)
        listing.assert_not_called()
        health.assert_not_called()

    def test_the_project_panels_are_in_the_navigation(self):
        self.mock_api('lease_list', return_value=([], False))
        response = self.client.get(reverse('horizon:project:leases:index'))
        for url in (AVAILABILITY, USAGE):
            self.assertContains(response, 'href="%s"' % url)
        self.assertNotContains(response, 'href="%s"' % HEALTH)


class WithoutTheServiceTests(helpers.TestCase):
    reservation_in_catalog = False

    def test_no_panel_without_the_reservation_service(self):
        listing = self.mock_api('lease_list')
        response = self.client.get(reverse('horizon:project:leases:index'))
        self.assertNotEqual(response.status_code, 200)
        listing.assert_not_called()


class HostsTests(helpers.AdminTestCase):

    def test_the_hosts(self):
        self.mock_api('host_list', return_value=[climate_api.Host(
            {'id': '1', 'hypervisor_hostname': 'compute-1', 'vcpus': 16,
             'memory_mb': 65536, 'local_gb': 100,
             'hypervisor_type': 'static', 'reservable': True})])
        response = self.client.get(HOSTS)
        self.assertEqual(response.status_code, 200)
        self.assertContains(response, 'compute-1')
        self.assertContains(response, '65536')

    def test_the_add_form_renders_as_page_and_modal(self):
        response = self.client.get(HOST_CREATE)
        self.assertTemplateUsed(response, 'admin/reservation_hosts/create.html')
        response = self.client.get(HOST_CREATE,
                                   HTTP_X_REQUESTED_WITH='XMLHttpRequest')
        self.assertTemplateUsed(response,
                                'admin/reservation_hosts/_create.html')

    def test_add_a_host_with_capabilities(self):
        create = self.mock_api('host_create', return_value=climate_api.Host(
            {'id': '2', 'hypervisor_hostname': 'compute-2'}))
        response = self.client.post(HOST_CREATE, {
            'name': 'compute-2', 'extra_capabilities': 'gpu=true\n\n'
                                                       ' rack = r12 \n'})
        self.assertNoFormErrors(response)
        self.assertRedirectsNoFollow(response, HOSTS)
        self.assertEqual(create.call_args.args[1:],
                         ('compute-2', {'gpu': 'true', 'rack': 'r12'}))

    def test_capabilities_must_be_key_value(self):
        create = self.mock_api('host_create')
        response = self.client.post(HOST_CREATE, {
            'name': 'compute-2', 'extra_capabilities': 'gpu'})
        self.assertIn('extra_capabilities', response.context['form'].errors)
        create.assert_not_called()

    def test_the_apis_refusal_stays_in_the_form(self):
        self.mock_api('host_create', side_effect=climate_api.
                      ReservationConflict('Host compute-1 is already '
                                          'reservable', 409))
        response = self.client.post(HOST_CREATE, {'name': 'compute-1',
                                                  'extra_capabilities': ''})
        self.assertContains(response, 'Host compute-1 is already reservable')

    def test_delete_says_why_it_was_refused(self):
        self.mock_api('host_list', return_value=[climate_api.Host(
            {'id': '1', 'hypervisor_hostname': 'compute-1'})])
        self.mock_api('host_delete', side_effect=climate_api.
                      ReservationConflict('Host 1 is reserved by lease x',
                                          409))
        self.client.post(HOSTS, {'action': 'hosts__delete__1'})
        response = self.client.get(HOSTS)
        self.assertTrue(any('reserved by lease x' in m
                            for m in self.messages_of(response)))


class HealthTests(helpers.AdminTestCase):

    def test_a_healthy_service(self):
        self.mock_api('health_get', return_value={
            'status': 'ok', 'events': {'backlog': 0, 'in_progress': 1,
                                       'oldest_overdue': None,
                                       'overdue_seconds': 0},
            'checks': {'database': {'ok': True, 'seconds': 0.01},
                       'message_bus': {'ok': True, 'seconds': 0.02,
                                       'manager': 'manager-1'}}})
        response = self.client.get(HEALTH)
        self.assertEqual(response.status_code, 200)
        self.assertContains(response, 'alert-success')
        self.assertContains(response, 'answered by manager-1')

    def test_a_failing_check_says_what(self):
        self.mock_api('health_get', return_value={
            'status': 'failing', 'events': None,
            'checks': {'database': {'ok': True, 'seconds': 0.01},
                       'message_bus': {'ok': False,
                                       'error': 'no answer within 5 s'}}})
        response = self.client.get(HEALTH)
        self.assertContains(response, 'alert-danger')
        self.assertContains(response, 'no answer within 5 s')


def test_a_503_health_answer_is_still_the_report():
    report = {'status': 'failing', 'checks': {'database': {'ok': False}}}
    raw = mock.Mock()
    raw.request.side_effect = climate_api.climate_client.APIError(
        503, '{"status": "failing", "checks": {"database": {"ok": false}}}')
    with mock.patch.object(climate_api.climate_client, 'Client',
                           return_value=raw), \
            mock.patch.object(climate_api, 'session_of'), \
            mock.patch.object(climate_api, 'endpoint_of'):
        assert climate_api.health_get(object()) == report
