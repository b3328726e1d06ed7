"""Managers' heartbeats and the takeover of a dead manager's claims
(climate.manager.workers.heartbeat, climate.db.managers), on SQLite; the
functional tests kill real managers on MariaDB and PostgreSQL."""

import datetime

from oslo_config import cfg
import pytest
import sqlalchemy as sa

from climate import context
from climate import dates
from climate.db import api as db_api
from climate.db import lease_json
from climate.db import managers as db_managers
from climate.db import models
from climate.manager.workers import events
from climate.manager.workers import heartbeat
from climate.plugins.noop import plugin as noop
from climate import states
from climate.tests import schema
from climate.tests.unit.manager import test_events as helpers

CONF = cfg.CONF
TIMEOUT = datetime.timedelta(seconds=3)
TTL = datetime.timedelta(seconds=60)


@pytest.fixture
def ctx(tmp_path):
    from climate import conf  # noqa: F401 - registers options
    CONF([], project='climate', default_config_files=[])
    schema.head_database(tmp_path / 'c.sqlite')
    CONF.set_override('auth_strategy', 'noauth')
    yield context.admin_context()
    CONF.clear_override('auth_strategy')
    for name in ('heartbeat_interval', 'heartbeat_timeout'):
        CONF.clear_override(name, group='manager')
    db_api.get_engine().dispose()


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def _rows(ctx):
    with db_api.reader(ctx) as session:
        return {row.name: row for row in session.execute(sa.select(
            models.Manager.__table__)).all()}


def _age(ctx, name, seconds):
    """Make ``name``'s last heartbeat ``seconds`` old."""
    with db_api.writer(ctx) as session:
        session.execute(sa.update(models.Manager).where(
            models.Manager.name == name).values(
            heartbeat_at=db_managers.database_time(ctx) -
            datetime.timedelta(seconds=seconds)))


def _event(ctx, event_id):
    with db_api.reader(ctx) as session:
        return session.get(models.Event, event_id)


def _leases(ctx, plugin, notifier, count):
    return [helpers._create(plugin, notifier, name='l%d' % i)
            for i in range(count)]


def test_beat_writes_then_stamps_the_row(ctx):
    now, registered = db_managers.beat(ctx, 'm1')
    assert not registered
    first = _rows(ctx)['m1']
    assert first.started_at == first.heartbeat_at == now
    later, registered = db_managers.beat(ctx, 'm1')
    assert registered
    row = _rows(ctx)['m1']
    assert row.heartbeat_at == later >= now
    assert row.started_at == first.started_at


def test_dead_managers_claims_are_released_and_its_row_deleted(ctx):
    plugin, notifier = noop.NoopPlugin(owner='m'), helpers.Notifier()
    leases = _leases(ctx, plugin, notifier, 4)
    for name in ('dead', 'alive'):
        db_managers.beat(ctx, name)
    now = dates.utcnow()
    dead = db_api.events_claim(ctx, 'dead', 'td', now, 3, TTL)
    alive = db_api.events_claim(ctx, 'alive', 'ta', now, 50, TTL)
    assert (len(dead), len(alive)) == (3, 1)
    # nobody is stale yet
    assert db_managers.release_dead(ctx, TIMEOUT, now) == {}
    _age(ctx, 'dead', 4)
    assert db_managers.release_dead(ctx, TIMEOUT, now) == {'dead': 3}
    assert set(_rows(ctx)) == {'alive'}
    for claim in dead:
        event = _event(ctx, claim.event_id)
        # still IN_PROGRESS (nothing a lease body shows changes), no
        # token, due now; claimed_by says who dropped it
        assert (event.status, event.claim_token, event.claimed_by,
                event.due_at) == (states.IN_PROGRESS, None, 'dead', now)
    for claim in alive:
        assert _event(ctx, claim.event_id).claim_token == 'ta'
    with db_api.get_engine().connect() as conn:
        assert lease_json.outdated(conn) == []
    # at once, not after the claim's TTL
    taken = db_api.events_claim(ctx, 'alive', 'ta2', now, 50, TTL)
    assert sorted(taken) == sorted(dead)
    engine = helpers._engine(plugin, notifier, owner='alive')
    for claim in taken:
        engine.run_event(claim.event_id, 'ta2', claim.lease_id)
    for claim in alive:
        engine.run_event(claim.event_id, 'ta', claim.lease_id)
    for lease in leases:
        assert len(helpers._actions(ctx, lease['id'], 'on_start')) == 1


def test_staleness_is_judged_on_the_given_database_time(ctx):
    db_managers.beat(ctx, 'm1')
    stamp = _rows(ctx)['m1'].heartbeat_at
    assert db_managers.release_dead(
        ctx, TIMEOUT, dates.utcnow(), stamp + TIMEOUT) == {}
    later = stamp + TIMEOUT + datetime.timedelta(microseconds=1)
    assert db_managers.release_dead(ctx, TIMEOUT, dates.utcnow(),
                                    later) == {'m1': 0}


def test_oldest_heartbeat_of_the_others(ctx):
    assert db_managers.oldest_heartbeat(ctx, 'm1')[1] is None
    db_managers.beat(ctx, 'm1')
    assert db_managers.oldest_heartbeat(ctx, 'm1')[1] is None
    db_managers.beat(ctx, 'm2')
    _age(ctx, 'm2', 2)
    db_managers.beat(ctx, 'm3')
    now, oldest = db_managers.oldest_heartbeat(ctx, 'm1')
    assert oldest == _rows(ctx)['m2'].heartbeat_at
    assert 1.5 < (now - oldest).total_seconds() < 10


def test_slow_owner_declared_dead_cannot_commit(ctx):
    """Its claim was released: whether or not another manager has taken
    the event yet, the slow owner's token no longer commits anything."""
    plugin, notifier = noop.NoopPlugin(owner='m'), helpers.Notifier()
    lease = helpers._create(plugin, notifier)
    db_managers.beat(ctx, 'slow')
    now = dates.utcnow()
    [claim] = db_api.events_claim(ctx, 'slow', 'ts', now, 50, TTL)
    _age(ctx, 'slow', 10)
    assert db_managers.release_dead(ctx, TIMEOUT, now) == {'slow': 1}
    slow = helpers._engine(plugin, notifier, owner='slow')
    slow.run_event(claim.event_id, 'ts', claim.lease_id)
    assert helpers._actions(ctx, lease['id'], 'on_start') == []
    assert _event(ctx, claim.event_id).status == states.IN_PROGRESS
    other = helpers._engine(plugin, notifier, owner='other')
    assert helpers._claim_and_run(other, ctx, now) == [claim]
    slow.run_event(claim.event_id, 'ts', claim.lease_id)
    assert len(helpers._actions(ctx, lease['id'], 'on_start')) == 1
    assert helpers._lease(ctx, lease['id']).status == states.ACTIVE
    # its next heartbeat tells it it was declared dead, and joins again
    now, registered = db_managers.beat(ctx, 'slow')
    assert not registered and 'slow' in _rows(ctx)


def test_slow_owner_between_its_two_transactions_cannot_commit(ctx):
    """A plugin acting in a cloud: the slow owner committed STARTING and
    its attempt, then was declared dead; another manager runs the event,
    the slow owner's second transaction finds the claim gone."""
    plugin = helpers.FailingPlugin(0, acts_in_cloud=True)
    notifier = helpers.Notifier()
    lease = helpers._create(plugin, notifier)
    db_managers.beat(ctx, 'slow')
    now = dates.utcnow()
    [claim] = db_api.events_claim(ctx, 'slow', 'ts', now, 50, TTL)
    slow = helpers._engine(plugin, notifier, owner='slow')
    assert slow._prepare(ctx, claim.event_id, 'ts', claim.lease_id) == (
        'start_lease', None)
    assert helpers._lease(ctx, lease['id']).status == states.STARTING
    _age(ctx, 'slow', 10)
    assert db_managers.release_dead(ctx, TIMEOUT, now) == {'slow': 1}
    other = helpers._engine(plugin, notifier, owner='other')
    assert helpers._claim_and_run(other, ctx, now) == [claim]
    with pytest.raises(events.ClaimLost):
        slow._execute(ctx, claim.event_id, 'ts')
    assert len(helpers._actions(ctx, lease['id'], 'on_start')) == 1
    event = _event(ctx, claim.event_id)
    assert (event.status, event.attempts) == (states.DONE, 2)


def test_clean_stop_releases_claims_and_removes_the_row(ctx):
    plugin, notifier = noop.NoopPlugin(owner='m'), helpers.Notifier()
    _leases(ctx, plugin, notifier, 2)
    beat = heartbeat.Heartbeat('m1')
    beat.start()
    try:
        assert 'm1' in _rows(ctx)
        claims = db_api.events_claim(ctx, 'm1', 't', dates.utcnow(), 50,
                                     TTL)
        assert len(claims) == 2
    finally:
        assert beat.stop() == 2
    assert _rows(ctx) == {}
    assert all(_event(ctx, c.event_id).claim_token is None for c in claims)


def test_first_back_after_an_outage_does_not_declare_the_others_dead(ctx):
    CONF.set_override('heartbeat_timeout', 3, group='manager')
    clock = Clock()
    woken = []
    beat = heartbeat.Heartbeat('m1', on_takeover=lambda: woken.append(1),
                               clock=clock)
    beat.started = True  # as start() does, without its thread
    beat.beat()
    db_managers.beat(ctx, 'm2')
    # the database was away for a while: every stamp is old, m1 is first
    # back
    _age(ctx, 'm1', 30)
    _age(ctx, 'm2', 30)
    clock.now += 30
    assert not beat.alive()
    assert beat.run_once() == {}
    assert beat.alive()
    clock.now += 1
    db_managers.beat(ctx, 'm2')   # m2 is back too
    assert beat.run_once() == {}
    clock.now += 2.5
    assert beat.run_once() == {}  # m2 alive: nobody declared dead
    assert set(_rows(ctx)) == {'m1', 'm2'} and not woken
    # m2 stops stamping: declared dead once its stamp is old enough
    _age(ctx, 'm2', 4)
    clock.now += 1
    assert beat.run_once() == {'m2': 0}
    assert set(_rows(ctx)) == {'m1'}
    assert not woken  # nothing was released, nobody to wake


def test_takeover_wakes_the_engines(ctx):
    plugin, notifier = noop.NoopPlugin(owner='m'), helpers.Notifier()
    helpers._create(plugin, notifier)
    clock = Clock()
    woken = []
    beat = heartbeat.Heartbeat('m1', on_takeover=lambda: woken.append(1),
                               clock=clock)
    beat.beat()
    db_managers.beat(ctx, 'm2')
    db_api.events_claim(ctx, 'm2', 't2', dates.utcnow(), 50, TTL)
    _age(ctx, 'm2', 10)
    # m1 sweeps once its own stamps went through for a whole timeout
    for _ in range(int(CONF.manager.heartbeat_timeout) - 1):
        clock.now += 1
        assert beat.run_once() == {}
    clock.now += 1
    assert beat.run_once() == {'m2': 1}
    assert woken == [1]


def test_alive_follows_the_last_stamp(ctx):
    CONF.set_override('heartbeat_timeout', 3, group='manager')
    clock = Clock()
    beat = heartbeat.Heartbeat('m1', clock=clock)
    # not run as a service: the engine is not held back
    assert beat.alive()
    beat.start()
    try:
        assert beat.alive()
        clock.now += 2.9
        assert beat.alive()
        clock.now += 0.2
        assert not beat.alive()
        beat.beat()
        assert beat.alive()
    finally:
        beat.stop()


def test_engine_runs_its_heartbeat(ctx, monkeypatch):
    CONF.set_override('heartbeat_interval', 0.1, group='manager')
    plugin, notifier = noop.NoopPlugin(owner='m'), helpers.Notifier()
    lease = helpers._create(plugin, notifier)
    engine = events.EventEngine('m1', helpers.FakeRegistry(plugin), notifier)
    engine.start()
    try:
        assert 'm1' in _rows(ctx)
        deadline = datetime.datetime.now() + datetime.timedelta(seconds=20)
        while (helpers._lease(ctx, lease['id']).status != states.ACTIVE and
               datetime.datetime.now() < deadline):
            engine._stopping.wait(0.05)
        assert helpers._lease(ctx, lease['id']).status == states.ACTIVE
    finally:
        engine.stop()
    assert _rows(ctx) == {}


def test_next_sweep_is_timed_for_the_oldest_stamp(ctx):
    CONF.set_override('heartbeat_timeout', 3, group='manager')
    clock = Clock()
    beat = heartbeat.Heartbeat('m1', clock=clock)
    for _ in range(4):
        beat.run_once()
        clock.now += 1
    assert beat._next_sweep is None  # nobody else
    db_managers.beat(ctx, 'm2')
    _age(ctx, 'm2', 2)
    assert beat.run_once() == {}
    # m2's stamp is too old in 1 s: a sweep alone then, not at the next
    # stamp of m1
    assert 0.9 < beat._next_sweep - clock.now < 1.1
    _age(ctx, 'm2', 3.1)
    assert beat.sweep() == {'m2': 0}
    assert beat._next_sweep is None
