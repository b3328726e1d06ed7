"""The waiting ``with_retries`` leases: the queue's SQL, and the lock
that lets one manager at a time make a pass over it
(``climate.manager.workers.retries``)."""

import collections
import json

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
