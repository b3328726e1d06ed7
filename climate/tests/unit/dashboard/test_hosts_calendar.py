"""The hosts' calendar (Admin -> Reservations -> Hosts -> Calendar): the
API's timeline folded into columns; the API wrapper mocked."""

import datetime
import unittest

from django.urls import reverse

from climate.dashboard.api import climate as climate_api
from climate.dashboard.content.hosts import calendar
from climate.tests.unit.dashboard import helpers

CALENDAR = reverse('horizon:admin:reservation_hosts:calendar')
HOSTS = reverse('horizon:admin:reservation_hosts:index')


def timeline(total, *segments, time_from='2090-01-01T00:00:00.000000',
             time_to='2090-01-03T00:00:00.000000'):
    return {'time_from': time_from, 'time_to': time_to,
            'matching_hosts': total,
            'segments': [{'start': s, 'end': e, 'free': f}
                         for s, e, f in segments]}


class ColumnsTests(unittest.TestCase):

    def test_a_booking_shows_in_the_columns_it_overlaps(self):
        cols = calendar.columns(timeline(
            3, ('2090-01-01T00:00:00.000000', '2090-01-02T00:00:00.000000', 3),
            ('2090-01-02T00:00:00.000000', '2090-01-02T01:00:00.000000', 1),
            ('2090-01-02T01:00:00.000000', '2090-01-03T00:00:00.000000', 3)),
            count=4)
        self.assertEqual([c['most'] for c in cols], [0, 0, 2, 0])
        self.assertEqual([c['fewest'] for c in cols], [0, 0, 0, 0])
        self.assertEqual(cols[2]['free'], 1)
        self.assertEqual(cols[2]['percent'], 67)
        self.assertEqual(cols[0]['start'], datetime.datetime(2090, 1, 1))
        self.assertEqual(cols[-1]['end'], datetime.datetime(2090, 1, 3))

    def test_a_column_wholly_booked_has_fewest_and_most(self):
        cols = calendar.columns(timeline(
            10, ('2090-01-01T00:00:00.000000', '2090-01-01T06:00:00.000000', 4),
            ('2090-01-01T06:00:00.000000', '2090-01-03T00:00:00.000000', 7)),
            count=2)
        self.assertEqual((cols[0]['most'], cols[0]['fewest']), (6, 3))
        self.assertEqual((cols[1]['most'], cols[1]['fewest']), (3, 3))

    def test_the_columns_do_not_grow_with_the_segments(self):
        start = datetime.datetime(2090, 1, 1)
        segments = []
        for i in range(5000):
            a = start + datetime.timedelta(seconds=30 * i)
            b = a + datetime.timedelta(seconds=30)
            segments.append((a.isoformat(), b.isoformat(), i % 7))
        cols = calendar.columns(timeline(
            10000, *segments, time_to=(start + datetime.timedelta(
                seconds=150000)).isoformat()))
        self.assertEqual(len(cols), calendar.COLUMNS)
        self.assertEqual(cols[0]['most'], 10000)
        self.assertEqual(cols[0]['fewest'], 10000 - 6)

    def test_no_host_no_division(self):
        cols = calendar.columns(timeline(0), count=3)
        self.assertEqual([c['percent'] for c in cols], [0, 0, 0])

    def test_the_window_of_the_parameters(self):
        now = datetime.datetime(2090, 1, 1, 10, 42, 5)
        self.assertEqual(calendar.window(None, None, now),
                         (datetime.datetime(2090, 1, 1, 10),
                          datetime.datetime(2090, 1, 8, 10), 7))
        self.assertEqual(calendar.window('2090-02-01 00:00', '30', now)[1:],
                         (datetime.datetime(2090, 3, 3), 30))
        # what the page does not offer falls back to its defaults
        self.assertEqual(calendar.window('someday', '1000', now)[2], 7)


class CalendarViewTests(helpers.AdminTestCase):

    def test_the_columns_and_their_counts(self):
        read = self.mock_api('host_timeline', return_value=timeline(
            3, ('2090-01-01T00:00:00.000000', '2090-01-01T12:00:00.000000', 2),
            ('2090-01-01T12:00:00.000000', '2090-01-02T00:00:00.000000', 3),
            time_to='2090-01-02T00:00:00.000000'))
        response = self.client.get(CALENDAR + '?start=2090-01-01+00:00&days=1')
        self.assertEqual(response.status_code, 200)
        self.assertEqual(read.call_args.args[1:],
                         ('2090-01-01 00:00', '2090-01-02 00:00'))
        self.assertContains(response, 'data-booked="1"', count=24)
        self.assertContains(response, 'data-booked="0"', count=24)
        self.assertContains(response, '3 reservable hosts, at most 1 booked')
        self.assertContains(response, '1 of 3 hosts booked at most')
        # zoom and move
        self.assertContains(response, 'start=2089-12-31+00%3A00&amp;days=1')
        self.assertContains(response, 'start=2090-01-01+00%3A00&amp;days=30')

    def test_the_apis_refusal_is_said(self):
        self.mock_api('host_timeline', side_effect=climate_api.
                      ReservationUnavailable('Cannot reach the API', 503))
        response = self.client.get(CALENDAR)
        self.assertEqual(response.status_code, 200)
        self.assertNotContains(response, 'id="hosts_calendar"')
        self.assertTrue(self.messages_of(response))

    def test_the_hosts_page_links_to_it(self):
        self.mock_api('host_list', return_value=[])
        response = self.client.get(HOSTS)
        self.assertContains(response, 'href="%s"' % CALENDAR)


class CalendarForMembersTests(helpers.TestCase):

    def test_a_member_gets_no_calendar(self):
        read = self.mock_api('host_timeline')
        response = self.client.get(CALENDAR)
        self.assertNotEqual(response.status_code, 200)
        read.assert_not_called()
