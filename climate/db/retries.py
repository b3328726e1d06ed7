"""The waiting ``with_retries`` leases: the queue's SQL, and the lock
that lets one manager at a time make a pass over it
(``climate.manager.retries``)."""

import collections
import contextlib
import json
import threading

import sqlalchemy as sa

from climate.db import api as db_api
from climate.db import models
from climate import states

LOCK_NAME = 'lease_retries'

#: A waiting lease as a pass sees it; ``shape``: what it asks for, its
#: reservations' types and parameters (``climate.scheduling.retry_queue``).
Waiting = collections.namedtuple(
    'Waiting', 'id created_at next_attempt_at shape')

_LEASE = models.Lease.__table__
_RESERVATION = models.Reservation.__table__
# SQLite has no row lock and one writer at a time: one process's managers
# (the embedded default) share this lock instead
_LOCAL = collections.defaultdict(threading.Lock)


def any_waiting(ctx):
    """Whether some lease is WAITING (through the status index)."""
    with db_api.reader(ctx) as session:
        return session.execute(
            sa.select(_LEASE.c.id).where(
                _LEASE.c.status == states.WAITING).limit(1)).first() \
            is not None


def waiting(ctx, limit):
    """The oldest ``limit`` WAITING leases, in arrival order (two
    statements)."""
    with db_api.reader(ctx) as session:
        rows = session.execute(
            sa.select(_LEASE.c.id, _LEASE.c.created_at,
                      _LEASE.c.next_attempt_at)
            .where(_LEASE.c.status == states.WAITING)
            .order_by(_LEASE.c.arrival, _LEASE.c.id).limit(limit)).all()
        asks = collections.defaultdict(list)
        if rows:
            for lease_id, rtype, params in session.execute(
                    sa.select(_RESERVATION.c.lease_id,
                              _RESERVATION.c.resource_type,
                              _RESERVATION.c.params)
                    .where(_RESERVATION.c.lease_id.in_(
                        [row.id for row in rows]))
                    .order_by(_RESERVATION.c.created_at,
                              _RESERVATION.c.id)):
                asks[lease_id].append(
                    (rtype, json.dumps(params, sort_keys=True)))
        return [Waiting(row.id, row.created_at, row.next_attempt_at,
                        tuple(asks[row.id])) for row in rows]


def next_due(ctx):
    """When the earliest counted attempt of a waiting lease is due (None:
    no lease waits)."""
    with db_api.reader(ctx) as session:
        return session.execute(
            sa.select(sa.func.min(_LEASE.c.next_attempt_at)).where(
                _LEASE.c.status == states.WAITING)).scalar()


@contextlib.contextmanager
def work_lock(name=LOCK_NAME, wait=True):
    """Hold the ``work_locks`` row ``name`` while the block runs, on a
    connection of its own: the block's transactions commit one by one
    under it, and a manager that dies releases it with its connection.
    Yields whether it is held: with ``wait`` False, a lock another manager
    holds is not waited for (where the database can skip locked rows) and
    the block runs without it, to do nothing."""
    engine = db_api.get_engine()
    if engine.dialect.name == 'sqlite':
        lock = _LOCAL[name]
        if not lock.acquire(blocking=wait):
            yield False
            return
        try:
            yield True
        finally:
            lock.release()
        return
    table = models.WorkLock.__table__
    skip = not wait and db_api.supports_skip_locked()
    with engine.connect() as conn:
        with conn.begin():
            found = conn.execute(sa.select(table.c.name).where(
                table.c.name == name).with_for_update(
                skip_locked=skip)).first()
            if found is None:
                if skip and conn.execute(sa.select(table.c.name).where(
                        table.c.name == name)).first() is not None:
                    yield False  # held by another manager
                    return
                # a database stamped without its row: made once, then
                # locked (a concurrent first insert is a duplicate key)
                conn.execute(table.insert().values(name=name))
            yield True
