"""The managers' heartbeats, and the release of a dead manager's claims.

Each running manager has a row in ``managers`` that it stamps every
``[manager] heartbeat_interval`` seconds
(``climate.manager.workers.heartbeat``).
A manager whose stamp is older than ``heartbeat_timeout`` is declared
dead by the first live manager that sees it: in one transaction, that
manager clears the claim token of each event the dead one holds, makes it
due now and deletes the dead manager's row.  The event engines then claim
those events at once (an IN_PROGRESS event whose ``due_at`` has passed is
an expired claim, ``db.api.events_claim``), instead of waiting for the
whole claim TTL.

Liveness is judged on **the database's clock** alone: stamps are the
database's time and so is the "now" they are compared with.  Managers run
on several machines; were each to stamp and judge with its own clock, a
manager whose clock runs a few seconds behind would look dead to the
others all the time, and one ahead would outlive its death.  (Due times of
events stay on the managers' clocks, as before: they are the users'
dates.  SQLite has no server: there the clock of the one machine its file
lives on is used.)

Why exactly-once survives a manager declared dead while it is only slow
(a long GC pause, a database hiccup): releasing a claim clears its token,
and an engine commits an event only in a transaction that holds the
event's row lock and has checked that the token is still its own
(``climate.manager.workers.events``).  So a stale owner either still holds the
lock (its transaction is running: the release skips that event, ``SKIP
LOCKED``, and the owner's commit wins) or it will find another token, or
none, and give the event up.  A released event keeps ``claimed_by`` (who
dropped it) until it is claimed again; its status stays IN_PROGRESS, so
the leases' stored bodies (``climate.db.lease_json``) do not change and
the release never locks a lease.  A stale owner notices it was declared
dead when its next stamp finds no row; it writes a new one and goes on.
"""

import os
import socket

import sqlalchemy as sa
from oslo_utils import timeutils

from climate.db import api as db_api
from climate.db import models
from climate import states

_MANAGERS = models.Manager.__table__
_EVENTS = models.Event.__table__


def clock(connection):
    """The database's time now, naive UTC, to the microsecond."""
    dialect = connection.dialect.name
    if dialect == 'postgresql':
        # clock_timestamp(), not now(): the time of this statement, not of
        # the transaction's start
        return connection.execute(sa.text(
            "SELECT CAST(clock_timestamp() AT TIME ZONE 'UTC' AS "
            "timestamp)")).scalar()
    if dialect == 'mysql':
        return connection.execute(sa.text(
            'SELECT UTC_TIMESTAMP(6)')).scalar()
    return timeutils.utcnow().replace(tzinfo=None)


def database_time(ctx):
    """The database's clock now (naive UTC)."""
    with db_api.reader(ctx) as session:
        return clock(session.connection())


@db_api.retry_on_deadlock
def beat(ctx, name):
    """Stamp ``name``'s row with the database's time.

    Returns ``(database time, registered)``: ``registered`` is False when
    the row was not there (never written, or deleted by a manager that
    declared this one dead); it is written anew then.
    """
    with db_api.writer(ctx) as session:
        conn = session.connection()
        now = clock(conn)
        if conn.execute(sa.update(_MANAGERS).where(
                _MANAGERS.c.name == name).values(
                heartbeat_at=now)).rowcount:
            return now, True
    # The INSERT in a transaction of its own: after an UPDATE that found no
    # row, InnoDB holds a gap lock where the row would go, and two
    # managers starting together, each holding such a lock and inserting
    # into the same gap, deadlocked.
    with db_api.writer(ctx) as session:
        conn = session.connection()
        now = clock(conn)
        conn.execute(sa.insert(_MANAGERS).values(
            name=name, host=socket.gethostname(), pid=os.getpid(),
            started_at=now, heartbeat_at=now))
        return now, False


def _release(conn, names, due, skip_locked):
    """Clear the claims of the managers ``names``; returns how many."""
    held = sa.and_(_EVENTS.c.status == states.IN_PROGRESS,
                   _EVENTS.c.claimed_by.in_(names),
                   _EVENTS.c.claim_token.isnot(None))
    if skip_locked:
        # an event whose row an owner holds is being run or committed by
        # it right now: left alone, the owner's commit decides
        ids = conn.execute(sa.select(_EVENTS.c.id).where(held).with_for_update(
            skip_locked=True)).scalars().all()
        if not ids:
            return 0
        held = _EVENTS.c.id.in_(ids)
    # updated_at kept: nothing a lease's body shows changes (status stays
    # IN_PROGRESS), so the bodies need no new rendering
    return conn.execute(sa.update(_EVENTS).where(held).values(
        claim_token=None, due_at=due,
        updated_at=_EVENTS.c.updated_at)).rowcount


@db_api.retry_on_deadlock
def release_dead(ctx, timeout, due, now=None):
    """Declare dead the managers whose last stamp is over ``timeout``
    seconds older than ``now`` (the database's time; read if None):
    release their claims, making the events due at ``due``, and delete
    their rows.

    Safe with any number of managers sweeping at once: rows are taken
    with ``FOR UPDATE SKIP LOCKED`` where the database has it (one
    sweeper gets each dead manager; a manager stamping its row is skipped,
    it is alive), or one writer at a time (SQLite).

    Returns ``{dead manager name: claims released}``.
    """
    with db_api.writer(ctx) as session:
        conn = session.connection()
        if now is None:
            now = clock(conn)
        cutoff = now - timeout
        skip_locked = db_api.supports_skip_locked()
        query = sa.select(_MANAGERS.c.name).where(
            _MANAGERS.c.heartbeat_at < cutoff).order_by(_MANAGERS.c.name)
        if skip_locked:
            query = query.with_for_update(skip_locked=True)
        else:
            query = query.with_for_update()
        names = conn.execute(query).scalars().all()
        if not names:
            return {}
        released = {}
        for name in names:
            released[name] = _release(conn, [name], due, skip_locked)
        conn.execute(sa.delete(_MANAGERS).where(_MANAGERS.c.name.in_(names)))
        return released


def oldest_heartbeat(ctx, exclude):
    """``(database time now, oldest stamp of the managers but
    ``exclude``)``; the stamp is None when there is no other manager.  A
    read: the sweep's write transaction is needed only when some stamp is
    too old, and this says when the next one will be."""
    with db_api.reader(ctx) as session:
        conn = session.connection()
        now = clock(conn)
        oldest = conn.execute(sa.select(sa.func.min(
            _MANAGERS.c.heartbeat_at)).where(
            _MANAGERS.c.name != exclude)).scalar()
        return now, oldest


@db_api.retry_on_deadlock
def unregister(ctx, name, due):
    """A manager stopping cleanly: release the claims it still holds
    (due at ``due``) and delete its row; returns the claims released."""
    with db_api.writer(ctx) as session:
        conn = session.connection()
        released = _release(conn, [name], due, db_api.supports_skip_locked())
        conn.execute(sa.delete(_MANAGERS).where(_MANAGERS.c.name == name))
        return released
