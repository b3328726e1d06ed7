"""Billing's SQL: the operator's rate table, and what leases consumed
within a period (the ledger's bookings before now, and the usage records
of ended leases), summed by lease and class."""

import sqlalchemy as sa

from climate.db.ledger import windows
from climate.db import models
from climate.db import usage as db_usage

Book = models.LedgerBooking
Res = models.Reservation
Lease = models.Lease
Record = models.UsageRecord
Rates = models.BillingRates


def get_rates(session):
    """The rate table as stored, or None when none was set."""
    row = session.get(Rates, 1)
    return None if row is None else row.rates


def put_rates(session, rates):
    """Replace the rate table."""
    row = session.get(Rates, 1)
    if row is None:
        session.add(Rates(id=1, rates=rates, updated_at=models.now()))
    else:
        row.rates = rates
        row.updated_at = models.now()


def consumed(session, start, end, project_id=None):
    """What each lease (of ``project_id``, or of every project) consumed
    of each class within ``[start, end)`` -- ``end`` no later than now:
    ``(project_id, lease_id, lease_name, lease_created_at,
    lease_start_date, resource_type, resource_class, seconds)`` rows."""
    seconds = db_usage.held_seconds(Book, start, end)
    live = sa.select(
        Lease.project_id, Lease.id, Lease.name, Lease.created_at,
        Lease.start_date, Res.resource_type, Book.resource_class,
        sa.func.sum(seconds)
    ).select_from(Book).join(Res, Res.id == Book.reservation_id).join(
        Lease, Lease.id == Res.lease_id)
    if project_id is None:
        # every project: the ledger's window, level by level
        live = live.where(windows.window(start, end))
    else:
        live = live.where(
            Book.project_id == project_id,
            Book.start_date > windows.started_after(session, start),
            Book.start_date < end, Book.end_date > start)
    live = live.group_by(Lease.project_id, Lease.id, Lease.name,
                         Lease.created_at, Lease.start_date,
                         Res.resource_type, Book.resource_class)
    ended = sa.select(
        Record.project_id, Record.lease_id, Record.lease_name,
        Record.lease_created_at, Record.lease_start_date,
        Record.resource_type, Record.resource_class,
        sa.func.sum(db_usage.held_seconds(Record, start, end))
    ).where(Record.end_date > start, Record.start_date < end)
    if project_id is not None:
        ended = ended.where(Record.project_id == project_id)
    ended = ended.group_by(Record.project_id, Record.lease_id,
                           Record.lease_name, Record.lease_created_at,
                           Record.lease_start_date, Record.resource_type,
                           Record.resource_class)
    return session.execute(sa.union_all(live, ended)).all()
