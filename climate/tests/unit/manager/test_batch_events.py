"""Claimed events run several to a transaction (batch_events), against a
real SQLite database, without RPC."""

import datetime

from oslo_config import cfg
import pytest
import sqlalchemy as sa

from climate import dates
from climate.db import api as db_api
from climate.db import lease_json
from climate.db import models
from climate.manager.workers import batch_events
from climate.manager.workers import events
from climate.plugins.noop import plugin as noop
from climate import states
from climate.tests.unit.manager import test_events
from climate.tests.unit.manager.test_events import (
    FailingPlugin, Notifier, _actions, _create, _engine, _lease)

CONF = cfg.CONF
#: the engine's tests' database (SQLite, noauth)
db = test_events.db


class FailsFor(noop.NoopPlugin):
    """noop, but the start of the lease named ``bad`` fails."""

    def __init__(self, bad='bad'):
        super().__init__(owner='test')
        self.bad = bad

    def on_start(self, ctx, lease, reservation, event):
        if lease.name == self.bad:
            raise RuntimeError('no start for %s' % lease.name)
        super().on_start(ctx, lease, reservation, event)


@pytest.fixture
def commits():
    """How many transactions commit meanwhile."""
    seen = []

    def count(_conn):
        seen.append(1)

    sa.event.listen(db_api.get_engine(), 'commit', count)
    yield seen
    sa.event.remove(db_api.get_engine(), 'commit', count)


def _claim(ctx, owner='m1', token='t1', when=None, batch=50):
    return db_api.events_claim(ctx, owner, token, when or dates.utcnow(),
                               batch, datetime.timedelta(seconds=60),
                               {'start_lease': 0, 'before_end_lease': 1,
                                'end_lease': 2})


def _drain(engine):
    """Wait for what the batch handed to the engine's pool."""
    engine._pool.shutdown(wait=True)


def _start_of(ctx, lease_id):
    return [e for e in _lease(ctx, lease_id).events
            if e.event_type == 'start_lease'][0]


def _outdated(ctx):
    with db_api.reader(ctx) as session:
        return lease_json.outdated(session.connection())


def test_a_batch_of_sql_only_starts_commits_together(db, commits):
    plugin, notifier = noop.NoopPlugin(owner='m1'), Notifier()
    made = [_create(plugin, notifier, name='l%d' % i) for i in range(6)]
    engine = _engine(plugin, notifier)
    claims = _claim(db)
    assert len(claims) == 6
    del commits[:]
    batch_events.run(engine, claims, 't1')
    _drain(engine)
    assert len(commits) == 1
    for lease in made:
        row = _lease(db, lease['id'])
        assert row.status == states.ACTIVE
        assert row.reservations[0].status == states.RES_ACTIVE
        start = _start_of(db, lease['id'])
        assert (start.status, start.attempts, start.claimed_by,
                start.claim_token) == (states.DONE, 1, None, None)
        assert row.updated_at is not None
        assert len(_actions(db, lease['id'], 'on_start')) == 1
    # one notification per lease, after the commit, showing it ACTIVE
    assert sorted(notifier.sent[-6:]) == sorted(
        ('start', lease['id']) for lease in made)
    # the stored bodies were re-rendered with the batch's changes
    assert _outdated(db) == []


def test_one_failing_lease_falls_back_and_the_others_start(db):
    plugin, notifier = FailsFor(), Notifier()
    good = [_create(plugin, notifier, name='good%d' % i) for i in range(3)]
    bad = _create(plugin, notifier, name='bad')
    engine = _engine(plugin, notifier)
    batch_events.run(engine, _claim(db), 't1')
    _drain(engine)
    for lease in good:
        assert _lease(db, lease['id']).status == states.ACTIVE
        start = _start_of(db, lease['id'])
        # the batch's attempt was rolled back: counted once, alone
        assert (start.status, start.attempts) == (states.DONE, 1)
        assert len(_actions(db, lease['id'], 'on_start')) == 1
    row = _lease(db, bad['id'])
    start = _start_of(db, bad['id'])
    assert (start.status, start.attempts) == (states.UNDONE, 1)
    assert 'no start for bad' in start.last_error
    assert 'attempt 1 of 5 failed' in row.status_reason
    assert _actions(db, bad['id'], 'on_start') == []
    assert _outdated(db) == []


def test_a_claim_released_meanwhile_is_never_committed(db):
    plugin, notifier = noop.NoopPlugin(owner='m1'), Notifier()
    made = [_create(plugin, notifier, name='l%d' % i) for i in range(3)]
    engine = _engine(plugin, notifier)
    claims = _claim(db)
    released = claims[1]
    # this manager was declared dead: its claim on one event released
    # (climate.db.managers), another manager may run it now
    with db_api.writer(db) as session:
        session.execute(sa.update(models.Event).where(
            models.Event.id == released.event_id).values(claim_token=None))
    batch_events.run(engine, claims, 't1')
    _drain(engine)
    event = db_api.event_get(db, released.event_id)
    assert (event.status, event.attempts, event.claim_token) == (
        states.IN_PROGRESS, 0, None)
    assert _lease(db, released.lease_id).status == states.PENDING
    assert _actions(db, released.lease_id, 'on_start') == []
    for lease in made:
        if lease['id'] != released.lease_id:
            assert _lease(db, lease['id']).status == states.ACTIVE
    assert ('start', released.lease_id) not in notifier.sent


@pytest.mark.parametrize('end_first', [True, False])
def test_run_order_inside_a_lease_is_kept(db, end_first):
    """A lease's start and end claimed together (the end's claim taken
    over, say): the start runs in the batch, the end after its commit."""
    plugin, notifier = noop.NoopPlugin(owner='m1'), Notifier()
    lease = _create(plugin, notifier, length=1)
    other = _create(plugin, notifier, name='other')
    engine = _engine(plugin, notifier)
    claims = _claim(db)
    assert len(claims) == 2  # the starts
    end = [e for e in _lease(db, lease['id']).events
           if e.event_type == 'end_lease'][0]
    with db_api.writer(db) as session:
        # its notice out of the way: only the start comes before the end
        session.execute(sa.delete(models.Event).where(
            models.Event.lease_id == lease['id'],
            models.Event.event_type == 'before_end_lease'))
        session.execute(sa.update(models.Event).where(
            models.Event.id == end.id).values(
            status=states.IN_PROGRESS, claimed_by='m1', claim_token='t1',
            time=dates.utcnow()))
    end_claim = db_api.Claim(end.id, lease['id'])
    claims = [end_claim] + claims if end_first else claims + [end_claim]
    batch_events.run(engine, claims, 't1')
    _drain(engine)
    row = _lease(db, lease['id'])
    assert row.status == states.TERMINATED
    assert [a.action for a in db_api.noop_action_list(db, lease['id'])
            if a.action in ('on_start', 'on_end')] == ['on_start', 'on_end']
    done = {e.event_type: (e.status, e.attempts) for e in row.events}
    assert done['start_lease'] == done['end_lease'] == (states.DONE, 1)
    assert _lease(db, other['id']).status == states.ACTIVE
    assert [s for s in notifier.sent if s[1] == lease['id']][-2:] == [
        ('start', lease['id']), ('end', lease['id'])]


def test_leases_acting_in_a_cloud_run_alone(db, commits):
    plugin = FailingPlugin(failures=0, acts_in_cloud=True)
    notifier = Notifier()
    made = [_create(plugin, notifier, name='l%d' % i) for i in range(3)]
    engine = _engine(plugin, notifier)
    claims = _claim(db)
    del commits[:]
    batch_events.run(engine, claims, 't1')
    _drain(engine)
    for lease in made:
        assert _lease(db, lease['id']).status == states.ACTIVE
        assert len(_actions(db, lease['id'], 'on_start')) == 1
    # the batch's (which wrote nothing), then two per event: STARTING
    # committed before the cloud's calls
    assert len(commits) == 1 + 2 * len(made)


def test_run_once_batches_sql_only_leases_and_gives_back_the_rest(db):
    CONF.set_override('event_batch_size', 2, group='manager')
    CONF.set_override('event_workers', 1, group='manager')
    try:
        plugin, notifier = noop.NoopPlugin(owner='m1'), Notifier()
        made = [_create(plugin, notifier, name='l%d' % i) for i in range(3)]
        engine = _engine(plugin, notifier)
        # two slots (event_workers * 2): four events fit, three due
        assert engine.run_once(db) == 3
        _drain(engine)
    finally:
        CONF.clear_override('event_batch_size', group='manager')
        CONF.clear_override('event_workers', group='manager')
    for lease in made:
        assert _lease(db, lease['id']).status == states.ACTIVE


def test_run_once_gives_back_cloud_claims_beyond_its_slots(db):
    CONF.set_override('event_batch_size', 5, group='manager')
    CONF.set_override('event_workers', 1, group='manager')
    try:
        plugin = FailingPlugin(failures=0, acts_in_cloud=True)
        notifier = Notifier()
        made = [_create(plugin, notifier, name='l%d' % i) for i in range(4)]
        engine = _engine(plugin, notifier)
        # two slots: two events run alone, the two others given back
        assert engine.run_once(db) == 4
        _drain(engine)
    finally:
        CONF.clear_override('event_batch_size', group='manager')
        CONF.clear_override('event_workers', group='manager')
    statuses = sorted(_lease(db, lease['id']).status for lease in made)
    assert statuses == [states.ACTIVE] * 2 + [states.PENDING] * 2
    left = [_start_of(db, lease['id']) for lease in made
            if _lease(db, lease['id']).status == states.PENDING]
    assert [(e.status, e.claimed_by, e.attempts) for e in left] == [
        (states.UNDONE, None, 0)] * 2
    assert _outdated(db) == []
    # due again at once: the next claim (anyone's) takes them
    assert len(_claim(db, owner='m2', token='t2')) == 2


def test_chunks_are_as_few_and_even_as_can_be():
    chunks = events._chunks(list(range(26)), 25)
    assert [len(c) for c in chunks] == [13, 13]
    assert sum(chunks, []) == list(range(26))
    assert events._chunks([], 25) == []
    assert [len(c) for c in events._chunks(list(range(7)), 1)] == [1] * 7


def test_split_keeps_the_first_event_of_each_lease_by_run_order():
    claims = [db_api.Claim('e-end', 'a'), db_api.Claim('e-b', 'b'),
              db_api.Claim('e-start', 'a')]
    rank = {'e-start': 0, 'e-end': 2, 'e-b': 0}
    first, later = batch_events.split(claims, lambda c: rank[c.event_id])
    assert sorted(first) == sorted([db_api.Claim('e-start', 'a'),
                                    db_api.Claim('e-b', 'b')])
    assert later == [db_api.Claim('e-end', 'a')]
