"""Project quotas' SQL: a project's own limits (``project_quotas``) and
the lock its quota checks take turns on."""

import functools

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects import sqlite

from climate import dates
from climate.db import api as db_api
from climate.db.ledger import windows
from climate.db import models
from climate.db import usage as db_usage

Quota = models.ProjectQuota
Book = models.LedgerBooking
Record = models.UsageRecord

#: The columns of a project's own limits.
FIELDS = ('max_lease_duration', 'max_extension', 'max_concurrent', 'budget',
          'budget_period')


def _values(row):
    return None if row is None else {f: getattr(row, f) for f in FIELDS}


def get(session, project_id, lock=False, create=False):
    """The project's own limits ``{field: value or None}``, or None when
    it has no row.  ``lock``: take the row for the rest of the
    transaction by writing it (its ``generation``: a row lock alone is
    local to its node on a multi-writer Galera cluster, a write conflicts
    on every node; SQLite's writers take turns anyway); ``create``: make
    it first if need be (a row of nulls)."""
    if create:
        _ensure_row(session, project_id)
    conn = session.connection()
    if lock and not conn.execute(_bump_query(),
                                 {'project': project_id}).rowcount:
        return None  # no row to read
    return _values(conn.execute(_get_query(),
                                {'project_id': project_id}).first())


@functools.lru_cache(maxsize=None)
def _get_query():
    return sa.select(*(getattr(Quota, f) for f in FIELDS)).where(
        Quota.project_id == sa.bindparam('project_id'))


@functools.lru_cache(maxsize=None)
def _bump_query():
    return sa.update(Quota).where(
        Quota.project_id == sa.bindparam('project')).values(
        # not an edit of the limits: their updated_at stays
        generation=Quota.generation + 1, updated_at=Quota.updated_at)


def _ensure_row(session, project_id):
    """A row of nulls for the project, unless it has one: concurrent
    inserters of the same project wait for the first, then find it."""
    values = {'project_id': project_id, 'created_at': models.now()}
    name = db_api.dialect_name()
    if name == 'postgresql':
        statement = postgresql.insert(Quota).values(
            **values).on_conflict_do_nothing()
    elif name == 'sqlite':
        statement = sqlite.insert(Quota).values(
            **values).on_conflict_do_nothing()
    else:
        statement = mysql.insert(Quota).values(**values).prefix_with(
            'IGNORE')
    session.execute(statement)


def put(session, project_id, values):
    """Set some of the project's own limits (the others keep theirs)."""
    _ensure_row(session, project_id)
    session.execute(sa.update(Quota).where(
        Quota.project_id == project_id).values(
        updated_at=models.now(), **values))


def delete(session, project_id):
    """Forget the project's own limits (back to the defaults); True if
    it had any row."""
    return session.execute(sa.delete(Quota).where(
        Quota.project_id == project_id)).rowcount > 0


def every(session):
    """``{project_id: own limits}`` of every project with a row."""
    return {row.project_id: _values(row) for row in session.execute(
        sa.select(Quota).order_by(Quota.project_id)).scalars()}


_UNREAD = object()
_param = windows.time_param


def _after(session, start, level):
    if level is _UNREAD:
        level = windows.longest_level(session)
    return windows.start_bound(start, level)


# Statements built once per database kind and shape, run with parameters:
# a quota check runs them on every create of a limited project, and
# building them costs more than running them.

@functools.lru_cache(maxsize=None)
def _holdings_query(dialect, with_records):
    query = sa.select(
        Book.lease_id, Book.resource_class, Book.start_date, Book.end_date,
        Book.amount).where(
        Book.project_id == sa.bindparam('project_id'),
        Book.resource_class.in_(sa.bindparam('classes', expanding=True)),
        windows.overlapping_at())
    if with_records:
        query = query.union_all(sa.select(
            Record.lease_id, Record.resource_class, Record.start_date,
            Record.end_date, Record.amount).where(
            Record.project_id == sa.bindparam('project_id'),
            Record.resource_class.in_(sa.bindparam('classes',
                                                   expanding=True)),
            Record.end_date > _param('start'),
            Record.start_date < _param('end')))
    return query


@functools.lru_cache(maxsize=None)
def _held_query(dialect, with_records, with_share):
    parts = []
    for table, where in (
            (Book, (windows.overlapping_at(),)),
            (Record, (Record.end_date > _param('start'),
                      Record.start_date < _param('end')))):
        if table is Record and not with_records:
            continue
        seconds = db_usage.held_seconds(
            table, db_usage.datetime_param('start'),
            db_usage.datetime_param('end'))
        # the lease's share only when asked (a refusal says what fits):
        # it costs every row a second sum
        own = sa.func.sum(sa.case(
            (table.lease_id == sa.bindparam('lease_id'), seconds),
            else_=0)) if with_share else sa.literal(0)
        parts.append(sa.select(
            table.resource_class.label('resource_class'),
            sa.func.sum(seconds).label('held'), own.label('own')
        ).where(table.project_id == sa.bindparam('project_id'),
                table.resource_class.in_(sa.bindparam('classes',
                                                      expanding=True)),
                *where).group_by(table.resource_class))
    return parts[0] if len(parts) == 1 else sa.union_all(*parts)


def holdings(session, project_id, classes, start, end, now=None,
             level=_UNREAD):
    """The project's bookings (and records, for a window reaching into
    the past) of ``classes`` overlapping ``[start, end)``: ``(lease_id,
    resource_class, start_date, end_date, amount)`` rows, read from one
    range of the ``(project_id, resource_class, start_date, ...)`` index
    (bounded below by the longest booking: ``level``, from
    ``windows.longest_level``, when the caller has read it).  ``now``: the
    current time (records end by then)."""
    # records end in the past: none overlaps a window to come
    query = _holdings_query(db_api.dialect_name(),
                            start < (now or dates.utcnow()))
    # Core on the session's connection: the ORM's execute costs more
    # than the statement
    return session.connection().execute(query, {
        'project_id': project_id, 'classes': sorted(classes),
        'after': _after(session, start, level), 'start': start,
        'end': end}).all()


def held_within(session, project_id, classes, start, end, lease_id=None,
                now=None, level=_UNREAD):
    """Resource-seconds the project's bookings and records of
    ``classes`` hold within ``[start, end)``, and those of ``lease_id``
    among them (0 without ``lease_id``): ``{class: (all, the lease's)}``,
    summed in SQL over the covering indexes (one statement, a row per
    class and table)."""
    query = _held_query(db_api.dialect_name(),
                        start < (now or dates.utcnow()), lease_id is not None)
    out = {}
    for cls, held, own in session.connection().execute(query, {
            'project_id': project_id, 'classes': sorted(classes),
            'after': _after(session, start, level), 'start': start,
            'end': end, 'lease_id': lease_id}):
        before = out.get(cls, (0, 0))
        out[cls] = (before[0] + int(held or 0), before[1] + int(own or 0))
    return out
