"""A manager frozen between the two transactions of an event (a long
pause: a stalled VM, a swap storm, SIGSTOP) is declared dead, the others
run its events, then it wakes and carries on where it stopped.  Its
claim check (the event still IN_PROGRESS under its claim's token, read
under the event's row lock: ``EventEngine._locked``) is what stops it
doing the cloud's half of those events a second time; without the check
it does.

The reservations are noop ones made to act "in a cloud" by the managers'
``sitecustomize`` (:data:`CLOUD`): each event runs in two transactions,
the managers pause between them, and each start or end is logged in
``cloud_actions`` by a connection of its own, committed at once, as a
cloud's side effect is: the event's rollback does not take it back.
"""

import datetime
import time

import pytest

from climate.tests.functional import concurrency
from climate.tests.functional import procs

LEASES = 60
#: Seconds each manager waits between an event's two transactions (a
#: cloud call's wait): the freeze lands there.
PAUSE = 1.0

CLOUD = """\
# test only: noop reservations act in a cloud (see test_frozen_manager)
import time
import sqlalchemy as sa
from oslo_config import cfg
from climate.manager.workers import events
from climate.plugins.noop import plugin as noop
noop.NoopPlugin.acts_in_cloud = True
_engines = []
def _cloud(plugin, action, event):
    if not _engines:
        _engines.append(sa.create_engine(cfg.CONF.database.connection,
                                         poolclass=sa.pool.NullPool))
    with _engines[0].begin() as conn:
        conn.execute(sa.text(
            'INSERT INTO cloud_actions (event_id, manager, action) '
            'VALUES (:e, :m, :a)'),
            {'e': event.id, 'm': plugin.owner, 'a': action})
_on_start, _on_end = noop.NoopPlugin.on_start, noop.NoopPlugin.on_end
def on_start(self, ctx, lease, reservation, event):
    _cloud(self, 'on_start', event)
    _on_start(self, ctx, lease, reservation, event)
def on_end(self, ctx, lease, reservation, event=None):
    if event is not None:
        _cloud(self, 'on_end', event)
    _on_end(self, ctx, lease, reservation, event)
noop.NoopPlugin.on_start, noop.NoopPlugin.on_end = on_start, on_end
_execute = events.EventEngine._execute
def _execute_later(self, ctx, event_id, token):
    time.sleep(%r)
    return _execute(self, ctx, event_id, token)
events.EventEngine._execute = _execute_later
""" % PAUSE

UNCHECKED = """\
# test only: the claim check removed: the engine runs an event it once
# claimed, whoever holds the claim now and whatever its status
from climate.db import api as db_api
def _unchecked(self, ctx, event_id, token, lease_id=None):
    event = db_api.event_get(ctx, event_id)
    lease = db_api.lease_get(ctx, event.lease_id, for_update=True)
    return lease, db_api.event_get(ctx, event_id, for_update=True)
events.EventEngine._locked = _unchecked
"""

#: The victim's starts done with their first transaction (the lease
#: STARTING, the attempt counted) and not their second.
PREPARED = ("SELECT e.id FROM events e JOIN leases l ON l.id = e.lease_id "
            "WHERE e.status = 'IN_PROGRESS' AND e.claimed_by = :v AND "
            "e.event_type = 'start_lease' AND l.status = 'STARTING'")


def cloud_runs(db, event_ids):
    """{event id: [manager, ...]} of each cloud action of ``event_ids``."""
    runs = {}
    for row in db.query('SELECT event_id, manager FROM cloud_actions WHERE '
                        'event_id IN (%s)' % procs.sql_list(event_ids)):
        runs.setdefault(row.event_id, []).append(row.manager)
    return runs


@pytest.mark.parametrize('db_engine', [procs.MARIADB])
@pytest.mark.parametrize('checked', [True, False],
                         ids=['claim-checked', 'check-removed'])
def test_a_frozen_manager_woken_does_not_redo_what_others_did(
        climate, tmp_path, checked):
    db = climate.database
    with db.engine.begin() as conn:
        conn.exec_driver_sql(
            'CREATE TABLE cloud_actions (event_id VARCHAR(36) NOT NULL, '
            'manager VARCHAR(255) NOT NULL, action VARCHAR(16) NOT NULL)')
    patches = [CLOUD] + ([] if checked else [UNCHECKED])
    cluster = climate.start(managers=3, manager_opts={
        'event_claim_ttl': 60},
        pythonpath=concurrency.pythonpath(tmp_path, True, *patches))
    victim = cluster.managers[0]
    survivors = {proc.manager_name for proc in cluster.managers[1:]}
    procs.wait_heartbeats(db, cluster.managers)

    due = (procs.utcnow() + datetime.timedelta(seconds=12)).replace(
        microsecond=0)
    end = due + datetime.timedelta(seconds=3)
    leases = procs.create_many(
        cluster.url, [procs.lease_body('frozen-%03d' % i, due, end)
                      for i in range(LEASES)], threads=8, timeout=120)
    assert procs.utcnow() < due, 'the leases came due before all existed'

    deadline = time.monotonic() + 60 + (due - procs.utcnow()).total_seconds()
    # frozen while starts of its stand prepared and not executed
    held, _connections, stopped_at, _attempts = procs.freeze_holding(
        db, victim, deadline, PREPARED, v=victim.manager_name)
    try:
        # declared dead (heartbeat timeout: 3 s), its claims released
        procs.wait_for(
            lambda: victim.manager_name not in procs.registered_managers(db),
            30, message='the survivors to declare the frozen manager dead')
        # (a start frozen inside its second transaction keeps its row
        # locks: the release skips it and the victim finishes it itself)
        # (released: the token cleared, the name kept until another
        # manager claims it)
        taken = {row.id for row in db.query(
            "SELECT id FROM events WHERE id IN (%s) AND (claim_token IS "
            "NULL OR claimed_by <> :v OR status = 'DONE')" %
            procs.sql_list(held), v=victim.manager_name)}
        assert taken, 'every start the victim held stayed locked by it'
        try:
            procs.wait_done(db, list(taken), stopped_at, 30)
        except AssertionError:
            # one the survivors took may wait for its lease's row, which
            # the victim froze holding (between locking the lease and the
            # event, the event's row free for the release): it runs once
            # the victim, woken, finds its claim lost and lets go
            pass
    finally:
        frozen_for = time.monotonic() - stopped_at
        victim.resume()
    # woken: each of its threads goes on from where it stood
    procs.wait_all_leases(db, 'TERMINATED', LEASES, timeout=120)
    starts = cloud_runs(db, taken)
    doubled = {event_id: managers for event_id, managers in starts.items()
               if len(managers) > 1}
    print('\nclaim check %s: %s frozen %.1fs between the transactions of '
          '%d starts, %d taken over by the survivors; %d of those done '
          'twice in the cloud' % (
              'on' if checked else 'removed', victim.manager_name,
              frozen_for, len(held), len(taken), len(doubled)))
    if not checked:
        assert doubled, ('no start done twice without the claim check: '
                         'the test is blind')
        return
    assert not doubled, doubled
    assert all(starts.get(event_id) and starts[event_id][0] in survivors
               for event_id in taken), starts
    lease_ids = {lease['id'] for lease in leases}
    procs.check_exactly_once(db, lease_ids)
    # every start and end of every lease done once in the cloud
    every = [row.id for row in db.query(
        "SELECT id FROM events WHERE event_type IN ('start_lease', "
        "'end_lease') AND lease_id IN (%s)" % procs.sql_list(lease_ids))]
    runs = cloud_runs(db, every)
    assert sorted(len(runs.get(e, ())) for e in every) == [1] * len(every)
    # the victim, woken, joined again and is working
    procs.wait_for(
        lambda: victim.manager_name in procs.registered_managers(db), 10,
        message='the woken manager to join again')
    assert all(proc.alive() for proc in cluster.procs)
