"""Every project's usage and quotas (Admin -> Reservations -> Project
Usage), the quota bars of the member's own page, and that a member
never reaches another project's; the API wrapper and Keystone mocked."""

from unittest import mock

from django.test import utils as test_utils
from django.urls import reverse
from openstack_dashboard.api import keystone

from climate.dashboard.api import climate as climate_api
from climate.dashboard.content.usage import rows
from climate.tests.unit.dashboard import helpers

INDEX = reverse('horizon:admin:reservation_projects:index')
MEMBER_USAGE = reverse('horizon:project:reservation_usage:index')


def _project(project_id):
    return reverse('horizon:admin:reservation_projects:project',
                   args=[project_id])


def _usage(project_id, *totals):
    return {'project_id': project_id,
            'start': '2090-01-01T00:00:00.000000',
            'end': '2090-02-01T00:00:00.000000',
            'totals': [{'resource_type': rtype, 'resource_class': cls,
                        'unit': unit, 'past': past, 'current': None,
                        'future': future, 'total': past + future}
                       for rtype, cls, unit, past, future in totals]}


HOST = ('physical:host', 'HOST', 'host-hours')
VCPU = ('physical:host', 'VCPU', 'vCPU-hours')
USAGES = {
    '1': _usage('1', HOST + (3.0, 6.0), VCPU + (0.0, 32.0)),
    '2': _usage('2'),
    '3': _usage('3', HOST + (0.0, 3.0),
                ('virtual:instance', 'VCPU', 'vCPU-hours', 8.0, 0.0)),
}
QUOTA = {'project_id': '1', 'budget': {'HOST': 10},
         'budget_period': 'month', 'max_concurrent': {'VCPU': 64,
                                                      'HOST': None},
         'max_extension': -1, 'max_lease_duration': 604800,
         'usage': {'held_now': {'VCPU': 16, 'HOST': 2},
                   'budget_used': {'HOST': 12.0}}}


class AdminProjectsTests(helpers.AdminTestCase):

    def setUp(self):
        super().setUp()
        patcher = mock.patch.object(keystone, 'tenant_list', return_value=(
            self.tenants.list(), False))
        self.addCleanup(patcher.stop)
        self.tenant_list = patcher.start()
        self.usage = self.mock_api(
            'usage_get', side_effect=lambda request, project_id=None, **kw:
            USAGES[project_id])
        self.quota_list = self.mock_api('quota_list', return_value={
            'defaults': {}, 'projects': [{'project_id': '3',
                                          'budget': {'HOST': 10}}]})

    def test_every_project_with_what_it_reserved(self):
        response = self.client.get(INDEX)
        self.assertEqual(response.status_code, 200)
        table = response.context['table'].data
        # by name: disabled_tenant, test_tenant, then the Chinese one
        self.assertEqual([r.id for r in table], ['2', '1', '3'])
        by_id = {r.id: r for r in table}
        self.assertEqual(str(by_id['1'].reserved),
                         '9.0 host-hours, 32.0 vCPU-hours')
        self.assertEqual(str(by_id['2'].reserved), '-')
        # a host lease's and an instance's vCPU-hours are one unit
        self.assertEqual(str(by_id['3'].reserved),
                         '3.0 host-hours, 8.0 vCPU-hours')
        self.assertEqual(str(by_id['3'].own_limits), 'Own limits')
        self.assertEqual(str(by_id['1'].own_limits), 'Defaults')
        self.assertEqual(sorted(c.kwargs['project_id']
                                for c in self.usage.call_args_list),
                         ['1', '2', '3'])
        self.assertContains(response, 'href="%s"' % _project('1'))

    def test_a_chart_per_unit_against_the_longest(self):
        response = self.client.get(INDEX)
        charts = {c['unit']: c['bars'] for c in response.context['charts']}
        self.assertEqual(sorted(charts), ['host-hours', 'vCPU-hours'])
        hosts = {b['id']: {p['key']: p['percent'] for p in b['parts']}
                 for b in charts['host-hours']}
        self.assertEqual(hosts, {
            '1': {'past': 33.33, 'current': 0, 'future': 66.67},
            '3': {'past': 0, 'current': 0, 'future': 33.33}})
        # the longest first; a project without any has no bar
        self.assertEqual([b['id'] for b in charts['vCPU-hours']], ['1', '3'])
        self.assertContains(response, 'id="projects_charts"')
        self.assertContains(response, 'data-unit="vCPU-hours"')

    @test_utils.override_settings(API_RESULT_PAGE_SIZE=2)
    def test_a_page_of_projects_asks_the_usage_of_that_page_only(self):
        response = self.client.get(INDEX)
        self.assertEqual([r.id for r in response.context['table'].data],
                         ['2', '1'])
        self.assertEqual(self.usage.call_count, 2)
        self.assertContains(response, 'marker=1')
        self.usage.reset_mock()
        response = self.client.get(INDEX + '?marker=1')
        self.assertEqual([r.id for r in response.context['table'].data],
                         ['3'])
        self.assertEqual(self.usage.call_count, 1)
        self.assertNotContains(response, 'marker=3')

    def test_a_refused_usage_is_the_apis_message(self):
        self.usage.side_effect = climate_api.ReservationUnavailable(
            'Cannot reach the reservation API', None)
        response = self.client.get(INDEX)
        self.assertEqual(response.status_code, 200)
        self.assertEqual({str(r.reserved) for r in
                          response.context['table'].data},
                         {'Unable to read'})
        self.assertIn('Cannot reach the reservation API',
                      self.messages_of(response))

    def test_one_projects_page_is_its_usage_and_quotas(self):
        self.mock_api('quota_get', return_value=QUOTA)
        with mock.patch.object(keystone, 'tenant_get',
                               return_value=self.tenants.first()):
            response = self.client.get(_project('1'))
        self.assertEqual(response.status_code, 200)
        self.usage.assert_called_once_with(mock.ANY, project_id='1')
        climate_api.quota_get.assert_called_once_with(mock.ANY, '1')
        self.assertContains(response, 'Usage &amp; Quotas of test_tenant')
        self.assertEqual(
            [(r.resource_class, r.total)
             for r in response.context['usage_table'].data],
            [('HOST', 9.0), ('VCPU', 32.0)])
        bars = {b['id']: b for b in response.context['quota_bars']}
        self.assertEqual(set(bars), {'concurrent/VCPU', 'budget/HOST'})
        self.assertEqual(bars['concurrent/VCPU']['percent'], 25.0)
        self.assertTrue(bars['budget/HOST']['over'])
        self.assertContains(response, 'id="quota_chart"')
        self.assertContains(response, '16 of 64 (25.0%)')


class MembersTests(helpers.TestCase):

    def test_a_member_never_gets_every_projects_usage(self):
        usage = self.mock_api('usage_get')
        listing = self.mock_api('quota_list')
        for url in (INDEX, _project('another-project')):
            response = self.client.get(url)
            self.assertNotEqual(response.status_code, 200, url)
        usage.assert_not_called()
        listing.assert_not_called()

    def test_the_members_page_is_its_projects_with_the_quota_bars(self):
        usage = self.mock_api('usage_get', return_value=USAGES['1'])
        quota = self.mock_api('quota_get', return_value=QUOTA)
        response = self.client.get(MEMBER_USAGE + '?project_id=other')
        self.assertEqual(response.status_code, 200)
        # no project named: the API takes the user's own
        usage.assert_called_once_with(mock.ANY, project_id=None)
        quota.assert_called_once_with(mock.ANY, None)
        self.assertContains(response, 'id="quota_chart"')
        self.assertNotContains(response, 'Project Usage')


class QuotaBarsTests(helpers.TestCase):

    def test_amounts_only_and_no_bar_without_a_limit(self):
        bars = {b['id']: b for b in rows.quota_bars(QUOTA)}
        # HOST at once has no limit; durations are no amounts
        self.assertEqual(sorted(bars), ['budget/HOST', 'concurrent/VCPU'])
        self.assertEqual(bars['budget/HOST']['percent'], 100.0)
        self.assertEqual(bars['budget/HOST']['used_percent'], 120.0)
        self.assertFalse(bars['concurrent/VCPU']['over'])

    def test_a_zero_limit(self):
        bars = rows.quota_bars({'max_concurrent': {'HOST': 0},
                                'usage': {'held_now': {}}})
        self.assertEqual([(b['percent'], b['over']) for b in bars],
                         [(0.0, False)])
        bars = rows.quota_bars({'max_concurrent': {'HOST': 0},
                                'usage': {'held_now': {'HOST': 1}}})
        self.assertEqual([(b['percent'], b['over']) for b in bars],
                         [(100.0, True)])

    def test_nothing_known_no_bar(self):
        self.assertEqual(rows.quota_bars({}), [])
