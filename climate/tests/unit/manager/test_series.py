"""Recurring series (microversion 1.15, ``climate.manager.series``)
through the in-process API on SQLite: the horizon moving books each
occurrence once, one that does not fit is skipped or stops the series,
an update replaces occurrences that have not started, a cancel leaves a
running one."""

import datetime

import pytest

from climate import context
from climate import dates
from climate.db import api as db_api
from climate.db import models
from climate import exceptions
from climate.lease import recurrence
from climate.manager.workers import series as series_worker
from climate import states
from climate.tests import fixtures

V = '1.15'
HOST = [{'resource_type': 'physical:host', 'min': 1, 'max': 1}]


@pytest.fixture
def env():
    with fixtures.ClimateEnvironment(overrides=[
            ('series_poll_interval', 'leases', 3600),
            ('series_horizon', 'leases', 7 * 86400)]) as environment:
        resp = environment.request('POST', '/v1/os-hosts',
                                   body={'name': 'compute-1'},
                                   persona='admin')
        assert resp.status_int == 201, resp.text
        yield environment


def create(env, name, rrule, on_conflict=None, expect=201, start=3600,
           reservations=HOST, **extra):
    recur = {'rrule': rrule}
    if on_conflict:
        recur['on_conflict'] = on_conflict
    body = {'name': name, 'start_date': fixtures.iso(start),
            'end_date': fixtures.iso(start + 3600),
            'reservations': reservations, 'recurrence': recur}
    body.update(extra)
    resp = env.request('POST', '/v1/lease-series', body=body, version=V)
    assert resp.status_int == expect, resp.text
    return resp.json.get('lease_series') or resp.json


def get(env, series_id):
    resp = env.request('GET', '/v1/lease-series/' + series_id, version=V)
    assert resp.status_int == 200, resp.text
    return resp.json['lease_series']


def numbers(series):
    return [o['occurrence'] for o in series['occurrences']]


def block(env, name, day):
    """A lease on the one host over occurrence ``day + 1``'s hour."""
    start = 3600 + day * 86400
    resp = env.request('POST', '/v1/leases', body=fixtures.lease_body(
        name, start=fixtures.iso(start), end=fixtures.iso(start + 3600),
        reservations=HOST))
    assert resp.status_int == 201, resp.text


def test_the_horizon_books_each_occurrence_once(env):
    ctx = context.admin_context()
    series = create(env, 'daily', 'FREQ=DAILY;COUNT=12')
    # 7 days ahead: the occurrences starting within them
    assert numbers(series) == list(range(1, 8))
    assert series['next_occurrence'] == 8
    worker = series_worker.SeriesWorker(env.manager.series)
    later = dates.utcnow() + datetime.timedelta(days=2)
    assert worker.run_pass(ctx, later) == 2
    # a second manager, or the same one again: nothing more
    assert worker.run_pass(ctx, later) == 0
    again = get(env, series['id'])
    assert numbers(again) == list(range(1, 10))
    names = {o['name'] for o in again['occurrences']}
    assert names == {'daily #%d' % n for n in range(1, 10)}
    # the last three within the horizon, none started yet
    end = dates.utcnow() + datetime.timedelta(days=6)
    assert worker.run_pass(ctx, end) == 3
    done = get(env, series['id'])
    assert numbers(done) == list(range(1, 13))
    assert done['next_occurrence'] is None and done['status'] == 'ACTIVE'
    # each at its day's hour
    firsts = [dates.parse_output(o['start_date'])
              for o in done['occurrences']]
    assert {b - a for a, b in zip(firsts, firsts[1:])} == {
        datetime.timedelta(days=1)}


def test_an_occurrence_is_made_once_by_the_unique_key(env):
    series = create(env, 'once', 'FREQ=DAILY;COUNT=2')
    first = series['occurrences'][0]
    lease = env.request('GET', '/v1/leases/' + first['lease_id'],
                        version=V).json['lease']
    assert (lease['series_id'], lease['occurrence']) == (series['id'], 1)
    ctx = context.RequestContext(project_id='project-a', user_id='alice')
    values = {'name': 'again', 'start_date': dates.parse_output(
        first['start_date']), 'end_date': dates.parse_output(
        first['end_date']), 'before_end_date': None, 'events': [],
        'reservations': [('noop', {})], 'series_id': series['id'],
        'occurrence': 1}
    validated = env.manager.leases.validated(ctx, values['reservations'])
    with pytest.raises(exceptions.OccurrenceExists):
        with db_api.writer(ctx):
            env.manager.leases.write_new(ctx, values, validated, None)
    assert len(env.rows(models.Lease)) == 2


def test_an_occurrence_the_horizon_cannot_book_is_skipped_and_said(env):
    ctx = context.admin_context()
    sent = []
    env.manager.series.notifier.send_series = \
        lambda _ctx, action, shown: sent.append((action, shown))
    series = create(env, 'skips', 'FREQ=DAILY;COUNT=9', on_conflict='skip')
    block(env, 'in the way', 7)  # occurrence 8's hour
    worker = series_worker.SeriesWorker(env.manager.series)
    assert worker.run_pass(ctx, dates.utcnow() + datetime.timedelta(
        days=2)) == 2
    shown = get(env, series['id'])
    assert numbers(shown) == [1, 2, 3, 4, 5, 6, 7, 9]
    assert [s['occurrence'] for s in shown['skipped']] == [8]
    assert shown['skipped'][0]['reason'].startswith(
        'Not enough hosts available')
    assert [(a, s['occurrence']['occurrence']) for a, s in sent] == [
        ('occurrence_skipped', 8)]


def test_with_refuse_an_occurrence_that_cannot_be_booked_stops_it(env):
    ctx = context.admin_context()
    sent = []
    env.manager.series.notifier.send_series = \
        lambda _ctx, action, shown: sent.append(action)
    series = create(env, 'stops', 'FREQ=DAILY;COUNT=9')
    block(env, 'in the way', 7)
    worker = series_worker.SeriesWorker(env.manager.series)
    later = dates.utcnow() + datetime.timedelta(days=2)
    assert worker.run_pass(ctx, later) == 1
    shown = get(env, series['id'])
    assert shown['status'] == recurrence.STOPPED
    assert shown['status_reason'].startswith(
        'occurrence 8 (') and 'Not enough hosts' in shown['status_reason']
    assert numbers(shown) == list(range(1, 8)) and sent == ['stopped']
    assert worker.run_pass(ctx, later) == 0
    # an update from there on books it again, elsewhere in time
    resp = env.request('PUT', '/v1/lease-series/' + series['id'], body={
        'from_occurrence': 8,
        'start_date': fixtures.iso(3600 + 7 * 86400 + 2 * 3600),
        'end_date': fixtures.iso(3600 + 7 * 86400 + 3 * 3600)}, version=V)
    assert resp.status_int == 200, resp.text
    moved = resp.json['lease_series']
    assert moved['status'] == 'ACTIVE' and moved['first_occurrence'] == 8
    assert moved['recurrence']['rrule'] == 'FREQ=DAILY;COUNT=2'
    assert numbers(moved) == [1, 2, 3, 4, 5, 6, 7, 8]


def test_an_update_refuses_to_replace_a_started_occurrence(env):
    series = create(env, 'started', 'FREQ=DAILY;COUNT=3')
    first = series['occurrences'][0]['lease_id']
    with db_api.writer(context.admin_context()) as session:
        session.query(models.Lease).filter_by(id=first).update(
            {'status': states.ACTIVE})
        from climate.db import lease_json
        lease_json.changed(session, (first,))
    resp = env.request('PUT', '/v1/lease-series/' + series['id'], body={
        'from_occurrence': 1, 'start_date': fixtures.iso(7200),
        'end_date': fixtures.iso(9000)}, version=V)
    assert resp.status_int == 409, resp.text
    assert 'it has started; update the series from a later occurrence' in \
        resp.json['error_message']
    assert numbers(get(env, series['id'])) == [1, 2, 3]
    # a cancel leaves the running one
    resp = env.request('DELETE', '/v1/lease-series/' + series['id'],
                       version=V)
    assert resp.status_int == 204, resp.text
    shown = get(env, series['id'])
    assert shown['status'] == recurrence.CANCELLED
    assert [o['lease_id'] for o in shown['occurrences']] == [first]
    assert env.request('PUT', '/v1/lease-series/' + series['id'], body={
        'from_occurrence': 2}, version=V).status_int == 409


def test_occurrences_share_the_template_moved_in_time(env):
    series = create(env, 'events', 'FREQ=DAILY;INTERVAL=3;COUNT=2',
                    start=3600,
                    reservations=[{'resource_type': 'noop'}],
                    events=[{'event_type': 'notification',
                             'time': fixtures.iso(3000)}])
    leases = [env.request('GET', '/v1/leases/' + o['lease_id'],
                          version=V).json['lease']
              for o in series['occurrences']]
    assert len(leases) == 2

    def at(lease, kind):
        return dates.parse_output(next(
            e['time'] for e in lease['events'] if e['event_type'] == kind))
    apart = datetime.timedelta(days=3)
    for kind in ('start_lease', 'end_lease', 'notification'):
        assert at(leases[1], kind) - at(leases[0], kind) == apart


def test_other_projects_neither_see_nor_change_a_series(env):
    series = create(env, 'mine', 'FREQ=DAILY;COUNT=2')
    for method in ('GET', 'DELETE'):
        resp = env.request(method, '/v1/lease-series/' + series['id'],
                           version=V, project='project-b')
        assert resp.status_int == 404, resp.text
    assert env.request('GET', '/v1/lease-series', version=V,
                       project='project-b').json['lease_series'] == []
    everyone = env.request('GET', '/v1/lease-series', version=V,
                           persona='admin').json['lease_series']
    assert [s['id'] for s in everyone] == [series['id']]
