"""Recurring series (Project -> Reservations -> Lease Series): the list,
a series' page, its cancel, and a series made from the lease create form
with a rule; the API wrapper mocked."""

from django.urls import reverse
from django.utils import html

from climate.dashboard.api import climate as climate_api
from climate.dashboard import validation
from climate.tests.unit.dashboard import helpers

INDEX = reverse('horizon:project:lease_series:index')
CREATE = reverse('horizon:project:leases:create')


def _detail(series_id):
    return reverse('horizon:project:lease_series:detail', args=[series_id])


def series(series_id='s1', status='ACTIVE', **fields):
    values = {
        'id': series_id, 'name': 'seminar', 'project_id': 'project-a',
        'recurrence': {'rrule': 'FREQ=WEEKLY;COUNT=10',
                       'timezone': 'Europe/Paris', 'on_conflict': 'skip'},
        'status': status, 'status_reason': None, 'first_occurrence': 1,
        'start_date': '2090-01-01T00:00:00.000000',
        'end_date': '2090-01-01T02:00:00.000000',
        'next_occurrence': 3,
        'next_start_date': '2090-01-15T00:00:00.000000',
        'occurrences': [
            {'occurrence': 1, 'lease_id': 'l1', 'name': 'seminar #1',
             'start_date': '2090-01-01T00:00:00.000000',
             'end_date': '2090-01-01T02:00:00.000000', 'status': 'PENDING'}],
        'skipped': [{'occurrence': 2,
                     'start_date': '2090-01-08T00:00:00.000000',
                     'end_date': '2090-01-08T02:00:00.000000',
                     'reason': 'Not enough hosts available'}]}
    values.update(fields)
    return climate_api.Series(values)


class SeriesListTests(helpers.TestCase):

    def test_the_projects_series(self):
        self.mock_api('series_list', return_value=[
            series(), series('s2', 'CANCELLED', name='demo')])
        response = self.client.get(INDEX)
        self.assertEqual(response.status_code, 200)
        rows = {r.datum.id: r for r in response.context['table'].get_rows()}
        cells = rows['s1'].cells
        self.assertEqual(cells['rrule'].data, 'FREQ=WEEKLY;COUNT=10')
        self.assertEqual(cells['timezone'].data, 'Europe/Paris')
        self.assertEqual(cells['next'].data, '#3, 2090-01-15 00:00 UTC')
        self.assertEqual((cells['booked'].data, cells['skipped'].data),
                         (1, 1))
        self.assertEqual(str(cells['status'].data), 'Active')
        self.assertContains(response, 'href="%s"' % _detail('s1'))
        # a cancelled series has nothing left to cancel
        self.assertContains(response, 'series__cancel__s1')
        self.assertNotContains(response, 'series__cancel__s2')
        # a series is made from the lease form
        self.assertContains(response, 'href="%s"' % CREATE)

    def test_cancel(self):
        self.mock_api('series_list', return_value=[series()])
        cancel = self.mock_api('series_delete')
        response = self.client.post(INDEX, {'action': 'series__cancel__s1'})
        self.assertRedirectsNoFollow(response, INDEX)
        self.assertEqual(cancel.call_args.args[1], 's1')

    def test_a_refused_cancel_is_the_apis_sentence(self):
        self.mock_api('series_list', return_value=[series()])
        self.mock_api('series_delete', side_effect=climate_api.
                      ReservationNotFound('Lease series s1 not found', 404))
        self.client.post(INDEX, {'action': 'series__cancel__s1'})
        response = self.client.get(INDEX)
        self.assertTrue(any('Lease series s1 not found' in m
                            for m in self.messages_of(response)))

    def test_a_service_without_series_says_so(self):
        self.mock_api('series_list', side_effect=climate_api.
                      ReservationUnavailable('Microversion 1.15 is not '
                                             'supported', 406))
        response = self.client.get(INDEX)
        self.assertEqual(response.status_code, 200)
        self.assertTrue(any('1.15 is not supported' in m
                            for m in self.messages_of(response)))


class SeriesDetailTests(helpers.TestCase):

    def test_occurrences_and_skipped_ones_with_why(self):
        self.mock_api('series_get', return_value=series())
        response = self.client.get(_detail('s1'))
        self.assertEqual(response.status_code, 200)
        self.assertContains(response, 'href="%s"' % reverse(
            'horizon:project:leases:detail', args=['l1']))
        self.assertContains(response, 'seminar #1')
        self.assertContains(response, 'Not enough hosts available')
        self.assertContains(response, '#3, 2090-01-15 00:00 UTC')
        self.assertContains(response, '<title>seminar', html=False)

    def test_a_stopped_series_says_why(self):
        self.mock_api('series_get', return_value=series(
            status='STOPPED', next_start_date=None,
            status_reason='occurrence 4 refused: quota'))
        response = self.client.get(_detail('s1'))
        self.assertContains(response, 'occurrence 4 refused: quota')
        self.assertContains(response, 'None: every occurrence is booked')

    def test_another_projects_series_is_not_found(self):
        self.mock_api('series_get', side_effect=climate_api.
                      ReservationNotFound('Lease series x not found', 404))
        response = self.client.get(_detail('x'))
        self.assertRedirectsNoFollow(response, INDEX)


def _data(**fields):
    data = {'name': 'seminar', 'lease_type': '',
            'start_date': '2090-01-01 00:00', 'end_date': '',
            'duration': '2h', 'resource_type': 'host', 'min_hosts': 1,
            'max_hosts': 1, 'rrule': 'FREQ=WEEKLY;COUNT=10',
            'timezone': 'Europe/Paris', 'on_conflict': 'skip'}
    data.update(fields)
    return data


class SeriesCreateTests(helpers.TestCase):

    def setUp(self):
        super().setUp()
        self.lease_create = self.mock_api('lease_create')
        self.create = self.mock_api('series_create', return_value=series())

    def test_a_rule_makes_a_series(self):
        response = self.client.post(CREATE, _data(
            rrule=' rrule:freq=weekly;byday=mo;count=10 '))
        self.assertNoFormErrors(response)
        self.assertRedirectsNoFollow(response, INDEX)
        body = self.create.call_args.args[1]
        self.assertEqual(body['recurrence'], {
            'rrule': 'FREQ=WEEKLY;BYDAY=MO;COUNT=10',
            'timezone': 'Europe/Paris', 'on_conflict': 'skip'})
        self.assertEqual((body['start_date'], body['end_date']),
                         ('2090-01-01 00:00', '2090-01-01T02:00:00'))
        self.assertEqual(body['reservations'][0]['resource_type'],
                         'physical:host')
        self.lease_create.assert_not_called()

    def test_the_message_says_what_was_booked(self):
        self.mock_api('series_list', return_value=[series()])
        response = self.client.post(CREATE, _data(), follow=True)
        self.assertIn('Series "seminar" created: 1 occurrences booked, '
                      '1 skipped.', self.messages_of(response))

    def test_utc_by_default(self):
        self.client.post(CREATE, _data(timezone='', on_conflict=''))
        self.assertEqual(self.create.call_args.args[1]['recurrence'],
                         {'rrule': 'FREQ=WEEKLY;COUNT=10'})

    def test_no_rule_one_lease(self):
        self.lease_create.return_value = helpers.lease()
        response = self.client.post(CREATE, _data(rrule='', timezone='',
                                                  on_conflict='refuse'))
        self.assertNoFormErrors(response)
        self.assertRedirectsNoFollow(response,
                                     reverse('horizon:project:leases:index'))
        self.assertNotIn('recurrence', self.lease_create.call_args.args[1])
        self.create.assert_not_called()

    def test_what_a_series_does_not_take(self):
        cases = [
            ({'rrule': 'FREQ=MONTHLY;COUNT=3'}, 'rrule', 'DAILY or WEEKLY'),
            ({'rrule': 'FREQ=WEEKLY'}, 'rrule', 'COUNT=n or UNTIL'),
            ({'rrule': 'FREQ=WEEKLY;COUNT'}, 'rrule', 'is not KEY=VALUE'),
            ({'timezone': 'Mars/Olympus'}, 'timezone', 'is not a time zone'),
            ({'hold_for': '600'}, 'hold_for', 'no temporary hold'),
            ({'lease_type': 'immediate', 'start_date': 'now'}, 'lease_type',
             'default type or scheduled'),
            ({'rrule': '', 'on_conflict': 'skip'}, 'rrule', 'give its rule'),
        ]
        for fields, field, words in cases:
            response = self.client.post(CREATE, _data(**fields))
            errors = response.context['form'].errors
            self.assertIn(field, errors, (fields, errors))
            self.assertIn(words, ' '.join(errors[field]))
            self.assertContains(response, html.escape(words))
        self.create.assert_not_called()
        self.lease_create.assert_not_called()

    def test_the_apis_refusal_names_the_occurrence(self):
        self.create.side_effect = climate_api.ReservationConflict(
            'Occurrence 3 of series seminar (2090-01-15 00:00 to 2090-01-15 '
            '02:00 UTC) cannot be booked: Not enough hosts available', 409)
        response = self.client.post(CREATE, _data(on_conflict='refuse'))
        self.assertEqual(response.status_code, 200)
        self.assertContains(response, 'Occurrence 3 of series seminar')


class ValidationTests(helpers.TestCase):

    def test_rules(self):
        self.assertEqual(validation.rrule('freq=daily;interval=2;until='
                                          '20900301'),
                         'FREQ=DAILY;INTERVAL=2;UNTIL=20900301')
        self.assertEqual(validation.rrule('  '), '')
        self.assertEqual(validation.timezone(' Europe/Paris '),
                         'Europe/Paris')
        self.assertEqual(validation.series_rules('scheduled', None, None),
                         {})
