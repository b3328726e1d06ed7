"""Usage's SQL: what projects hold and held of the ledger over a period.

Two sources, never overlapping:

* the ledger's bookings (``ledger_bookings``): every reservation not
  ended yet, its past part (consumed) and its future part (committed);
* ``usage_records``: the bookings of leases that ended or were deleted,
  copied by :func:`record_consumed` in the transaction that releases
  them, cut at that moment (a lease deleted while active consumed only
  up to its deletion).

Resource-time is summed in SQL: ``amount * seconds`` of each booking
clipped to the period and split at *now*, grouped by lease, resource type
and class, so the rows read are one per lease and class however many
bookings a lease holds, and no lease is loaded.
"""

import datetime

import sqlalchemy as sa
from sqlalchemy.ext import compiler
from sqlalchemy.sql import expression

from climate.db import api as db_api
from climate.db.ledger import windows
from climate.db import models

Book = models.LedgerBooking
Res = models.Reservation
Lease = models.Lease
Record = models.UsageRecord


class _Seconds(expression.FunctionElement):
    """Whole seconds from the first datetime to the second."""

    type = sa.BigInteger()
    name = 'climate_seconds'
    inherit_cache = True


@compiler.compiles(_Seconds)
def _seconds_default(element, comp, **kw):
    first, second = list(element.clauses)
    return 'TIMESTAMPDIFF(SECOND, %s, %s)' % (comp.process(first, **kw),
                                             comp.process(second, **kw))


@compiler.compiles(_Seconds, 'postgresql')
def _seconds_postgresql(element, comp, **kw):
    first, second = list(element.clauses)
    return 'CAST(EXTRACT(EPOCH FROM (%s - %s)) AS BIGINT)' % (
        comp.process(second, **kw), comp.process(first, **kw))


@compiler.compiles(_Seconds, 'sqlite')
def _seconds_sqlite(element, comp, **kw):
    first, second = list(element.clauses)
    return ('CAST(ROUND((julianday(%s) - julianday(%s)) * 86400) '
            'AS INTEGER)' % (comp.process(second, **kw),
                             comp.process(first, **kw)))


class _Later(expression.FunctionElement):
    """The later of two datetimes."""

    type = sa.DateTime()
    name = 'climate_later'
    inherit_cache = True


class _Earlier(expression.FunctionElement):
    """The earlier of two datetimes."""

    type = sa.DateTime()
    name = 'climate_earlier'
    inherit_cache = True


def _two(function):
    def compile_it(element, comp, **kw):
        first, second = list(element.clauses)
        return '%s(%s, %s)' % (function, comp.process(first, **kw),
                               comp.process(second, **kw))
    return compile_it


compiler.compiles(_Later)(_two('GREATEST'))
compiler.compiles(_Earlier)(_two('LEAST'))
# SQLite's two-argument MAX and MIN are scalar; its datetimes are text
# of one fixed format, which sorts as time does
compiler.compiles(_Later, 'sqlite')(_two('MAX'))
compiler.compiles(_Earlier, 'sqlite')(_two('MIN'))


def _typed(value):
    """A datetime parameter typed as one by the database, where a text
    parameter compared with a DATETIME column would be converted at every
    row (SQLite's datetimes are text: CAST would make them numbers)."""
    if db_api.dialect_name() == 'sqlite':
        return value
    return sa.cast(value, sa.DateTime())


def _at(when):
    return _typed(sa.literal(when, sa.DateTime()))


def _split(table, start, end, now):
    """Columns: ``amount * seconds`` of each row of ``table`` (bookings or
    records) within ``[start, end)``, before ``now`` and from ``now`` on,
    and the amount held at ``now``."""
    start, end, now_at = _at(start), _at(end), _at(now)
    first = _Later(table.start_date, start)
    last = _Earlier(table.end_date, end)
    past = sa.case((first >= now_at, 0),
                   else_=table.amount * _Seconds(first, _Earlier(last,
                                                                 now_at)))
    future = sa.case((last <= now_at, 0),
                     else_=table.amount * _Seconds(_Later(first, now_at),
                                                   last))
    current = sa.case(
        (sa.and_(table.start_date <= now_at, table.end_date > now_at),
         table.amount), else_=0)
    return (sa.func.sum(past).label('past'),
            sa.func.sum(future).label('future'),
            sa.func.sum(current).label('current'))


def datetime_param(name):
    """A bound datetime parameter for :func:`held_seconds` in a statement
    built once and run many times."""
    return _typed(sa.bindparam(name, type_=sa.DateTime()))


def held_seconds(table, start, end):
    """Column: ``amount * seconds`` of a row of ``table`` (bookings or
    records) within ``[start, end)`` (datetimes, or
    :func:`datetime_param`); rows must overlap it."""
    if not isinstance(start, expression.ColumnElement):
        start, end = _at(start), _at(end)
    return table.amount * _Seconds(_Later(table.start_date, start),
                                   _Earlier(table.end_date, end))


def record_consumed(session, lease_id, now):
    """Copy what the lease's bookings held up to ``now`` into
    ``usage_records`` (one INSERT ... SELECT), before its reservations
    release them for good: at its end, or at its deletion.  Bookings
    starting at ``now`` or later held nothing and are not copied."""
    cut = _Earlier(Book.end_date, _at(now))
    rows = sa.select(
        Lease.project_id, Lease.id, Lease.name, Lease.created_at,
        Lease.start_date, Book.reservation_id, Res.resource_type,
        Book.resource_class, Book.amount, Book.start_date, cut
    ).select_from(Lease).join(Res, Res.lease_id == Lease.id).join(
        Book, Book.reservation_id == Res.id
    ).where(Lease.id == lease_id, Book.start_date < _at(now))
    session.execute(sa.insert(Record).from_select(
        ['project_id', 'lease_id', 'lease_name', 'lease_created_at',
         'lease_start_date', 'reservation_id', 'resource_type',
         'resource_class', 'amount', 'start_date', 'end_date'], rows))


def project_rows(session, project_id, start, end, now, by_lease=False):
    """What ``project_id`` held over ``[start, end)``, one row per
    resource type and class (and lease, ``by_lease``): ``lease_id,
    lease_name, status, resource_type, resource_class, past, future,
    current`` (amount times seconds before and from ``now``; amount held
    at ``now``).  The three lease columns are None without ``by_lease``,
    the status also for a deleted lease."""
    none = tuple(sa.null().label(name) for name in (
        'lease_id', 'lease_name', 'status'))
    if by_lease:
        live_lease = (Lease.id.label('lease_id'),
                      Lease.name.label('lease_name'), Lease.status)
        ended_lease = (Record.lease_id, Record.lease_name, Lease.status)
    else:
        live_lease = ended_lease = ()
    live = sa.select(
        *(live_lease or none), Res.resource_type,
        Book.resource_class, *_split(Book, start, end, now)
    ).select_from(Lease).join(Res, Res.lease_id == Lease.id).join(
        Book, Book.reservation_id == Res.id
    ).where(
        Lease.project_id == project_id,
        # a booking lies within its lease's window
        Lease.start_date < end, Lease.end_date > start,
        Book.start_date < end, Book.end_date > start,
    ).group_by(*live_lease, Res.resource_type, Book.resource_class)
    ended = sa.select(
        *(ended_lease or none), Record.resource_type,
        Record.resource_class, *_split(Record, start, end, now)
    ).select_from(Record).where(
        Record.project_id == project_id,
        Record.end_date > start, Record.start_date < end,
    ).group_by(*ended_lease, Record.resource_type, Record.resource_class)
    if by_lease:
        # the status of the leases still there
        ended = ended.outerjoin(Lease, Lease.id == Record.lease_id)
    return (session.execute(live).all() + session.execute(ended).all())


def held_over(session, start, end, resource_class=None):
    """Every project's holdings over ``[start, end)``, as ``(class, start,
    end, amount)`` rows, bookings of the same class and window summed:
    the live ledger's (read through its ``span_level`` ranges) and the
    records of ended leases."""
    live = sa.select(Book.resource_class, Book.start_date, Book.end_date,
                     sa.func.sum(Book.amount)).where(
        windows.window(start, end))
    ended = sa.select(Record.resource_class, Record.start_date,
                      Record.end_date, sa.func.sum(Record.amount)).where(
        Record.end_date > start, Record.start_date < end)
    if resource_class is not None:
        live = live.where(Book.resource_class == resource_class)
        ended = ended.where(Record.resource_class == resource_class)
    rows = []
    for query, table in ((live, Book), (ended, Record)):
        rows.extend(session.execute(query.group_by(
            table.resource_class, table.start_date, table.end_date)).all())
    return rows


def reservable(session, resource_class=None):
    """Usable capacity of every provider of the ledger, summed by class:
    ``{class: amount}`` (one row per distinct inventory)."""
    Inv = models.LedgerInventory
    query = sa.select(Inv.resource_class, Inv.total, Inv.reserved,
                      Inv.allocation_ratio, sa.func.count()).group_by(
        Inv.resource_class, Inv.total, Inv.reserved, Inv.allocation_ratio)
    if resource_class is not None:
        query = query.where(Inv.resource_class == resource_class)
    return session.execute(query).all()


#: Bounds wide enough for any booking (MariaDB's DATETIME starts at 1000).
_EVER = (datetime.datetime(1000, 1, 1), datetime.datetime(9999, 12, 31))


def lease_rows(session, lease_id, now):
    """What one lease holds and held: ``resource_type, resource_class,
    past, future, current`` rows (amount-seconds before and from ``now``)
    from its bookings and its records (those of a deleted lease
    remain)."""
    return leases_rows(session, (lease_id,), now).get(lease_id, [])


def leases_rows(session, lease_ids, now):
    """:func:`lease_rows` of each lease of ``lease_ids`` in one statement
    (the notifications of a batch of events): ``{lease id: rows}``, a
    lease holding nothing left out."""
    if not lease_ids:
        return {}
    ids = sorted(set(lease_ids))
    live = sa.select(
        Res.lease_id, Res.resource_type, Book.resource_class,
        *_split(Book, *_EVER, now)
    ).select_from(Res).join(Book, Book.reservation_id == Res.id).where(
        Res.lease_id.in_(ids)).group_by(
        Res.lease_id, Res.resource_type, Book.resource_class)
    ended = sa.select(
        Record.lease_id, Record.resource_type, Record.resource_class,
        *_split(Record, *_EVER, now)
    ).where(Record.lease_id.in_(ids)).group_by(
        Record.lease_id, Record.resource_type, Record.resource_class)
    found = {}
    for row in session.connection().execute(sa.union_all(live, ended)):
        found.setdefault(row[0], []).append(tuple(row[1:]))
    return found
