"""Leases without reservations and leases with events of their own (as
Heat's ``OS::Blazar::Lease`` sends them), while the engine runs.

A user's event is stored and shown with the lease's events; one of type
``notification`` is run once at its time (a notice: see
test_webhooks.py), any other type is never claimed.  Neither holds back
the lease's own events, and an overdue one of another type does not keep
the engine awake.
"""

import time

from climate import context
from climate import dates
from climate.db import api as db_api
from climate.manager.workers import events as event_engine
from climate.tests import fixtures
from climate.tests.fixtures import climate_env  # noqa: F401 - pytest fixture


def _create(env, **kw):
    resp = env.request('POST', '/v1/leases', body=fixtures.lease_body(**kw))
    assert resp.status_int == 201, resp.text
    return resp.json['lease']


def test_a_lease_without_reservations_runs_its_events(climate_env):
    body = fixtures.lease_body(name='empty', start='now',
                               end=fixtures.iso(4),
                               before_end_date=fixtures.iso(2))
    del body['reservations']
    resp = climate_env.request('POST', '/v1/leases', body=body)
    assert resp.status_int == 201, resp.text
    lease = resp.json['lease']
    assert lease['reservations'] == []
    # the events Blazar makes for it
    assert [e['event_type'] for e in lease['events']] == [
        'start_lease', 'before_end_lease', 'end_lease']
    done = climate_env.wait_for_status(lease['id'], 'TERMINATED')
    assert [(e['event_type'], e['status'], e['attempts'])
            for e in done['events']] == [('start_lease', 'DONE', 1),
                                         ('before_end_lease', 'DONE', 1),
                                         ('end_lease', 'DONE', 1)]


def test_a_lease_without_reservations_can_be_updated(climate_env):
    lease = _create(climate_env, name='later', start=fixtures.iso(3600),
                    end=fixtures.iso(7200), reservations=[])
    url = '/v1/leases/' + lease['id']
    new_end = fixtures.iso(10800)
    resp = climate_env.request('PUT', url, body={'name': 'later-renamed',
                                                 'end_date': new_end})
    assert resp.status_int == 200, resp.text
    updated = resp.json['lease']
    assert updated['name'] == 'later-renamed'
    assert updated['end_date'] == new_end + '.000000'
    assert [e['time'] for e in updated['events']
            if e['event_type'] == 'end_lease'] == [updated['end_date']]


def test_user_events_are_kept_shown_and_notifications_run(climate_env):
    lease = _create(
        climate_env, name='heat', start='now', end=fixtures.iso(4),
        before_end_date=fixtures.iso(2),
        events=[{'event_type': 'notification', 'time': fixtures.iso(0)},
                {'event_type': 'reminder', 'time': fixtures.iso(7200)},
                {'event_type': 'reminder', 'time': fixtures.iso(0)}])
    # (the overdue reminder and the notification share a time: sorted)
    mine = sorted((e['event_type'], e['status']) for e in lease['events']
                  if e['event_type'] in ('notification', 'reminder'))
    assert mine == [('notification', 'UNDONE'), ('reminder', 'UNDONE'),
                    ('reminder', 'UNDONE')]
    done = climate_env.wait_for_status(lease['id'], 'TERMINATED')
    time.sleep(0.3)  # a wrong claim of the overdue one would show by now
    shown = climate_env.request('GET', '/v1/leases/' + lease['id']).json
    listed = climate_env.request('GET', '/v1/leases').json['leases']
    assert [one for one in listed if one['id'] == lease['id']] == [
        shown['lease']]
    by_type = {}
    for e in shown['lease']['events']:
        by_type.setdefault(e['event_type'], []).append(
            (e['status'], e['attempts']))
    for run in ('start_lease', 'before_end_lease', 'end_lease',
                'notification'):
        assert by_type[run] == [('DONE', 1)], run
    # the overdue reminder as well as the later one: never run
    assert by_type['reminder'] == [('UNDONE', 0), ('UNDONE', 0)]
    assert done['status'] == 'TERMINATED'
    # an overdue user event does not keep the engine from sleeping
    # (other tests' leases may have events to come, none overdue)
    ctx = context.admin_context()
    due = db_api.next_due(ctx, event_engine._RUN_ORDER,
                          event_engine._CLAIM_ORDER)
    assert due is None or due > dates.utcnow()


def test_an_update_keeps_user_events_where_they_were(climate_env):
    lease = _create(
        climate_env, name='kept', start=fixtures.iso(3600),
        end=fixtures.iso(7200),
        events=[{'event_type': 'notification', 'time': fixtures.iso(5000)}])
    note = [e for e in lease['events'] if e['event_type'] == 'notification']
    resp = climate_env.request('PUT', '/v1/leases/' + lease['id'], body={
        'start_date': fixtures.iso(1800), 'end_date': fixtures.iso(9000),
        'events': []})
    assert resp.status_int == 200, resp.text
    assert [e for e in resp.json['lease']['events']
            if e['event_type'] == 'notification'] == note
