"""The Leases panel: table, pages, filters, detail, delete, create and
update, with the API wrapper mocked."""

import urllib.parse

from django.urls import reverse
from django.utils import html

from climate.dashboard.api import climate as climate_api
from climate.tests.unit.dashboard import helpers

INDEX = reverse('horizon:project:leases:index')
CREATE = reverse('horizon:project:leases:create')


def _update_url(lease_id='lease-1'):
    return reverse('horizon:project:leases:update', args=[lease_id])


def _detail_url(lease_id='lease-1'):
    return reverse('horizon:project:leases:detail', args=[lease_id])


class IndexTests(helpers.TestCase):

    def test_the_table_shows_the_leases(self):
        listing = self.mock_api('lease_list', return_value=(
            [helpers.lease(), helpers.lease('lease-2', name='other',
                                            status='ACTIVE',
                                            lease_type='with_retries')],
            False))
        response = self.client.get(INDEX)
        self.assertEqual(response.status_code, 200)
        self.assertTemplateUsed(response,
                                'horizon/common/_data_table_view.html')
        rows = response.context['table'].data
        self.assertEqual([r.id for r in rows], ['lease-1', 'lease-2'])
        self.assertContains(response, '2090-01-01 12:00 UTC')
        self.assertContains(response, 'With retries')
        self.assertContains(response, 'physical:host')
        self.assertContains(response, _detail_url())
        listing.assert_called_once()
        _request, = listing.call_args.args
        self.assertEqual(listing.call_args.kwargs['marker'], None)
        self.assertEqual(listing.call_args.kwargs['sort_dir'], 'desc')
        self.assertEqual(listing.call_args.kwargs['limit'], 20)

    def test_a_next_page_link_carries_the_last_lease_as_marker(self):
        self.mock_api('lease_list', return_value=(
            [helpers.lease('a'), helpers.lease('b')], True))
        response = self.client.get(INDEX)
        self.assertContains(response, 'marker=b')

    def test_the_marker_is_passed_on_and_allows_going_back(self):
        listing = self.mock_api('lease_list', return_value=(
            [helpers.lease('c')], False))
        response = self.client.get(INDEX + '?marker=b')
        self.assertEqual(listing.call_args.kwargs['marker'], 'b')
        self.assertContains(response, 'prev_marker=c')

    def test_the_previous_page_reads_backwards_from_its_first_lease(self):
        listing = self.mock_api('lease_list', return_value=(
            [helpers.lease('b'), helpers.lease('a')], False))
        response = self.client.get(INDEX + '?prev_marker=c')
        kwargs = listing.call_args.kwargs
        self.assertEqual((kwargs['marker'], kwargs['sort_dir']),
                         ('c', 'asc'))
        # shown newest first again
        self.assertEqual([r.id for r in response.context['table'].data],
                         ['a', 'b'])

    def test_the_filter_is_the_apis(self):
        listing = self.mock_api('lease_list', return_value=([], False))
        # a new filter goes back to the first page; the session keeps it
        response = self.client.post(INDEX, {
            'leases__filter__q_field': 'status',
            'leases__filter__q': 'active'})
        self.assertRedirectsNoFollow(response, INDEX)
        self.client.get(INDEX)
        self.assertEqual(listing.call_args.kwargs.get('status'), ['ACTIVE'])
        self.client.post(INDEX, {'leases__filter__q_field': 'name',
                                 'leases__filter__q': 'lab '})
        self.client.get(INDEX)
        self.assertEqual(listing.call_args.kwargs.get('name'), 'lab')
        self.assertNotIn('status', listing.call_args.kwargs)

    def test_an_api_error_is_shown_not_raised(self):
        self.mock_api('lease_list', side_effect=climate_api.
                      ReservationUnavailable('The reservation API at x did '
                                             'not answer'))
        response = self.client.get(INDEX)
        self.assertEqual(response.status_code, 200)
        self.assertEqual(response.context['table'].data, [])
        self.assertTrue(any('did not answer' in m
                            for m in self.messages_of(response)),
                        self.messages_of(response))

    def test_delete_says_the_apis_reason(self):
        self.mock_api('lease_list', return_value=([helpers.lease()], False))
        delete = self.mock_api('lease_delete', side_effect=climate_api.
                               ReservationConflict('Lease lease-1 is '
                                                   'starting', 409))
        response = self.client.post(INDEX, {'action':
                                            'leases__delete__lease-1'})
        delete.assert_called_once()
        self.assertEqual(delete.call_args.args[1], 'lease-1')
        self.assertEqual(response.status_code, 302)
        response = self.client.get(INDEX)
        self.assertTrue(any('is starting' in m
                            for m in self.messages_of(response)),
                        self.messages_of(response))

    def test_delete(self):
        self.mock_api('lease_list', return_value=([helpers.lease()], False))
        delete = self.mock_api('lease_delete', return_value=None)
        response = self.client.post(INDEX, {'action':
                                            'leases__delete__lease-1'})
        self.assertRedirectsNoFollow(response, INDEX)
        self.assertEqual(delete.call_args.args[1], 'lease-1')

    def test_a_starting_lease_is_read_again_until_it_settles(self):
        self.mock_api('lease_list', return_value=(
            [helpers.lease('moving', status='STARTING'),
             helpers.lease('waiting', status='PENDING')], False))
        get = self.mock_api('lease_get', return_value=helpers.lease(
            'moving', status='ACTIVE'))
        response = self.client.get(INDEX)
        rows = {r.datum.id: r for r in response.context['table'].get_rows()}
        self.assertEqual(rows['moving'].status, None)
        self.assertEqual(rows['waiting'].status, True)
        response = self.client.get(
            INDEX + '?action=row_update&table=leases&obj_id=moving',
            HTTP_X_REQUESTED_WITH='XMLHttpRequest')
        self.assertEqual(response.status_code, 200)
        self.assertEqual(get.call_args.args[1], 'moving')
        self.assertContains(response, 'Active')

    def test_an_ended_lease_offers_no_update(self):
        self.mock_api('lease_list', return_value=(
            [helpers.lease('ended', status='TERMINATED'),
             helpers.lease('open', status='ACTIVE')], False))
        response = self.client.get(INDEX)
        self.assertNotContains(response, _update_url('ended'))
        self.assertContains(response, _update_url('open'))


class DetailTests(helpers.TestCase):

    def test_the_detail_says_why_and_lists_reservations_and_events(self):
        self.mock_api('lease_get', return_value=helpers.lease(
            status='ERROR', status_reason='Nova refused the aggregate: '
                                          'quota exceeded'))
        response = self.client.get(_detail_url())
        self.assertEqual(response.status_code, 200)
        self.assertContains(response, 'Nova refused the aggregate: quota '
                                      'exceeded')
        self.assertContains(response, 'alert-danger')
        self.assertContains(response, 'max=2')
        content = response.content.decode()
        # events in time order
        self.assertLess(content.index('start_lease'),
                        content.index('end_lease'))

    def test_a_missing_lease_goes_back_to_the_list(self):
        self.mock_api('lease_get', side_effect=climate_api.
                      ReservationNotFound('Lease nope not found', 404))
        response = self.client.get(_detail_url('nope'))
        self.assertRedirectsNoFollow(response, INDEX)


def _create_data(**fields):
    data = {'name': 'lab', 'lease_type': '', 'start_date': 'now',
            'end_date': '', 'duration': '4h', 'resource_type': 'host',
            'min_hosts': 1, 'max_hosts': 2, 'hypervisor_properties': '',
            'resource_properties': '', 'amount': '', 'vcpus': '',
            'memory_mb': '', 'disk_gb': '', 'affinity': 'none',
            'max_retries': ''}
    data.update(fields)
    return data


class CreateTests(helpers.TestCase):

    def test_the_form_renders(self):
        response = self.client.get(CREATE)
        self.assertEqual(response.status_code, 200)
        self.assertTemplateUsed(response, 'project/leases/create.html')
        self.assertContains(response, 'with_retries')

    def test_the_modal_is_the_ajax_template(self):
        response = self.client.get(CREATE,
                                   HTTP_X_REQUESTED_WITH='XMLHttpRequest')
        self.assertTemplateUsed(response, 'project/leases/_create.html')
        self.assertTemplateNotUsed(response, 'project/leases/create.html')

    def test_a_host_lease_for_a_duration(self):
        create = self.mock_api('lease_create',
                               return_value=helpers.lease())
        response = self.client.post(CREATE, _create_data(
            start_date='2090-01-01 12:00',
            hypervisor_properties='[">=", "$vcpus", "8"]'))
        self.assertNoFormErrors(response)
        self.assertRedirectsNoFollow(response, INDEX)
        body = create.call_args.args[1]
        self.assertEqual(body['start_date'], '2090-01-01 12:00')
        self.assertEqual(body['end_date'], '2090-01-01T16:00:00')
        self.assertEqual(body['reservations'], [{
            'resource_type': 'physical:host', 'min': 1, 'max': 2,
            'hypervisor_properties': '[">=", "$vcpus", "8"]',
            'resource_properties': ''}])
        self.assertNotIn('lease_type', body)

    def test_an_instance_lease_with_retries(self):
        create = self.mock_api('lease_create',
                               return_value=helpers.lease())
        response = self.client.post(CREATE, _create_data(
            resource_type='instance', lease_type='with_retries',
            max_retries=3, amount=2, vcpus=4, memory_mb=8192, disk_gb=20,
            # a lease with retries starts now (the API refuses a later
            # start)
            affinity='false', duration='', end_date='2090-01-02 00:00',
            start_date='now'))
        self.assertNoFormErrors(response)
        body = create.call_args.args[1]
        self.assertEqual((body['lease_type'], body['max_retries']),
                         ('with_retries', 3))
        self.assertEqual(body['reservations'], [{
            'resource_type': 'virtual:instance', 'amount': 2, 'vcpus': 4,
            'memory_mb': 8192, 'disk_gb': 20, 'affinity': False,
            'resource_properties': ''}])

    def test_a_hold(self):
        create = self.mock_api('lease_create', return_value=helpers.lease(
            status='HELD'))
        response = self.client.post(CREATE, _create_data(hold_for=600))
        self.assertNoFormErrors(response)
        self.assertEqual(create.call_args.args[1]['hold_for'], 600)
        create.reset_mock()
        response = self.client.post(CREATE, _create_data())
        self.assertNoFormErrors(response)
        self.assertNotIn('hold_for', create.call_args.args[1])

    def test_a_409_is_shown_in_the_form_as_the_api_says_it(self):
        text = ('Not enough hosts available: 2 host(s) match the filters '
                'and 0 of them are free from 2090-01-01 12:00:00 to '
                '2090-01-01 16:00:00 UTC; 2 needed. 2 would be free for as '
                'long from 2090-01-02 00:00:00 UTC.')
        self.mock_api('lease_create', side_effect=climate_api.
                      ReservationConflict(text, 409))
        response = self.client.post(CREATE, _create_data(
            start_date='2090-01-01 12:00', min_hosts=2,
            hypervisor_properties='["=", "$gpu", "true"]'))
        self.assertEqual(response.status_code, 200)
        self.assertContains(response, 'would be free for as long from '
                                      '2090-01-02 00:00:00 UTC')
        # and offers that window: the same lease, moved there
        later = CREATE + '?' + urllib.parse.urlencode({
            'name': 'lab', 'resource_type': 'host', 'min_hosts': 2,
            'max_hosts': 2, 'hypervisor_properties': '["=", "$gpu", "true"]',
            'start_date': '2090-01-02 00:00',
            'end_date': '2090-01-02 04:00'})
        self.assertContains(response, 'href="%s"' % html.escape(later))

    def test_a_refusal_without_a_later_window_offers_none(self):
        self.mock_api('lease_create', side_effect=climate_api.
                      ReservationConflict('Not enough hosts available: 4 '
                                          'needed, 3 match the filters', 409))
        response = self.client.post(CREATE, _create_data(min_hosts=4,
                                                         max_hosts=4))
        self.assertContains(response, '3 match the filters')
        self.assertNotContains(response, 'book_later_window')

    def test_input_is_checked_before_the_api_is_called(self):
        create = self.mock_api('lease_create')
        cases = [
            ({'min_hosts': 3, 'max_hosts': 2}, 'max_hosts'),
            ({'hypervisor_properties': '[">=", "$vcpus"'},
             'hypervisor_properties'),
            ({'hypervisor_properties': '{"a": 1}'}, 'hypervisor_properties'),
            ({'start_date': 'tomorrow'}, 'start_date'),
            ({'duration': '4 hours'}, 'duration'),
            ({'duration': '', 'end_date': '2000-01-01 00:00'}, 'end_date'),
            ({'end_date': '2090-01-02 00:00'}, 'duration'),
            ({'max_retries': 2}, 'max_retries'),
            ({'lease_type': 'immediate', 'start_date': '2090-01-01 12:00'},
             'start_date'),
            ({'lease_type': 'scheduled'}, 'start_date'),
            ({'resource_type': 'instance'}, 'amount'),
        ]
        for fields, field in cases:
            response = self.client.post(CREATE, _create_data(**fields))
            self.assertEqual(response.status_code, 200, fields)
            errors = response.context['form'].errors
            self.assertIn(field, errors, (fields, errors))
        create.assert_not_called()

    def test_a_window_from_the_availability_panel_is_prefilled(self):
        query = urllib.parse.urlencode({
            'start_date': '2090-01-01 12:00', 'end_date': '2090-01-01 16:00',
            'min_hosts': 2, 'max_hosts': 2, 'resource_type': 'host',
            'hypervisor_properties': '["=", "$gpu", "true"]',
            'unknown': 'ignored'})
        response = self.client.get(CREATE + '?' + query)
        initial = response.context['form'].initial
        self.assertEqual(initial['start_date'], '2090-01-01 12:00')
        self.assertEqual(initial['min_hosts'], '2')
        self.assertEqual(initial['hypervisor_properties'],
                         '["=", "$gpu", "true"]')
        self.assertNotIn('unknown', initial)


class UpdateTests(helpers.TestCase):

    def _post(self, **fields):
        data = {'lease_id': 'lease-1', 'name': 'lab', 'end_date': '',
                'prolong_for': '', 'reduce_by': '', 'start_date': '',
                'defer_by': '', 'advance_by': ''}
        data.update(fields)
        return self.client.post(_update_url(), data)

    def test_the_form_renders_with_the_name(self):
        self.mock_api('lease_get', return_value=helpers.lease())
        response = self.client.get(_update_url())
        self.assertEqual(response.status_code, 200)
        self.assertEqual(response.context['form'].initial['name'], 'lab')

    def test_extend_and_move_the_start(self):
        self.mock_api('lease_get', return_value=helpers.lease())
        update = self.mock_api('lease_update', return_value=helpers.lease())
        response = self._post(prolong_for='2h', defer_by='30m')
        self.assertNoFormErrors(response)
        self.assertRedirectsNoFollow(response, INDEX)
        self.assertEqual(update.call_args.args[1:], (
            'lease-1', {'prolong_for': '2h', 'defer_by': '30m'}))

    def test_shrink_and_rename(self):
        self.mock_api('lease_get', return_value=helpers.lease())
        update = self.mock_api('lease_update', return_value=helpers.lease())
        self._post(reduce_by='1h', name='smaller')
        self.assertEqual(update.call_args.args[2],
                         {'reduce_by': '1h', 'name': 'smaller'})

    def test_one_way_to_move_a_date_and_something_to_change(self):
        self.mock_api('lease_get', return_value=helpers.lease())
        update = self.mock_api('lease_update')
        response = self._post(prolong_for='2h', reduce_by='1h')
        self.assertIn('reduce_by', response.context['form'].errors)
        response = self._post()
        self.assertIn('Nothing to change', response.content.decode())
        response = self._post(end_date='soon')
        self.assertIn('end_date', response.context['form'].errors)
        update.assert_not_called()

    def test_a_started_lease_moves_its_end_only(self):
        self.mock_api('lease_get', return_value=helpers.lease(
            status='ACTIVE'))
        update = self.mock_api('lease_update', return_value=helpers.lease())
        response = self.client.get(_update_url())
        self.assertIn('prolong_for', response.context['form'].fields)
        self.assertNotIn('defer_by', response.context['form'].fields)
        self.assertNotContains(response, 'name="start_date"')
        self._post(prolong_for='1h', defer_by='30m')
        self.assertEqual(update.call_args.args[2], {'prolong_for': '1h'})

    def test_the_apis_refusal_is_shown(self):
        self.mock_api('lease_get', return_value=helpers.lease())
        self.mock_api('lease_update', side_effect=climate_api.
                      ReservationConflict('Not enough hosts available to '
                                          'extend the lease', 409))
        response = self._post(prolong_for='1w')
        self.assertEqual(response.status_code, 200)
        self.assertContains(response, 'Not enough hosts available to '
                                      'extend the lease')


class HoldTests(helpers.TestCase):

    def test_only_a_hold_offers_its_confirm(self):
        self.mock_api('lease_list', return_value=(
            [helpers.lease('held', status='HELD'),
             helpers.lease('open', status='PENDING')], False))
        response = self.client.get(INDEX)
        self.assertContains(response, 'leases__confirm__held')
        self.assertNotContains(response, 'leases__confirm__open')
        self.assertContains(response, 'Held, to confirm')
        rows = {r.datum.id: r for r in response.context['table'].get_rows()}
        self.assertEqual(rows['held'].status, True)

    def test_confirm(self):
        self.mock_api('lease_list', return_value=(
            [helpers.lease('held', status='HELD')], False))
        confirm = self.mock_api('lease_confirm', return_value=helpers.lease(
            'held', status='PENDING'))
        response = self.client.post(INDEX, {'action':
                                            'leases__confirm__held'})
        self.assertRedirectsNoFollow(response, INDEX)
        self.assertEqual(confirm.call_args.args[1], 'held')

    def test_a_refused_confirm_says_the_apis_reason(self):
        self.mock_api('lease_list', return_value=(
            [helpers.lease('held', status='HELD')], False))
        self.mock_api('lease_confirm', side_effect=climate_api.
                      ReservationConflict('Lease held cannot be confirmed: '
                                          'its hold expired at 2090-01-01 '
                                          '12:00:00 UTC.', 409))
        response = self.client.post(INDEX, {'action':
                                            'leases__confirm__held'})
        self.assertEqual(response.status_code, 302)
        response = self.client.get(INDEX)
        self.assertTrue(any('its hold expired' in m
                            for m in self.messages_of(response)),
                        self.messages_of(response))
