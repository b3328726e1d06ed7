"""A plugin failing at start or end: retries with backoff, then ERROR with
the reason, visible through the API; failed attempts leave nothing behind.

The ``failing`` plugin (failing_plugin.py) is a real entry point the
managers load from their PYTHONPATH.
"""

import datetime
import time

from climate.tests.functional import procs

MAX_ATTEMPTS = 3
BACKOFF = 2.0
# the retry time is computed at second precision, and the machine is busy
SLACK = 2.5


def _start_event(lease):
    return next(e for e in lease['events'] if e['event_type'] ==
                'start_lease')


def _event(lease, event_type):
    return next(e for e in lease['events'] if e['event_type'] == event_type)


def test_failing_events_retry_then_error(climate):
    climate.start(managers=2, failing_plugin_available=True, manager_opts={
        'plugins': 'noop,failing',
        'event_max_attempts': MAX_ATTEMPTS,
        'event_retry_backoff': BACKOFF,
        'event_retry_max_backoff': 60,
    })
    client = climate.client()
    db = climate.database
    now = procs.utcnow()
    # two hours: the default before_end (60 min before the end) stays far
    hour = now + datetime.timedelta(hours=2)

    def failing(**params):
        return [{'resource_type': 'noop'},
                dict(resource_type='failing', **params)]

    doomed = client.create_lease('doomed', 'now', hour, failing(
        fail_start_attempts=99))
    flaky = client.create_lease('flaky', 'now', hour, failing(
        fail_start_attempts=MAX_ATTEMPTS - 1))
    ending = client.create_lease(
        'flaky-end', 'now', now + datetime.timedelta(seconds=3),
        failing(fail_end_attempts=1))

    # Watch the doomed lease through the API: each attempt and reason.
    attempts_seen = {}  # attempt number -> first time seen
    reasons = []
    deadline = time.monotonic() + 90
    while True:
        lease = client.get_lease(doomed['id'])
        attempts = _start_event(lease)['attempts']
        attempts_seen.setdefault(attempts, time.monotonic())
        if lease['status_reason'] and lease['status_reason'] not in reasons:
            reasons.append(lease['status_reason'])
        if lease['status'] == 'ERROR':
            break
        assert time.monotonic() < deadline, ('doomed lease never reached '
                                             'ERROR: %s' % lease)
        time.sleep(0.1)

    # ERROR, with the reason on the lease and on the event
    start = _start_event(lease)
    assert start['status'] == 'ERROR'
    assert start['attempts'] == MAX_ATTEMPTS
    assert 'RuntimeError: failing plugin: start attempt %d' % MAX_ATTEMPTS \
        in start['last_error'], start
    assert lease['status_reason'].startswith(
        'start_lease failed after %d attempts: RuntimeError: failing '
        'plugin: start attempt %d' % (MAX_ATTEMPTS, MAX_ATTEMPTS)), lease
    # the retries were announced on the lease while they waited
    for attempt in range(1, MAX_ATTEMPTS):
        assert any('start_lease attempt %d of %d failed (RuntimeError: '
                   'failing plugin: start attempt %d' % (
                       attempt, MAX_ATTEMPTS, attempt) in r and
                   'next attempt at' in r for r in reasons), reasons
    # backoff: BACKOFF, then twice that, between attempts
    times = [attempts_seen[n] for n in range(1, MAX_ATTEMPTS + 1)]
    gaps = [b - a for a, b in zip(times, times[1:])]
    print('\nattempts of the doomed start seen %s s apart (backoff %s, '
          'doubling)' % (['%.1f' % g for g in gaps], BACKOFF))
    for n, gap in enumerate(gaps):
        wanted = BACKOFF * 2 ** n
        assert wanted - 1.5 <= gap <= wanted + SLACK, (n, gaps)
    assert gaps[1] > gaps[0], gaps

    # a start that fails twice then works: ACTIVE, and the error is gone
    procs.wait_for(lambda: client.get_lease(flaky['id'])['status'] ==
                   'ACTIVE', 60, interval=0.2,
                   message=lambda: str(client.get_lease(flaky['id'])))
    flaky = client.get_lease(flaky['id'])
    start = _start_event(flaky)
    assert (start['status'], start['attempts'], start['last_error']) == (
        'DONE', MAX_ATTEMPTS, None)
    assert flaky['status_reason'] is None
    assert [r['status'] for r in flaky['reservations']] == ['active'] * 2

    # an end that fails once then works: TERMINATED after 2 attempts
    procs.wait_for(lambda: client.get_lease(ending['id'])['status'] ==
                   'TERMINATED', 60, interval=0.2,
                   message=lambda: str(client.get_lease(ending['id'])))
    end = _event(client.get_lease(ending['id']), 'end_lease')
    assert (end['status'], end['attempts']) == ('DONE', 2), end

    # failed attempts rolled back everything they wrote, the noop
    # reservation's action included; each success wrote once
    def actions(lease_id):
        return sorted(tuple(row) for row in db.query(
            'SELECT action, count(*) FROM noop_actions WHERE lease_id = :i '
            "AND action != 'reserve' GROUP BY action", i=lease_id))
    assert actions(doomed['id']) == []
    assert actions(flaky['id']) == [('on_start', 2)]
    assert ('on_end', 2) in actions(ending['id'])
    assert not [a for a in actions(ending['id']) if a[0].startswith(
        'failed')]

    # an ERROR lease can still be deleted, and is reclaimed
    client.delete_lease(doomed['id'])
    assert actions(doomed['id']) == [('delete', 2), ('on_end', 2)]
