"""Admin -> Reservations -> Maintenance: the windows, a plan (dry_run)
with each lease hit's options, an apply with actions and a default one,
a cancel; the API wrapper mocked."""

from django.urls import reverse

from climate.dashboard.api import climate as climate_api
from climate.dashboard.content.maintenance import plan
from climate.tests.unit.dashboard import helpers

INDEX = reverse('horizon:admin:reservation_maintenance:index')
PLAN = reverse('horizon:admin:reservation_maintenance:plan')

HIT = {'lease_id': 'l1', 'name': 'lab-extended', 'project_id': 'project-a',
       'status': 'INACTIVE', 'start_date': '2090-01-01T00:00:00.000000',
       'end_date': '2090-01-01T03:00:00.000000', 'action': None,
       'options': {'leave': {'hosts': ['compute-1']},
                   'shorten': {'end_date': '2090-01-01T01:00:00.000000'},
                   'move': {'hosts': {'compute-1': 'compute-40'}}}}
PLANNED = climate_api.MaintenanceWindow({
    'name': 'bmc-firmware', 'reason': 'BMC firmware upgrade',
    'start_date': '2090-01-01T01:00:00.000000',
    'end_date': '2090-01-01T05:00:00.000000', 'dry_run': True,
    'hosts': [{'id': '1', 'name': 'compute-1'}], 'affected': [HIT]})
APPLIED = climate_api.MaintenanceWindow(dict(
    PLANNED.fields, id='w1', status='APPLIED', dry_run=False,
    affected=[dict(HIT, action='move', done='moved from compute-1 to '
                   'compute-40')]))
CANCELLED = climate_api.MaintenanceWindow(dict(APPLIED.fields, id='w2',
                                               status='CANCELLED'))

WINDOW = {'name': 'bmc-firmware', 'reason': 'BMC firmware upgrade',
          'start_date': '2090-01-01 01:00', 'end_date': '2090-01-01 05:00',
          'hosts': 'compute-1, compute-2 compute-1',
          'hypervisor_properties': '', 'resource_properties': '',
          'default_action': ''}
BODY = {'name': 'bmc-firmware', 'reason': 'BMC firmware upgrade',
        'start_date': '2090-01-01 01:00', 'end_date': '2090-01-01 05:00',
        'hosts': ['compute-1', 'compute-2']}


class WindowsTests(helpers.AdminTestCase):

    def test_the_windows(self):
        self.mock_api('maintenance_list', return_value=[APPLIED, CANCELLED])
        response = self.client.get(INDEX)
        self.assertEqual(response.status_code, 200)
        rows = {r.datum.id: r for r in response.context['table'].get_rows()}
        self.assertEqual(rows['w1'].cells['hosts'].data, 'compute-1')
        self.assertEqual(rows['w1'].cells['hits'].data, 1)
        self.assertEqual(str(rows['w1'].cells['status'].data), 'In force')
        self.assertContains(response, 'windows__cancel__w1')
        self.assertNotContains(response, 'windows__cancel__w2')
        self.assertContains(response, 'href="%s"' % PLAN)

    def test_cancel_and_its_refusal(self):
        self.mock_api('maintenance_list', return_value=[APPLIED])
        cancel = self.mock_api('maintenance_delete')
        response = self.client.post(INDEX, {'action': 'windows__cancel__w1'})
        self.assertRedirectsNoFollow(response, INDEX)
        self.assertEqual(cancel.call_args.args[1], 'w1')
        cancel.side_effect = climate_api.ReservationNotFound(
            'Maintenance window w1 not found', 404)
        self.client.post(INDEX, {'action': 'windows__cancel__w1'})
        response = self.client.get(INDEX)
        self.assertTrue(any('Maintenance window w1 not found' in m
                            for m in self.messages_of(response)))


class PlanTests(helpers.AdminTestCase):

    def setUp(self):
        super().setUp()
        self.plan = self.mock_api('maintenance_plan', return_value=PLANNED)
        self.apply = self.mock_api('maintenance_apply', return_value=APPLIED)

    def test_the_form_alone_asks_nothing(self):
        response = self.client.get(PLAN)
        self.assertEqual(response.status_code, 200)
        self.assertContains(response, 'id="maintenance_plan"')
        self.assertNotContains(response, 'id="apply_button"')
        self.plan.assert_not_called()

    def test_a_plan_shows_each_leases_options(self):
        response = self.client.post(PLAN, dict(WINDOW, plan=''))
        self.assertEqual(response.status_code, 200)
        self.assertEqual(self.plan.call_args.args[1], BODY)
        self.apply.assert_not_called()
        [hit] = response.context['hits']
        self.assertEqual([o['action'] for o in hit['options']],
                         ['move', 'shorten', 'leave'])
        self.assertContains(response, 'Move: compute-1 → compute-40')
        self.assertContains(response, 'Shorten: ends at 2090-01-01 01:00 UTC')
        self.assertContains(response, 'Leave: keeps compute-1')
        self.assertContains(response, 'name="action__l1"')
        self.assertContains(response, '1 lease hit')
        self.assertContains(response, 'id="apply_button"')

    def test_apply_with_an_action_and_a_default(self):
        response = self.client.post(PLAN, dict(
            WINDOW, default_action='shorten', action__l1='move',
            action__l2='', action__l3='explode', apply=''))
        self.assertRedirectsNoFollow(response, INDEX)
        self.assertEqual(self.apply.call_args.args[1:],
                         (BODY, {'l1': 'move'}, 'shorten'))
        self.plan.assert_not_called()

    def test_the_success_says_how_many_leases_changed(self):
        self.mock_api('maintenance_list', return_value=[APPLIED])
        response = self.client.post(PLAN, dict(WINDOW, apply=''),
                                    follow=True)
        self.assertIn('Maintenance window "bmc-firmware" applied: 1 leases '
                      'changed.', self.messages_of(response))

    def test_a_refused_apply_is_its_sentence_and_a_new_plan(self):
        self.apply.side_effect = climate_api.ReservationConflict(
            'MaintenanceUnresolved: lease l1 (lab-extended) has no action; '
            'it offers move, shorten, leave', 409)
        response = self.client.post(PLAN, dict(WINDOW, action__l1='move',
                                               apply=''))
        self.assertEqual(response.status_code, 200)
        self.assertContains(response, 'id="apply_error"')
        self.assertContains(response, 'lease l1 (lab-extended) has no '
                            'action')
        self.plan.assert_called_once()
        # what was chosen stays chosen
        self.assertContains(response, '<option value="move" selected>')

    def test_a_refused_plan_stays_in_the_form(self):
        self.plan.side_effect = climate_api.ReservationBadRequest(
            'Host compute-9 not found', 400)
        response = self.client.post(PLAN, dict(WINDOW, plan=''))
        self.assertEqual(response.status_code, 200)
        self.assertContains(response, 'Host compute-9 not found')
        self.assertNotContains(response, 'id="apply_button"')

    def test_hosts_or_a_filter_and_dates_in_order(self):
        response = self.client.post(PLAN, dict(
            WINDOW, hosts='', end_date='2090-01-01 00:00', plan=''))
        self.assertEqual(set(response.context['form'].errors),
                         {'hosts', 'end_date'})
        self.plan.assert_not_called()
        self.client.post(PLAN, dict(
            WINDOW, hosts='', resource_properties='["=", "$rack", "r12"]',
            plan=''))
        self.assertEqual(self.plan.call_args.args[1]['resource_properties'],
                         '["=", "$rack", "r12"]')
        self.assertNotIn('hosts', self.plan.call_args.args[1])

    def test_no_lease_hit(self):
        self.plan.return_value = climate_api.MaintenanceWindow(dict(
            PLANNED.fields, affected=[]))
        response = self.client.post(PLAN, dict(WINDOW, plan=''))
        self.assertContains(response, 'id="plan_no_hit"')
        self.assertContains(response, 'id="apply_button"')


class MembersTests(helpers.TestCase):

    def test_a_member_gets_no_maintenance(self):
        listing = self.mock_api('maintenance_list')
        planning = self.mock_api('maintenance_plan')
        for url in (INDEX, PLAN):
            self.assertNotEqual(self.client.get(url).status_code, 200, url)
        self.assertNotEqual(self.client.post(PLAN, dict(WINDOW, plan=''))
                            .status_code, 200)
        listing.assert_not_called()
        planning.assert_not_called()


class OptionsTests(helpers.TestCase):

    def test_only_what_a_lease_offers(self):
        window = climate_api.MaintenanceWindow({'affected': [dict(
            HIT, options={'leave': {'hosts': ['compute-1']}})]})
        [hit] = plan.hits(window)
        self.assertEqual([o['action'] for o in hit['options']], ['leave'])

    def test_chosen_actions(self):
        self.assertEqual(plan.chosen_actions({
            'action__a': 'move', 'action__b': '', 'action__c': 'x',
            'other': 'shorten'}), {'a': 'move'})
