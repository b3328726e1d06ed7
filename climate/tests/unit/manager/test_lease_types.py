"""The lease types (microversion 1.11) through the in-process API on
SQLite, with compute hosts of the static inventory: each type's answers,
its states and transitions, the waiting leases' retries, order and
fairness, and clients before 1.11 seeing Blazar's states."""

import datetime
import time

import pytest

from climate import dates
from climate.tests import fixtures
from climate.tests.unit.plugins import test_physical_host as hosts

V = '1.11'
HOST = 'physical:host'


def _env(**leases_options):
    overrides = [(name, 'leases', value)
                 for name, value in leases_options.items()]
    return fixtures.ClimateEnvironment(overrides=overrides)


@pytest.fixture
def env():
    with _env(retry_interval=1, retry_overtake_limit=60) as environment:
        plugin = environment.plugin(HOST)
        plugin._backend = hosts.RecordingBackend(None)
        environment.backend = plugin._backend
        yield environment


def body(name, count=1, **extra):
    out = {'name': name, 'end_date': fixtures.iso(3600 * 3),
           'reservations': [{'resource_type': HOST, 'min': count,
                             'max': count}]}
    out.update(extra)
    return out


def create(env, name, count=1, expect=201, version=V, **extra):
    resp = env.request('POST', '/v1/leases', body=body(name, count, **extra),
                       version=version)
    assert resp.status_int == expect, resp.text
    return resp.json.get('lease') or resp.json


def get(env, lease_id, version=V):
    return env.request('GET', '/v1/leases/' + lease_id,
                       version=version).json['lease']


def wait(env, lease_id, status, timeout=15):
    return env.wait_for_status(lease_id, status, timeout, version=V)


def holder(env, name='holder', count=1, end=3600):
    """A default lease holding ``count`` hosts from now."""
    resp = env.request('POST', '/v1/leases', body={
        'name': name, 'start_date': 'now', 'end_date': fixtures.iso(end),
        'reservations': [{'resource_type': HOST, 'min': count,
                          'max': count}]})
    assert resp.status_int == 201, resp.text
    return resp.json['lease']


# -- input ---------------------------------------------------------------------

BAD = [
    ({'lease_type': 'sometimes'}, 'lease_type must be one of immediate, '
                                  'with_retries, best_effort, scheduled'),
    ({'lease_type': 3}, 'lease_type must be one of'),
    ({'max_retries': 2}, 'max_retries is for a lease_type with_retries'),
    ({'lease_type': 'immediate', 'max_retries': 2},
     'max_retries is for a lease_type with_retries, not immediate'),
    ({'lease_type': 'with_retries', 'max_retries': -1},
     'max_retries must be an integer from 0 to 10'),
    ({'lease_type': 'with_retries', 'max_retries': 11},
     'max_retries must be an integer from 0 to 10'),
    ({'lease_type': 'with_retries', 'max_retries': '2'},
     'max_retries must be an integer'),
    ({'lease_type': 'with_retries', 'max_retries': True},
     'max_retries must be an integer'),
    ({'lease_type': 'immediate', 'start_date': fixtures.iso(7200)},
     'start_date: a lease of type immediate starts now'),
    ({'lease_type': 'with_retries',
      'events': [{'event_type': 'notification', 'time': fixtures.iso(60)}]},
     'events: a with_retries lease takes none'),
    ({'lease_type': 'scheduled'}, 'Missing parameter start_date'),
]


@pytest.mark.parametrize('extra,message', BAD,
                         ids=[str(i) for i in range(len(BAD))])
def test_bad_input_is_400_and_writes_nothing(env, extra, message):
    hosts.add_hosts(env, 1)
    before = env.snapshot()
    resp = env.request('POST', '/v1/leases', body=body('bad', **extra),
                       version=V)
    assert resp.status_int == 400, resp.text
    assert message in resp.json['error_message'], resp.text
    assert env.snapshot() == before


def test_best_effort_without_a_cloud_is_immediate(env):
    """With the static inventory there is nothing outside it to free
    (``climate.manager.workers.hunts``): an immediate lease's answers."""
    hosts.add_hosts(env, 1)
    lease = create(env, 'hunt', lease_type='best_effort')
    assert lease['status'] == 'STARTING'
    wait(env, lease['id'], 'ACTIVE')
    before = env.settled_snapshot()
    resp = env.request('POST', '/v1/leases',
                       body=body('more', lease_type='best_effort'), version=V)
    assert resp.status_int == 409, resp.text
    assert 'Best effort' not in resp.json['error_message']
    assert env.snapshot() == before


def test_best_effort_is_for_hosts_only(env):
    resp = env.request('POST', '/v1/leases', body={
        'name': 'noop', 'lease_type': 'best_effort',
        'end_date': fixtures.iso(3600),
        'reservations': [{'resource_type': 'noop'}]}, version=V)
    assert resp.status_int == 400, resp.text
    assert 'lease_type best_effort is for reservations of physical:host ' \
        'only, not noop' in resp.json['error_message']


@pytest.mark.parametrize('field', ['lease_type', 'max_retries'])
def test_older_microversions_refuse_the_fields(env, field):
    hosts.add_hosts(env, 1)
    before = env.snapshot()
    resp = env.request('POST', '/v1/leases', body=dict(
        body('old', start_date='now'), **{field: 'immediate'}),
        version='1.10')
    assert resp.status_int == 400, resp.text
    assert '%s needs microversion 1.11 or later' % field in \
        resp.json['error_message']
    assert env.snapshot() == before


def test_a_lease_without_a_type_shows_null_fields(env):
    hosts.add_hosts(env, 1)
    made = holder(env)
    for version in ('1.0', V):
        shown = get(env, made['id'], version)
        assert (shown['lease_type'], shown['max_retries'],
                shown['retry_attempts'], shown['next_attempt_at']) == \
            (None, None, None, None)


# -- immediate -----------------------------------------------------------------

def test_immediate_starts_at_once_or_is_refused_with_nothing_written(env):
    hosts.add_hosts(env, 1)
    made = create(env, 'now', lease_type='immediate')
    assert made['status'] == 'STARTING'
    assert made['lease_type'] == 'immediate'
    start = dates.parse(made['start_date'], 'start_date')
    assert abs((start - dates.utcnow()).total_seconds()) < 5
    wait(env, made['id'], 'ACTIVE')
    before = env.settled_snapshot()
    resp = env.request('POST', '/v1/leases',
                       body=body('second', lease_type='immediate'),
                       version=V)
    assert resp.status_int == 409, resp.text
    assert resp.json['error_name'] == 'NotEnoughHosts'
    assert env.snapshot() == before


def test_immediate_start_refused_by_the_cloud_is_rolled_back(env):
    hosts.add_hosts(env, 1)

    def refuse(reservation_id, project_id, found):
        env.backend.calls.append(('start', reservation_id))
        raise RuntimeError('the cloud said no')

    env.backend.start = refuse
    made = create(env, 'fails', lease_type='immediate')
    failed = wait(env, made['id'], 'ERROR')
    assert 'start_lease failed after 1 attempt: RuntimeError: the cloud ' \
        'said no' in failed['status_reason']
    assert 'everything the start made was taken back' in \
        failed['status_reason']
    # tried once, then taken back
    assert [c[0] for c in env.backend.calls] == ['start', 'end']
    assert [r['status'] for r in failed['reservations']] == ['error']
    assert [e['event_type'] for e in failed['events']] == ['start_lease']
    # the host is free again
    del env.backend.start
    create(env, 'next', lease_type='immediate')
    # and the failed lease may still be deleted
    resp = env.request('DELETE', '/v1/leases/' + made['id'])
    assert resp.status_int == 204, resp.text


def test_a_default_lease_keeps_retrying_its_start(env):
    """Without a type a failed start is retried (and keeps its hosts)."""
    hosts.add_hosts(env, 1)
    attempts = []

    def refuse(reservation_id, project_id, found):
        attempts.append(reservation_id)
        raise RuntimeError('not yet')

    env.backend.start = refuse
    made = holder(env)
    deadline = time.monotonic() + 10
    while len(attempts) < 2:
        assert time.monotonic() < deadline, attempts
        time.sleep(0.05)
    lease = get(env, made['id'])
    assert lease['status'] in ('PENDING', 'STARTING'), lease
    assert lease['reservations'][0]['status'] == 'pending'


# -- scheduled -----------------------------------------------------------------

def test_scheduled_is_inactive_until_provisioned(env):
    hosts.add_hosts(env, 1)
    made = create(env, 'later', lease_type='scheduled',
                  start_date=fixtures.iso(3))
    assert made['status'] == 'INACTIVE'
    assert made['capacity_guaranteed'] is True
    assert "Climate's own" in made['capacity_note']
    # Blazar's state for older clients, in a lease and in a listing
    assert get(env, made['id'], '1.0')['status'] == 'PENDING'
    listed = env.request('GET', '/v1/leases', version='1.0').json['leases']
    assert [lease['status'] for lease in listed] == ['PENDING']
    listed = env.request('GET', '/v1/leases', version=V).json['leases']
    assert [lease['status'] for lease in listed] == ['INACTIVE']
    # an inactive lease may be changed as a pending one
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'end_date': fixtures.iso(7200)}, version=V)
    assert resp.status_int == 200, resp.text
    assert resp.json['lease']['status'] == 'INACTIVE'
    wait(env, made['id'], 'ACTIVE')


def test_scheduled_start_that_fails_for_good_ends_in_error(env):
    hosts.add_hosts(env, 1)

    def refuse(reservation_id, project_id, found):
        raise RuntimeError('no power')

    env.backend.start = refuse
    made = create(env, 'later', lease_type='scheduled', start_date='now')
    failed = wait(env, made['id'], 'ERROR', timeout=30)
    assert 'start_lease failed after 5 attempts: RuntimeError: no power' \
        in failed['status_reason'], failed
    assert 'taken back' in failed['status_reason']
    assert [r['status'] for r in failed['reservations']] == ['error']


# -- with_retries --------------------------------------------------------------

def test_waiting_lease_is_granted_when_capacity_is_released(env):
    hosts.add_hosts(env, 1)
    held = holder(env)
    made = create(env, 'patient', lease_type='with_retries', max_retries=10,
                  end_date=fixtures.iso(1800))
    assert made['status'] == 'WAITING'
    assert made['retry_attempts'] == 1 and made['max_retries'] == 10
    assert made['status_reason'].startswith(
        'attempt 1 of 11: Not enough hosts available')
    assert made['next_attempt_at'] is not None
    assert made['events'] == []
    assert get(env, made['id'], '1.0')['status'] == 'PENDING'
    # nothing booked while it waits
    assert env.bookings() == [b for b in env.bookings()
                              if b[0] != made['reservations'][0]['id']]
    # a waiting lease may be renamed, nothing else
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'end_date': fixtures.iso(7200)}, version=V)
    assert resp.status_int == 409, resp.text
    assert 'a waiting lease can only be renamed or deleted' in \
        resp.json['error_message']
    resp = env.request('PUT', '/v1/leases/' + made['id'],
                       body={'name': 'renamed'}, version=V)
    assert resp.status_int == 200, resp.text

    released = dates.utcnow()
    assert env.request('DELETE', '/v1/leases/' + held['id']).status_int == 204
    granted = wait(env, made['id'], 'ACTIVE')
    start = dates.parse(granted['start_date'], 'start_date')
    end = dates.parse(granted['end_date'], 'end_date')
    # its window starts when granted, as long as it asked
    assert released - datetime.timedelta(seconds=2) <= start
    assert abs((end - start).total_seconds() - 1800) <= 2
    assert granted['status_reason'] is None
    assert granted['next_attempt_at'] is None
    assert [e['event_type'] for e in granted['events']] == [
        'start_lease', 'before_end_lease', 'end_lease']


def test_retries_run_out(env):
    hosts.add_hosts(env, 1)
    holder(env)
    made = create(env, 'doomed', lease_type='with_retries', max_retries=2)
    assert made['status'] == 'WAITING'
    out = wait(env, made['id'], 'EXHAUSTED', timeout=20)
    assert out['retry_attempts'] == 3
    assert out['status_reason'].startswith(
        'not granted after 3 attempts: Not enough hosts available')
    assert get(env, made['id'], '1.0')['status'] == 'ERROR'
    # terminal: renamed or deleted only
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'end_date': fixtures.iso(9000)}, version=V)
    assert resp.status_int == 409
    assert env.request('DELETE', '/v1/leases/' +
                       made['id']).status_int == 204


def test_no_retry_asked_is_an_immediate_answer(env):
    hosts.add_hosts(env, 1)
    wait(env, holder(env)['id'], 'ACTIVE')
    before = env.settled_snapshot()
    resp = env.request('POST', '/v1/leases', body=body(
        'now-only', lease_type='with_retries', max_retries=0), version=V)
    assert resp.status_int == 409, resp.text
    assert env.snapshot() == before


def test_released_capacity_goes_to_the_waiting_leases_in_arrival_order():
    # no counted attempt during the test: releases alone wake the leases
    with _env(retry_interval=600) as env:
        _in_arrival_order(env)


def _in_arrival_order(env):
    hosts.add_hosts(env, 1)
    held = holder(env)
    waiting = [create(env, 'w%d' % i, lease_type='with_retries',
                      end_date=fixtures.iso(3))
               for i in range(3)]
    assert [w['status'] for w in waiting] == ['WAITING'] * 3
    # the later ones queue behind the first without trying
    assert [w['retry_attempts'] for w in waiting] == [1, 0, 0]
    env.request('DELETE', '/v1/leases/' + held['id'])
    # each ends three seconds after its grant, releasing the host
    done = [wait(env, w['id'], 'TERMINATED', timeout=30) for w in waiting]
    windows = [(w['start_date'], w['end_date']) for w in done]
    assert windows == sorted(windows)
    for (_start, end), (start, _end) in zip(windows, windows[1:]):
        assert end <= start  # one host: one after the other


def test_a_younger_lease_that_fits_overtakes_an_older_one():
    with _env(retry_interval=1, retry_overtake_limit=60) as env:
        hosts.add_hosts(env, 2)
        holder(env)
        big = create(env, 'big', count=2, lease_type='with_retries')
        small = create(env, 'small', lease_type='with_retries')
        assert big['status'] == small['status'] == 'WAITING'
        wait(env, small['id'], 'ACTIVE')
        assert get(env, big['id'])['status'] == 'WAITING'


def test_an_older_lease_that_waited_long_enough_is_not_overtaken():
    with _env(retry_interval=1, retry_overtake_limit=0) as env:
        hosts.add_hosts(env, 2)
        holder(env)
        big = create(env, 'big', count=2, lease_type='with_retries')
        small = create(env, 'small', lease_type='with_retries')
        time.sleep(3)  # three passes at least
        assert get(env, small['id'])['status'] == 'WAITING'
        assert get(env, big['id'])['status'] == 'WAITING'
        # nor does a young lease count its attempts meanwhile
        assert get(env, small['id'])['retry_attempts'] == 0


def _record_notifications(env):
    sent = []
    notifier = env.manager.leases.notifier
    original = notifier.send

    def send(ctx, action, lease, event=None):
        sent.append((lease['name'], action, lease['status']))
        return original(ctx, action, lease, event=event)

    notifier.send = send
    return sent


def test_each_transition_is_notified(env):
    hosts.add_hosts(env, 1)
    sent = _record_notifications(env)
    held = holder(env)
    wait(env, held['id'], 'ACTIVE')
    made = create(env, 'patient', lease_type='with_retries', max_retries=10)
    doomed = create(env, 'doomed', count=2, lease_type='with_retries',
                    max_retries=1)
    wait(env, doomed['id'], 'EXHAUSTED', timeout=20)
    env.request('DELETE', '/v1/leases/' + held['id'])
    wait(env, made['id'], 'ACTIVE')

    def refuse(reservation_id, project_id, found):
        raise RuntimeError('the cloud said no')

    env.request('DELETE', '/v1/leases/' + made['id'])
    env.backend.start = refuse
    failed = create(env, 'fails', lease_type='immediate')
    wait(env, failed['id'], 'ERROR')
    deadline = time.monotonic() + 5
    while ('fails', 'update', 'ERROR') not in sent:
        assert time.monotonic() < deadline, sent
        time.sleep(0.05)
    for expected in [('patient', 'create', 'WAITING'),
                     ('patient', 'update', 'STARTING'),
                     ('patient', 'start', 'ACTIVE'),
                     ('doomed', 'create', 'WAITING'),
                     ('doomed', 'update', 'EXHAUSTED'),
                     ('fails', 'create', 'STARTING'),
                     ('fails', 'update', 'ERROR')]:
        assert expected in sent, (expected, sent)
    assert sent.index(('patient', 'update', 'STARTING')) < \
        sent.index(('patient', 'start', 'ACTIVE'))
