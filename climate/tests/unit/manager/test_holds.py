"""Temporary holds (microversion 1.14, ``climate.lease.holds``): the
rules, and a hold's life through the in-process API on SQLite: held,
confirmed or expired once, its start held back while it is held."""

import datetime
import time

from oslo_db import exception as db_exc
import pytest

from climate import context
from climate import dates
from climate.db import api as db_api
from climate.db import lease_json
from climate.db import models
from climate import exceptions
from climate.lease import holds
from climate.manager.workers import events
from climate.manager.workers import holds as hold_worker
from climate import states
from climate.tests import fixtures

V = '1.14'
NOW = datetime.datetime(2030, 1, 1, 12, 0, 0)


# -- the rules ---------------------------------------------------------------

@pytest.mark.parametrize('value', [0, -1, 3601, '60', 1.5, True, None, [60]])
def test_hold_for_is_whole_seconds_within_the_operators_bound(value):
    with pytest.raises(exceptions.InvalidInput) as err:
        holds.parse({'hold_for': value}, 3600)
    assert 'hold_for must be a whole number of seconds from 1 to 3600' in \
        str(err.value)


def test_parse_takes_the_field_out_and_leaves_others_alone():
    body = {'name': 'x', 'hold_for': 60}
    assert holds.parse(body, 3600) == ({'name': 'x'}, 60)
    assert body == {'name': 'x', 'hold_for': 60}
    assert holds.parse({'name': 'x'}, 3600) == ({'name': 'x'}, None)


def test_expiry_is_refused_for_types_that_start_at_once_or_past_the_end():
    end = NOW + datetime.timedelta(minutes=10)
    assert holds.expiry(60, None, end, NOW) == NOW + datetime.timedelta(
        seconds=60)
    assert holds.expiry(60, 'scheduled', end, NOW)
    for lease_type in ('immediate', 'with_retries', 'best_effort'):
        with pytest.raises(exceptions.InvalidInput):
            holds.expiry(60, lease_type, end, NOW)
    with pytest.raises(exceptions.InvalidInput) as err:
        holds.expiry(600, None, end, NOW)
    assert 'would outlast the lease, which ends at 2030-01-01T12:10' in \
        str(err.value)


def test_only_a_live_hold_is_confirmed():
    expires = NOW + datetime.timedelta(seconds=1)
    holds.check_confirmable('l', states.HELD, expires, NOW)
    with pytest.raises(exceptions.HoldNotConfirmable) as err:
        holds.check_confirmable('l', states.HELD, expires, expires)
    assert 'its hold expired at 2030-01-01 12:00:01 UTC' in str(err.value)
    with pytest.raises(exceptions.HoldNotConfirmable) as err:
        holds.check_confirmable('l', states.PENDING, expires, NOW)
    assert 'it is PENDING, not HELD' in str(err.value)


# -- through the service -------------------------------------------------------

@pytest.fixture
def env():
    # the background worker would sleep for minutes: the tests expire by
    # hand, at a "now" of their own
    with fixtures.ClimateEnvironment(overrides=[
            ('hold_poll_interval', 'leases', 300)]) as environment:
        yield environment


def hold(env, name, hold_for=600, start=None, end=3 * 3600, **extra):
    start = start or fixtures.iso(3600)
    body = {'name': name, 'start_date': start, 'end_date': fixtures.iso(end),
            'hold_for': hold_for,
            'reservations': [{'resource_type': 'noop'}]}
    body.update(extra)
    resp = env.request('POST', '/v1/leases', body=body, version=V)
    assert resp.status_int == 201, resp.text
    return resp.json['lease']


def get(env, lease_id):
    return env.request('GET', '/v1/leases/' + lease_id,
                       version=V).json['lease']


def confirm(env, lease_id, expect=200):
    resp = env.request('POST', '/v1/leases/%s/confirm' % lease_id,
                       version=V)
    assert resp.status_int == expect, resp.text
    return resp.json.get('lease') or resp.json


def expiry_of(lease):
    return dates.parse_output(lease['hold_expires_at'])


def test_a_hold_expires_once_whoever_tries(env):
    ctx = context.admin_context()
    lease = hold(env, 'once')
    leases = env.manager.leases
    past = expiry_of(lease)
    before = past - datetime.timedelta(seconds=1)
    assert leases.expire_hold(ctx, lease['id'], before) is None
    assert get(env, lease['id'])['status'] == states.HELD
    view = leases.expire_hold(ctx, lease['id'], past)
    assert view['status'] == states.EXPIRED
    # a second manager, or the same one again: nothing more
    assert leases.expire_hold(ctx, lease['id'], past) is None
    shown = get(env, lease['id'])
    assert shown['status'] == states.EXPIRED and shown['events'] == []
    assert [r['status'] for r in shown['reservations']] == ['deleted']
    confirm(env, lease['id'], expect=409)


def test_a_confirmed_hold_never_expires(env):
    ctx = context.admin_context()
    lease = hold(env, 'kept')
    confirmed = confirm(env, lease['id'])
    assert confirmed['status'] == states.PENDING
    later = expiry_of(lease) + datetime.timedelta(hours=1)
    assert env.manager.leases.expire_hold(ctx, lease['id'], later) is None
    assert get(env, lease['id'])['status'] == states.PENDING


def test_the_worker_expires_what_is_due_soonest_first(env):
    ctx = context.admin_context()
    first = hold(env, 'first', hold_for=60)
    second = hold(env, 'second', hold_for=120)
    third = hold(env, 'third', hold_for=180)
    confirm(env, second['id'])
    worker = hold_worker.HoldWorker(env.manager.leases)
    at = expiry_of(second)
    assert hold_worker.due(ctx, at) == [first['id']]
    assert worker.run_pass(ctx, at) == [first['id']]
    assert worker.run_pass(ctx, at) == []
    assert hold_worker.next_expiry(ctx) == expiry_of(third)
    assert worker.run_pass(ctx, expiry_of(third)) == [third['id']]
    assert hold_worker.next_expiry(ctx) is None
    statuses = {row.name: row.status for row in env.rows(models.Lease)}
    assert statuses == {'first': 'EXPIRED', 'second': 'PENDING',
                        'third': 'EXPIRED'}


def test_a_start_due_while_held_waits_for_the_confirm(env):
    lease = hold(env, 'starts-held', start='now')
    start = next(ev for ev in lease['events']
                 if ev['event_type'] == 'start_lease')
    ctx = context.admin_context()
    # the engine claims the start and puts it back until the expiry
    deadline = time.monotonic() + 15
    while True:
        with db_api.reader(ctx) as session:
            due_at = session.query(models.Event.due_at).filter(
                models.Event.id == start['id']).scalar()
        if due_at > expiry_of(lease):
            break
        assert time.monotonic() < deadline, 'the engine never looked'
        time.sleep(0.05)
    assert get(env, lease['id'])['status'] == states.HELD
    assert ('on_start', lease['id']) not in env.noop_actions(lease['id'])
    confirm(env, lease['id'])
    env.wait_for_status(lease['id'], states.ACTIVE, version=V)
    assert ('on_start', lease['id']) in env.noop_actions(lease['id'])


def test_a_listing_shows_holds_as_they_are(env):
    ctx = context.admin_context()
    lease = hold(env, 'listed')
    env.manager.leases.expire_hold(ctx, lease['id'], expiry_of(lease))
    listed = env.request('GET', '/v1/leases', version=V).json['leases']
    assert listed == [get(env, lease['id'])]
    older = env.request('GET', '/v1/leases', version='1.13').json['leases']
    assert [item['status'] for item in older] == ['TERMINATED']
    assert not env.outdated_bodies()


def test_an_expiry_drops_a_start_an_engine_has_claimed(env):
    ctx = context.admin_context()
    lease = hold(env, 'claimed')
    start = next(ev for ev in lease['events']
                 if ev['event_type'] == 'start_lease')
    with db_api.writer(ctx) as session:
        session.query(models.Event).filter(
            models.Event.id == start['id']).update(
                {'status': states.IN_PROGRESS, 'claimed_by': 'other',
                 'claim_token': 'token'})
        lease_json.changed(session, {lease['id']})
    view = env.manager.leases.expire_hold(ctx, lease['id'],
                                          expiry_of(lease))
    assert view['status'] == states.EXPIRED and view['events'] == []
    # the engine that claimed it finds its claim gone
    with pytest.raises(events.ClaimLost):
        env.manager.engine._prepare(ctx, start['id'], 'token', lease['id'])


def test_a_hold_that_fails_to_expire_does_not_keep_the_others(env,
                                                              monkeypatch):
    ctx = context.admin_context()
    stuck = hold(env, 'stuck', hold_for=60)
    later = hold(env, 'later', hold_for=120)
    leases = env.manager.leases
    expire = leases.expire_hold

    def failing(ctx, lease_id, now):
        if lease_id == stuck['id']:
            raise RuntimeError('the plugin could not release it')
        return expire(ctx, lease_id, now)

    monkeypatch.setattr(leases, 'expire_hold', failing)
    worker = hold_worker.HoldWorker(leases)
    assert worker.run_pass(ctx, expiry_of(later)) == [later['id']]
    assert get(env, stuck['id'])['status'] == states.HELD
    # tried again at the next pass, once it can be
    monkeypatch.setattr(leases, 'expire_hold', expire)
    assert worker.run_pass(ctx, expiry_of(later)) == [stuck['id']]


def test_a_lost_database_fails_the_pass(env, monkeypatch):
    ctx = context.admin_context()
    lease = hold(env, 'any', hold_for=60)
    leases = env.manager.leases

    def lost(ctx, lease_id, now):
        raise db_exc.DBConnectionError('gone')

    monkeypatch.setattr(leases, 'expire_hold', lost)
    with pytest.raises(db_exc.DBConnectionError):
        hold_worker.HoldWorker(leases).run_pass(ctx, expiry_of(lease))
