"""Leases rendered as the API's JSON by the database itself, and stored
with them, for listings.

A page of 100 leases is about 500 rows: each lease with its reservations
and three events.  Parsing them in the driver, building Python objects,
turning those into dicts and the dicts into JSON again was most of the
manager's time on a page.  MariaDB, PostgreSQL and SQLite all build JSON
in C, so they render each lease's body as one JSON text: the manager
joins the texts of a page and the API passes the page through without
decoding it.

The body is the one :mod:`climate.lease.views` builds from rows (for a
single lease, the answers to create and update, notifications).  The
tests in ``climate/tests/unit/db/test_lease_json.py`` (SQLite) and
``climate/tests/functional/test_lease_json.py`` (MariaDB, PostgreSQL)
hold the two to the same output, field by field.

Each engine gets a small *kit* of SQL expressions (objects, ordered
arrays, dates and timestamps in Blazar's two formats, booleans, a
reservation's params merged with its fields);
the body is written once, in terms of the kit.

Rendering a page on each request still cost more than everything else
in a listing (about 50 microseconds a lease on MariaDB, most of it the
reservations' and events' arrays), so each lease *stores* its body
(``leases.body``) and a page reads 100 stored texts through the keyset
index.  Every
transaction that changes a lease, a reservation or an event re-renders
the bodies of the leases it touched, in one UPDATE just before it commits
(:func:`changed`; ORM changes are noted by themselves, Core statements
call it), so a stored body is never older than the committed rows: the
UPDATE takes the leases' row locks, so of two transactions changing one
lease the later one renders the earlier one's changes too (on PostgreSQL
only once it holds the locks, see :func:`refresh`).  A
lease created by ``db.api.lease_insert`` comes with its body from
``climate.lease.views`` instead, which saves the create that UPDATE.  A
lease whose body is NULL (written before the column existed) is rendered
when listed, and stored by the managers in the background
(``climate.manager.workers.body_filler``).  A change to the body's shape
therefore needs a migration that clears the stored bodies (``UPDATE leases
SET body = NULL``): the managers then store them again in the new shape.
"""

import functools
import itertools
import json

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext import compiler
from sqlalchemy import orm
from sqlalchemy.sql import expression
from sqlalchemy.sql import visitors

from climate.db import models

_LEASE = models.Lease.__table__
_RESERVATION = models.Reservation.__table__
_EVENT = models.Event.__table__


class _OrderedAggregate(expression.ColumnElement):
    """``name(item ORDER BY ...)``: MariaDB's JSON_ARRAYAGG and
    PostgreSQL's json_agg take an ORDER BY inside the call."""

    # part of the statement's cache key, so a page's SQL is compiled once
    inherit_cache = True
    _traverse_internals = [
        ('name', visitors.InternalTraversal.dp_string),
        ('item', visitors.InternalTraversal.dp_clauseelement),
        ('order', visitors.InternalTraversal.dp_clauseelement_tuple)]

    def __init__(self, name, item, order):
        self.name = name
        self.item = item
        self.order = tuple(order)
        self.type = sa.Text()


@compiler.compiles(_OrderedAggregate)
def _compile_ordered_aggregate(element, sql_compiler, **kw):
    return '%s(%s ORDER BY %s)' % (
        element.name, sql_compiler.process(element.item, **kw),
        ', '.join(sql_compiler.process(o, **kw) for o in element.order))


def _const(value):
    # this module's constants (keys, formats, numbers) are inlined rather
    # than bound: a page's statement carries no parameters but its filters
    if isinstance(value, str):
        return sa.literal_column("'%s'" % value)
    return sa.literal_column(str(value))


def _pairs(fields):
    args = []
    for name, value in fields:
        args.extend((_const(name), value))
    return args


def _set_paths(fields):
    args = []
    for name, value in fields:
        args.extend((_const('$.' + name), value))
    return args


def _aggregated(aggregate, empty, item, table, where, order):
    """A correlated subquery: ``item`` of the rows of ``table`` matching
    ``where`` as one JSON array in ``order`` (``empty`` when none)."""
    return sa.select(sa.func.coalesce(
        _OrderedAggregate(aggregate, item, order), empty)).select_from(
        table).where(where).scalar_subquery()


class _JsonObjectKit:
    """JSON_OBJECT and JSON_SET, which MariaDB and SQLite share."""

    @staticmethod
    def obj(fields):
        return sa.func.json_object(*_pairs(fields))

    @staticmethod
    def merged(params, fields):
        # JSON_SET rather than JSON_MERGE_PATCH (json_patch), which drops
        # null members
        return sa.func.json_set(params, *_set_paths(fields))


class _MySQLKit(_JsonObjectKit):
    """MariaDB >= 10.5: results of JSON functions stay JSON when nested
    (through CASE and COALESCE too), so they embed unquoted."""

    @staticmethod
    def array(item, table, where, order):
        return _aggregated('JSON_ARRAYAGG', sa.func.json_array(), item,
                           table, where, order)

    @staticmethod
    def date(column):
        return sa.func.date_format(
            column, _const('%Y-%m-%dT%H:%i:%s.%f'))

    @staticmethod
    def timestamp(column):
        return sa.func.date_format(column, _const('%Y-%m-%d %H:%i:%s'))

    @staticmethod
    def boolean(column):
        return sa.case(
            (column != sa.false(),
             sa.func.json_extract(_const('true'), _const('$'))),
            else_=sa.func.json_extract(_const('false'), _const('$')))

    @staticmethod
    def text(body):
        return body


class _PostgreSQLKit:

    @staticmethod
    def obj(fields):
        return sa.func.json_build_object(*_pairs(fields))

    @staticmethod
    def merged(params, fields):
        # jsonb || keeps the right side's null members; jsonb orders an
        # object's keys its own way, which JSON leaves free
        return sa.cast(params, postgresql.JSONB).op('||')(
            sa.func.jsonb_build_object(*_pairs(fields)))

    @staticmethod
    def array(item, table, where, order):
        return _aggregated('json_agg', sa.literal_column("'[]'::json"),
                           item, table, where, order)

    @staticmethod
    def date(column):
        return sa.func.to_char(
            column, _const('YYYY-MM-DD"T"HH24:MI:SS.US'))

    @staticmethod
    def timestamp(column):
        return sa.func.to_char(column, _const('YYYY-MM-DD HH24:MI:SS'))

    @staticmethod
    def boolean(column):
        return column

    @staticmethod
    def text(body):
        return sa.cast(body, sa.Text())


class _SQLiteKit(_JsonObjectKit):
    """SQLite's JSON1 (built in since 3.38).  A value keeps its JSON
    subtype only within one expression, so what comes out of a subquery is
    re-read with json(); aggregates take no ORDER BY before 3.44, so the
    rows are ordered in a subquery."""

    @staticmethod
    def array(item, table, where, order):
        rows = sa.select(item.label('item')).select_from(table).where(
            where).order_by(*order).correlate(_LEASE).subquery()
        return sa.func.json(sa.select(sa.func.json_group_array(
            sa.func.json(rows.c.item))).scalar_subquery())

    @staticmethod
    def date(column):
        # SQLAlchemy stores 'YYYY-MM-DD HH:MM:SS.ffffff'; a value written
        # without its fraction gets the zeros the API shows
        return sa.func.substr(column, _const(1), _const(10)).concat(
            _const('T')).concat(
            sa.func.substr(column, _const(12), _const(8))).concat(
            _const('.')).concat(sa.func.substr(
                sa.type_coerce(column, sa.String).concat(_const('.000000')),
                _const(21), _const(6)))

    @staticmethod
    def timestamp(column):
        # 'YYYY-MM-DD HH:MM:SS', without any fraction
        return sa.func.substr(column, _const(1), _const(19))

    @staticmethod
    def boolean(column):
        return sa.func.json(sa.case((column != sa.false(), _const('true')),
                                    else_=_const('false')))

    @staticmethod
    def text(body):
        return body


_KITS = {'mysql': _MySQLKit, 'postgresql': _PostgreSQLKit,
         'sqlite': _SQLiteKit}

# events due at the same time are listed in the order they run, as
# climate.lease.views orders them
_EVENT_RANK = sa.case(
    (_EVENT.c.event_type == _const('start_lease'), _const(0)),
    (_EVENT.c.event_type == _const('end_lease'), _const(2)),
    else_=_const(1))


def body(dialect_name):
    """The SQL expression of a lease's JSON body rendered now (text),
    labelled ``body``, correlated to the ``leases`` table, for the engine
    named ``dialect_name``."""
    return _rendered(dialect_name).label('body')


@functools.lru_cache(maxsize=None)
def _rendered(dialect_name):
    kit = _KITS[dialect_name]
    res, ev, lease = _RESERVATION.c, _EVENT.c, _LEASE.c
    reservation = kit.merged(res.params, (
        ('id', res.id),
        ('lease_id', res.lease_id),
        ('resource_id', res.resource_id),
        ('resource_type', res.resource_type),
        ('status', res.status),
        ('missing_resources', kit.boolean(res.missing_resources)),
        ('resources_changed', kit.boolean(res.resources_changed)),
        ('created_at', kit.timestamp(res.created_at)),
        ('updated_at', kit.timestamp(res.updated_at)),
        ('stack_reservation_id', res.part_of)))
    event = kit.obj((
        ('id', ev.id),
        ('lease_id', ev.lease_id),
        ('event_type', ev.event_type),
        ('time', kit.date(ev.time)),
        ('status', ev.status),
        ('attempts', ev.attempts),
        ('last_error', ev.last_error),
        ('created_at', kit.timestamp(ev.created_at)),
        ('updated_at', kit.timestamp(ev.updated_at))))
    return kit.text(kit.obj((
        ('id', lease.id),
        ('name', lease.name),
        ('start_date', kit.date(lease.start_date)),
        ('end_date', kit.date(lease.end_date)),
        ('user_id', lease.user_id),
        ('project_id', lease.project_id),
        ('trust_id', lease.trust_id),
        ('status', lease.status),
        ('status_reason', lease.status_reason),
        ('degraded', kit.boolean(lease.degraded)),
        ('lease_type', lease.lease_type),
        ('max_retries', lease.max_retries),
        ('retry_attempts', lease.retry_attempts),
        ('next_attempt_at', kit.date(lease.next_attempt_at)),
        ('hold_expires_at', kit.date(lease.hold_expires_at)),
        ('series_id', lease.series_id),
        ('occurrence', lease.occurrence),
        ('keep_idle', kit.boolean(lease.keep_idle)),
        ('last_used_at', kit.date(lease.last_used_at)),
        ('idle_warned_at', kit.date(lease.idle_warned_at)),
        ('idle_ended_at', kit.date(lease.idle_ended_at)),
        ('created_at', kit.timestamp(lease.created_at)),
        ('updated_at', kit.timestamp(lease.updated_at)),
        ('reservations', kit.array(
            reservation, _RESERVATION, res.lease_id == lease.id,
            (res.created_at, res.id))),
        ('events', kit.array(
            event, _EVENT, ev.lease_id == lease.id,
            (ev.time, _EVENT_RANK, ev.created_at, ev.id))))))


# -- stored bodies ----------------------------------------------------------

def _store(dialect_name, where):
    # updated_at is set to itself: re-rendering is not a change of the
    # lease (the column's onupdate would otherwise stamp it)
    return sa.update(_LEASE).where(where).values(
        body=_rendered(dialect_name), updated_at=_LEASE.c.updated_at)


@functools.lru_cache(maxsize=None)
def _refresh_statement(dialect_name):
    return _store(dialect_name,
                  _LEASE.c.id.in_(sa.bindparam('ids', expanding=True)))


@functools.lru_cache(maxsize=None)
def _lock_statement():
    return sa.select(_LEASE.c.id).where(
        _LEASE.c.id.in_(sa.bindparam('ids', expanding=True))).order_by(
        _LEASE.c.id).with_for_update()


def refresh(connection, lease_ids):
    """Store the current body of each lease of ``lease_ids`` (in the
    connection's transaction)."""
    if not lease_ids:
        return
    ids = {'ids': sorted(lease_ids)}
    dialect = connection.dialect.name
    if dialect == 'postgresql':
        # An UPDATE that waited for a lease's row lock re-reads that row,
        # but its subqueries still read the reservations and events as of
        # before the wait, missing what the lock's holder committed.  Taken
        # first, the lock makes the UPDATE a statement started after it,
        # which sees everything committed.  (MariaDB's UPDATE reads them
        # with locking reads, the latest committed; SQLite has one writer.)
        connection.execute(_lock_statement(), ids)
    connection.execute(_refresh_statement(dialect), ids)


def render_missing(connection, limit):
    """Store the body of up to ``limit`` leases that have none; returns
    how many."""
    ids = connection.execute(sa.select(_LEASE.c.id).where(
        _LEASE.c.body.is_(None)).order_by(_LEASE.c.id).limit(
        limit)).scalars().all()
    refresh(connection, ids)
    return len(ids)


def outdated(connection):
    """Ids of the leases whose stored body is not what rendering them now
    gives (compared as JSON): empty unless a writer forgot :func:`changed`.
    For the tests; reads every lease."""
    rows = connection.execute(sa.select(
        _LEASE.c.id, _LEASE.c.body,
        _rendered(connection.dialect.name).label('fresh'))).all()
    return sorted(lease_id for lease_id, stored, fresh in rows
                  if stored is not None and
                  json.loads(stored) != json.loads(fresh))


_CHANGED = 'climate.changed_leases'


def changed(session, lease_ids):
    """Note that this transaction changed what the bodies of ``lease_ids``
    show; they are re-rendered just before it commits.  Needed after Core
    statements only: the ORM's changes are noted by :func:`_note_flush`."""
    if lease_ids:
        session.info.setdefault(_CHANGED, set()).update(lease_ids)


_LEASE_PARTS = (models.Reservation, models.Event)


@sa.event.listens_for(orm.Session, 'after_flush')
def _note_flush(session, _flush_context):
    deleted = {obj.id for obj in session.deleted
               if isinstance(obj, models.Lease)}
    ids = set()
    for obj in itertools.chain(session.new, session.dirty, session.deleted):
        if isinstance(obj, models.Lease):
            lease_id = obj.id
        elif isinstance(obj, _LEASE_PARTS):
            lease_id = obj.lease_id
        else:
            continue
        if (lease_id not in deleted and
                (obj not in session.dirty or session.is_modified(obj))):
            ids.add(lease_id)
    if ids:
        changed(session, ids)


@sa.event.listens_for(orm.Session, 'before_commit')
def _refresh_changed(session):
    # the commit's own flush would come after this hook, too late to note
    # its changes (a no-op when nothing is pending)
    session.flush()
    if session.info.get(_CHANGED):
        refresh(session.connection(), session.info.pop(_CHANGED))


@sa.event.listens_for(orm.Session, 'after_soft_rollback')
def _forget_changed(session, previous_transaction):
    # a savepoint's rollback leaves the transaction's other changes; a
    # lease noted in vain is only rendered once more
    if previous_transaction.parent is None:
        session.info.pop(_CHANGED, None)
