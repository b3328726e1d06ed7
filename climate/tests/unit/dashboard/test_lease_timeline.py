"""The project's leases over time (Project -> Reservations -> Leases ->
Timeline): a bar per lease over its window, a page at a time; the API
wrapper mocked."""

import datetime
from unittest import mock
import urllib.parse

from django.urls import reverse

from climate.dashboard.api import climate as climate_api
from climate.dashboard.content.leases import timeline
from climate.tests.unit.dashboard import helpers

TIMELINE = reverse('horizon:project:leases:timeline')
START = datetime.datetime(2090, 1, 1)
WEEK = START + datetime.timedelta(days=7)


def _at(**params):
    return TIMELINE + '?' + urllib.parse.urlencode(params)


LEASES = [
    # from before the window to its second day
    helpers.lease('across', name='across', status='ACTIVE',
                  start_date='2089-12-31T00:00:00.000000',
                  end_date='2090-01-02T00:00:00.000000'),
    # days 3.5 to 5
    helpers.lease('inside', name='inside', status='PENDING',
                  start_date='2090-01-04T12:00:00.000000',
                  end_date='2090-01-06T00:00:00.000000'),
    # past its end
    helpers.lease('beyond', name='beyond', status='ERROR',
                  start_date='2090-01-07T00:00:00.000000',
                  end_date='2090-01-09T00:00:00.000000'),
]


class TimelineViewTests(helpers.TestCase):

    def test_a_bar_per_lease_over_its_window(self):
        window = self.mock_api('lease_window', return_value=(LEASES, False))
        response = self.client.get(_at(start='2090-01-01 00:00', days=7))
        self.assertEqual(response.status_code, 200)
        window.assert_called_once_with(
            mock.ANY, '2090-01-01 00:00', '2090-01-08 00:00',
            timeline.LANES, marker=None)
        lanes = {lane['id']: lane for lane in response.context['lanes']}
        self.assertEqual((lanes['across']['left'], lanes['across']['width']),
                         (0.0, 14.29))
        self.assertTrue(lanes['across']['before'])
        self.assertEqual((lanes['inside']['left'], lanes['inside']['width']),
                         (50.0, 21.43))
        self.assertEqual((lanes['beyond']['left'], lanes['beyond']['width']),
                         (85.71, 14.29))
        self.assertTrue(lanes['beyond']['after'])
        self.assertEqual([lanes[k]['css'] for k in ('across', 'inside',
                                                    'beyond')],
                         ['active', 'pending', 'failed'])
        self.assertContains(response, 'id="leases_timeline"')
        self.assertContains(response, 'style="left: 50.0%; width: 21.43%"')
        # the hover: name, status in words, dates
        self.assertContains(response, 'title="inside (Pending): 2090-01-04 '
                            '12:00 UTC to 2090-01-06 00:00 UTC"')
        self.assertContains(response, 'href="%s"' % reverse(
            'horizon:project:leases:detail', args=['inside']))
        self.assertNotContains(response, 'id="timeline_more"')

    def test_a_page_at_a_time(self):
        self.mock_api('lease_window', return_value=(LEASES, True))
        response = self.client.get(_at(start='2090-01-01 00:00', days=7))
        more = _at(start='2090-01-01 00:00', days=7, marker='beyond')
        self.assertEqual(response.context['more'], more)
        self.assertContains(response, 'id="timeline_more"')
        self.assertNotContains(response, 'id="timeline_first"')
        window = self.mock_api('lease_window', return_value=(LEASES[:1],
                                                              False))
        response = self.client.get(more)
        self.assertEqual(window.call_args.kwargs['marker'], 'beyond')
        self.assertContains(response, 'id="timeline_first"')
        self.assertNotContains(response, 'id="timeline_more"')

    def test_zoom_and_moves_keep_the_span(self):
        self.mock_api('lease_window', return_value=([], False))
        response = self.client.get(_at(start='2090-01-01 00:00', days=1))
        self.assertEqual(response.context['earlier'],
                         _at(start='2089-12-31 00:00', days=1))
        self.assertEqual(response.context['later'],
                         _at(start='2090-01-02 00:00', days=1))
        self.assertContains(response, 'id="timeline_empty"')
        self.assertEqual([t['text'] for t in response.context['ticks']][::3],
                         ['2090-01-01 00:00', '2090-01-01 12:00',
                          '2090-01-02 00:00'])

    def test_today_by_default(self):
        window = self.mock_api('lease_window', return_value=([], False))
        with mock.patch('climate.dates.utcnow', return_value=
                        datetime.datetime(2090, 3, 5, 17, 42)):
            self.client.get(TIMELINE)
        self.assertEqual(window.call_args.args[1:3],
                         ('2090-03-05 00:00', '2090-03-12 00:00'))

    def test_the_apis_refusal_is_its_message(self):
        self.mock_api('lease_window', side_effect=climate_api.
                      ReservationUnavailable('Cannot reach the reservation '
                                             'API at http://x', None))
        response = self.client.get(TIMELINE)
        self.assertEqual(response.status_code, 200)
        self.assertTrue(any('Cannot reach the reservation API' in m
                            for m in self.messages_of(response)))

    def test_the_leases_table_links_to_it(self):
        self.mock_api('lease_list', return_value=([], False))
        response = self.client.get(reverse('horizon:project:leases:index'))
        self.assertContains(response, 'href="%s"' % TIMELINE)


class LanesTests(helpers.TestCase):

    def test_outside_or_undated_leases_have_no_bar(self):
        leases = [helpers.lease('old', end_date='2089-12-31T00:00:00'),
                  helpers.lease('later', start_date='2090-01-08T00:00:00',
                                end_date='2090-01-09T00:00:00'),
                  helpers.lease('undated', start_date=None)]
        self.assertEqual(timeline.lanes(leases, START, WEEK), [])

    def test_a_short_lease_stays_visible_within_the_window(self):
        lease = helpers.lease('short', start_date='2090-01-07T23:59:00',
                              end_date='2090-01-08T00:00:00',
                              status='HELD')
        [lane] = timeline.lanes([lease], START, WEEK)
        self.assertEqual(lane['width'], timeline.MIN_WIDTH)
        self.assertLessEqual(lane['left'] + lane['width'], 100.0)
        self.assertEqual(lane['css'], 'waiting')
