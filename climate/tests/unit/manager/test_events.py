"""The event engine against a real SQLite database, without RPC."""

import datetime
import inspect
import threading

from oslo_config import cfg
from oslo_db import exception as db_exc
import pytest

from climate import context
from climate import dates
from climate.db import api as db_api
from climate.db import models
from climate.manager import leases
from climate.manager.workers import events
from climate.plugins.noop import plugin as noop
from climate import states
from climate.tests import schema

CONF = cfg.CONF


class FakeRegistry:
    def __init__(self, plugin):
        self.plugin = plugin

    def get(self, resource_type):
        return self.plugin


class FailingPlugin(noop.NoopPlugin):
    """Fails its first ``failures`` starts, then behaves like noop."""

    def __init__(self, failures, acts_in_cloud=False):
        super().__init__(owner='test')
        self.failures = failures
        self.calls = 0
        self.acts_in_cloud = acts_in_cloud

    def on_start(self, ctx, lease, reservation, event):
        self.calls += 1
        if self.calls <= self.failures:
            raise RuntimeError('cloud said no (%d)' % self.calls)
        super().on_start(ctx, lease, reservation, event)


class Notifier:
    def __init__(self):
        self.sent = []

    def send(self, ctx, action, lease, event=None):
        self.sent.append((action, lease['id']))

    def send_many(self, ctx, notices):
        for action, lease, event in notices:
            self.send(ctx, action, lease, event)


@pytest.fixture
def db(tmp_path):
    from climate import conf  # noqa: F401 - registers options
    CONF([], project='climate', default_config_files=[])
    schema.head_database(tmp_path / 'c.sqlite')
    CONF.set_override('event_retry_backoff', 1, group='manager')
    # no Keystone here: leases get no trust (climate.manager.trusts)
    CONF.set_override('auth_strategy', 'noauth')
    yield context.admin_context()
    CONF.clear_override('auth_strategy')
    CONF.clear_override('event_retry_backoff', group='manager')
    CONF.clear_override('event_max_attempts', group='manager')
    db_api.get_engine().dispose()


def _user_ctx():
    return context.RequestContext(project_id='p1', user_id='u1',
                                  roles=['member'])


def _create(plugin, notifier, start_in=0, length=7200, name="l"):
    service = leases.LeaseService(FakeRegistry(plugin), notifier,
                                  wake=lambda: None)
    now = dates.utcnow()
    start = 'now' if not start_in else (
        now + datetime.timedelta(seconds=start_in)).isoformat()
    return service.create(_user_ctx(), {
        'name': name, 'start_date': start,
        'end_date': (now + datetime.timedelta(
            seconds=start_in + length)).isoformat(),
        'reservations': [{'resource_type': 'noop'}]})


def _engine(plugin, notifier, owner='m1'):
    return events.EventEngine(owner, FakeRegistry(plugin), notifier)


def _claim_and_run(engine, ctx, when=None):
    """Claim what is due at ``when`` and run it synchronously."""
    token = 'token-%s' % engine.owner
    ids = db_api.events_claim(ctx, engine.owner, token,
                              when or dates.utcnow(), 50,
                              datetime.timedelta(seconds=60))
    for claimed in ids:
        engine.run_event(claimed.event_id, token, claimed.lease_id)
    return ids


def _lease(ctx, lease_id):
    return db_api.lease_get(ctx, lease_id)


def _actions(ctx, lease_id, action):
    return [a for a in db_api.noop_action_list(ctx, lease_id)
            if a.action == action]


def test_start_runs_once_and_activates(db):
    plugin, notifier = noop.NoopPlugin(owner='m1'), Notifier()
    lease = _create(plugin, notifier)
    engine = _engine(plugin, notifier)
    assert len(_claim_and_run(engine, db)) == 1
    row = _lease(db, lease['id'])
    assert row.status == states.ACTIVE
    assert row.reservations[0].status == states.RES_ACTIVE
    start = [e for e in row.events if e.event_type == 'start_lease'][0]
    assert (start.status, start.attempts, start.claimed_by) == (
        states.DONE, 1, None)
    assert len(_actions(db, lease['id'], 'on_start')) == 1
    assert notifier.sent[-1] == ('start', lease['id'])
    # nothing else is due now: a second pass claims nothing
    assert _claim_and_run(engine, db) == []


def test_two_engines_never_share_a_claim(db):
    plugin, notifier = noop.NoopPlugin(owner='m'), Notifier()
    for i in range(5):
        _create(plugin, notifier, name='l%d' % i)
    now = dates.utcnow()
    first = db_api.events_claim(db, 'a', 'ta', now, 3,
                                datetime.timedelta(seconds=60))
    second = db_api.events_claim(db, 'b', 'tb', now, 50,
                                 datetime.timedelta(seconds=60))
    assert len(first) == 3 and len(second) == 2
    assert not set(first) & set(second)


def test_event_waiting_for_an_earlier_one_is_not_claimed(db):
    # a 30-minute lease: its before_end (default offset longer than the
    # lease) is due with its start, but must not be claimed before it
    plugin, notifier = noop.NoopPlugin(owner='m'), Notifier()
    lease = _create(plugin, notifier, length=1800)
    row = _lease(db, lease['id'])
    due = {e.event_type: e.due_at for e in row.events}
    assert due['before_end_lease'] == due['start_lease']
    order = events._RUN_ORDER
    ttl = datetime.timedelta(seconds=60)
    now = dates.utcnow()
    assert db_api.next_due(db, order) == due['start_lease']
    first = db_api.events_claim(db, 'a', 'ta', now, 50, ttl, order)
    assert [e.event_type for e in _lease(db, lease['id']).events
            if e.id in {c.event_id for c in first}] == ['start_lease']
    # while the start is held, nothing else of this lease is due
    assert db_api.events_claim(db, 'b', 'tb', now, 50, ttl, order) == []
    assert db_api.next_due(db, order) == now + ttl
    _engine(plugin, notifier, owner='a').run_event(first[0].event_id, 'ta')
    second = db_api.events_claim(db, 'b', 'tb', now, 50, ttl, order)
    assert [e.event_type for e in _lease(db, lease['id']).events
            if e.id in {c.event_id for c in second}] == ['before_end_lease']


def test_prolonging_after_the_before_end_notice_schedules_a_new_one(db):
    plugin, notifier = noop.NoopPlugin(owner='m'), Notifier()
    lease = _create(plugin, notifier, length=1800)
    engine = _engine(plugin, notifier)
    _claim_and_run(engine, db)  # start
    _claim_and_run(engine, db)  # before_end, due with the start
    assert len(_actions(db, lease['id'], 'before_end')) == 1
    service = leases.LeaseService(FakeRegistry(plugin), notifier,
                                  wake=lambda: None)
    updated = service.update(_user_ctx(), lease['id'],
                             {'prolong_for': '2h'})
    notices = [e for e in updated['events']
               if e['event_type'] == 'before_end_lease']
    assert [e['status'] for e in notices] == ['DONE', 'UNDONE']
    assert notices[1]['time'] > notices[0]['time']
    assert updated['end_date'] > lease['end_date']
    # and again: only the pending notice moves
    again = service.update(_user_ctx(), lease['id'], {'prolong_for': '1h'})
    notices = [e for e in again['events']
               if e['event_type'] == 'before_end_lease']
    assert [e['status'] for e in notices] == ['DONE', 'UNDONE']


def test_expired_claim_is_taken_over_and_runs_once(db):
    plugin, notifier = noop.NoopPlugin(owner='m'), Notifier()
    lease = _create(plugin, notifier)
    now = dates.utcnow()
    # a manager claims and dies without running anything
    dead = db_api.events_claim(db, 'dead', 'tdead', now, 50,
                               datetime.timedelta(seconds=10))
    assert len(dead) == 1
    survivor = _engine(plugin, notifier, owner='alive')
    assert _claim_and_run(survivor, db, now) == []  # claim still valid
    later = now + datetime.timedelta(seconds=11)
    assert _claim_and_run(survivor, db, later) == dead
    assert _lease(db, lease['id']).status == states.ACTIVE
    # the dead manager's token no longer works: it cannot run it again
    survivor.run_event(dead[0].event_id, 'tdead', dead[0].lease_id)
    assert len(_actions(db, lease['id'], 'on_start')) == 1


class StatusSeeingPlugin(noop.NoopPlugin):
    """Records the lease status other connections see during on_start."""

    def __init__(self, acts_in_cloud):
        super().__init__(owner='test')
        self.acts_in_cloud = acts_in_cloud
        self.seen = []

    def on_start(self, ctx, lease, reservation, event):
        def look():
            other = context.admin_context()
            self.seen.append(db_api.lease_get(other, lease.id).status)
        thread = threading.Thread(target=look)
        thread.start()
        thread.join()
        super().on_start(ctx, lease, reservation, event)


@pytest.mark.parametrize('acts_in_cloud,seen', [
    (True, states.STARTING),   # committed before the cloud calls
    (False, states.PENDING),   # one transaction: nothing in between
])
def test_starting_is_committed_only_for_cloud_actions(db, acts_in_cloud,
                                                      seen):
    plugin, notifier = StatusSeeingPlugin(acts_in_cloud), Notifier()
    lease = _create(plugin, notifier)
    _claim_and_run(_engine(plugin, notifier), db)
    assert plugin.seen == [seen]
    assert _lease(db, lease['id']).status == states.ACTIVE
    assert len(_actions(db, lease['id'], 'on_start')) == 1


@pytest.mark.parametrize('acts_in_cloud', [True, False])
def test_failure_retries_with_backoff_then_succeeds(db, acts_in_cloud):
    plugin = FailingPlugin(failures=1, acts_in_cloud=acts_in_cloud)
    notifier = Notifier()
    lease = _create(plugin, notifier)
    engine = _engine(plugin, notifier)
    _claim_and_run(engine, db)
    row = _lease(db, lease['id'])
    start = [e for e in row.events if e.event_type == 'start_lease'][0]
    assert start.status == states.UNDONE and start.attempts == 1
    assert 'cloud said no (1)' in start.last_error
    assert row.status == states.STARTING
    assert 'attempt 1 of 5 failed' in row.status_reason
    assert start.due_at > dates.utcnow()  # backoff
    assert _claim_and_run(engine, db) == []  # not yet due
    _claim_and_run(engine, db, start.due_at)
    row = _lease(db, lease['id'])
    assert row.status == states.ACTIVE and row.status_reason is None
    assert len(_actions(db, lease['id'], 'on_start')) == 1


@pytest.mark.parametrize('acts_in_cloud', [True, False])
def test_failure_after_max_attempts_is_error_with_reason(db, acts_in_cloud):
    CONF.set_override('event_max_attempts', 2, group='manager')
    plugin = FailingPlugin(failures=10, acts_in_cloud=acts_in_cloud)
    notifier = Notifier()
    lease = _create(plugin, notifier)
    engine = _engine(plugin, notifier)
    _claim_and_run(engine, db)
    later = dates.utcnow() + datetime.timedelta(seconds=5)
    _claim_and_run(engine, db, later)
    row = _lease(db, lease['id'])
    start = [e for e in row.events if e.event_type == 'start_lease'][0]
    assert start.status == states.EVENT_ERROR and start.attempts == 2
    assert row.status == states.ERROR
    assert 'start_lease failed after 2 attempts' in row.status_reason
    assert 'cloud said no (2)' in row.status_reason
    assert _actions(db, lease['id'], 'on_start') == []


def test_end_waits_for_start_then_terminates(db):
    plugin, notifier = noop.NoopPlugin(owner='m'), Notifier()
    lease = _create(plugin, notifier, start_in=60, length=60)
    engine = _engine(plugin, notifier)
    end_time = dates.utcnow() + datetime.timedelta(seconds=121)
    # pretend the start is stuck in progress on another manager
    with db_api.writer(db) as session:
        session.query(models.Event).filter_by(
            lease_id=lease['id'], event_type='start_lease').update(
            {'status': states.IN_PROGRESS, 'claimed_by': 'other',
             'claim_token': 'x', 'due_at': end_time + datetime.timedelta(
                 seconds=60)})
    ids = db_api.events_claim(db, 'm', 't', end_time, 50,
                              datetime.timedelta(seconds=60))
    assert len(ids) == 2  # before_end and end
    for claimed in ids:  # without the lease id: the engine looks it up
        engine.run_event(claimed.event_id, 't')
    row = _lease(db, lease['id'])
    assert row.status == states.PENDING
    end = [e for e in row.events if e.event_type == 'end_lease'][0]
    assert end.status == states.UNDONE and end.attempts == 0
    assert _actions(db, lease['id'], 'on_end') == []


def test_rescheduled_event_is_released(db):
    plugin, notifier = noop.NoopPlugin(owner='m'), Notifier()
    lease = _create(plugin, notifier)
    ids = db_api.events_claim(db, 'm', 't', dates.utcnow(), 50,
                              datetime.timedelta(seconds=60))
    later = dates.utcnow() + datetime.timedelta(hours=1)
    with db_api.writer(db) as session:
        session.query(models.Event).filter_by(id=ids[0].event_id).update(
            {'time': later})
    _engine(plugin, notifier).run_event(ids[0].event_id, 't')
    event = db_api.event_get(db, ids[0].event_id)
    assert (event.status, event.due_at, event.claimed_by) == (
        states.UNDONE, later, None)
    assert _lease(db, lease['id']).status == states.PENDING


def test_backoff_doubles_up_to_ceiling():
    assert [events.backoff(n, 2, 10) for n in (1, 2, 3, 4, 5)] == [
        2, 4, 8, 10, 10]


@pytest.mark.parametrize('victim', ['_prepare', '_execute', '_failed'])
def test_a_transaction_that_loses_a_deadlock_is_retried(db, monkeypatch,
                                                        victim):
    """MariaDB may pick any of the engine's transactions as a deadlock's
    victim (a claim re-rendering the bodies of its leases waits for a lease
    the engine holds): the transaction runs again, the attempt and its
    real failure are recorded once."""
    plugin = FailingPlugin(failures=1, acts_in_cloud=True)
    notifier = Notifier()
    lease = _create(plugin, notifier)
    engine = _engine(plugin, notifier)
    real_lease_get = db_api.lease_get
    lost = []

    def lease_get(ctx, lease_id, for_update=False):
        # the victim's first lock of the lease loses
        if for_update and not lost and _inside(victim):
            lost.append(victim)
            raise db_exc.DBDeadlock()
        return real_lease_get(ctx, lease_id, for_update=for_update)

    monkeypatch.setattr(db_api, 'lease_get', lease_get)
    _claim_and_run(engine, db)
    row = _lease(db, lease['id'])
    start = [e for e in row.events if e.event_type == 'start_lease'][0]
    assert (start.status, start.attempts) == (states.UNDONE, 1)
    assert 'cloud said no (1)' in start.last_error
    assert 'attempt 1 of 5 failed (RuntimeError' in row.status_reason
    assert lost == [victim]
    assert plugin.calls == 1


def _inside(method):
    """Whether ``EventEngine.<method>`` is on the stack."""
    return any(frame.function == method and
               frame.filename == events.__file__
               for frame in inspect.stack(0))


def test_a_claim_lost_to_other_managers_is_a_warning_tried_again(
        db, monkeypatch, caplog):
    engine = _engine(noop.NoopPlugin(owner='m'), Notifier())
    held = []
    monkeypatch.setattr(engine, 'hold', held.append)
    lost = db_exc.DBDeadlock(Exception('(1213, Deadlock found)'))
    with caplog.at_level('WARNING'):
        assert engine.failed(lost) is True
    assert len(held) == 1 and 0.05 <= held[0] <= 0.5
    records = [r for r in caplog.records
               if r.name == 'climate.manager.workers.events']
    assert [r.levelname for r in records] == ['WARNING']
    assert 'Event claim lost to other managers' in records[0].getMessage()
    assert records[0].exc_info is None
    # anything else is a failed pass, logged with its traceback
    caplog.clear()
    try:
        raise RuntimeError('broken')
    except RuntimeError as exc:
        with caplog.at_level('WARNING'):
            assert engine.failed(exc) is False
    assert [r.levelname for r in caplog.records
            if r.name == 'climate.manager.workers.events'] == ['ERROR']
