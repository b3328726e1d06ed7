"""Database access: engine set-up and the queries the domain code needs.

Functions take the request context; nested calls with the same context
join the caller's transaction (oslo.db enginefacade), which is how a lease,
its reservations, its events and the plugins' allocations are written in
one transaction or not at all.
"""

import collections
import contextlib
import functools
import logging
import sys
import threading
import types

from oslo_config import cfg
import sqlalchemy as sa
from oslo_db import api as oslo_db_api
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
from sqlalchemy import orm

from climate.db import lease_json
from climate.db import models
from climate import exceptions
from climate import states

_main = enginefacade.transaction_context()
_main.configure(sqlite_fk=True)
# how many writer() blocks the current thread is inside
_thread = threading.local()


#: Retry a whole transaction that lost a deadlock (on Galera also a
#: certification failure: a concurrent writer on another node committed
#: a row this one wrote); decorate the outermost function of a
#: transaction with it.  Bounded, the waits doubling from 50 ms with
#: jitter so that the losers of one conflict do not meet again; the last
#: loss is answered 503 (``climate.manager.outages``).
retry_on_deadlock = oslo_db_api.wrap_db_retry(
    max_retries=5, retry_on_deadlock=True, retry_interval=0.05,
    inc_retry_interval=True, max_retry_interval=1, jitter=True)


class _AbortedRollbacks(logging.Filter):
    """A transaction that a concurrent writer aborted (a Galera node's
    replication kills a local transaction holding rows it must write)
    fails its ROLLBACK with the same deadlock error; oslo.db then logs the
    exception that made it roll back (a 409 it was about to answer, say)
    as an ERROR "Original exception being dropped" before raising the
    deadlock, which :data:`retry_on_deadlock` re-runs.  Nothing was lost:
    said as a warning, in one line."""

    def filter(self, record):
        # excutils logs while the deadlock is being raised, without
        # exc_info: the exception in flight is the deadlock
        exc = record.exc_info[1] if record.exc_info else sys.exc_info()[1]
        if isinstance(exc, db_exc.DBDeadlock):
            record.levelno, record.levelname = logging.WARNING, 'WARNING'
            record.msg = ('A transaction aborted by a concurrent writer '
                          'failed its rollback too; it is re-run (%s)')
            record.args = (str(exc).splitlines()[0],)
            record.exc_info = record.exc_text = None
        return True


def quiet_aborted_rollbacks():
    """Install :class:`_AbortedRollbacks` (once) on oslo.utils' logger."""
    logger = logging.getLogger('oslo_utils.excutils')
    if not any(isinstance(f, _AbortedRollbacks) for f in logger.filters):
        logger.addFilter(_AbortedRollbacks())


def configure(connection=None, **kwargs):
    """Start over with a new engine (tests and tools switch databases)."""
    global _main
    _main = enginefacade.transaction_context()
    if connection:
        kwargs['connection'] = connection
    _main.configure(sqlite_fk=True, **kwargs)


@contextlib.contextmanager
def writer(ctx):
    """A read-write transaction bound to ``ctx`` (joins an outer one)."""
    depth = getattr(_thread, 'writers', 0)
    _thread.writers = depth + 1
    try:
        with _main.writer.using(ctx) as session:
            yield session
    finally:
        _thread.writers = depth


def reader(ctx):
    """A read-only transaction bound to ``ctx`` (joins an outer one)."""
    return _main.reader.using(ctx)


def get_engine():
    return _main.writer.get_engine()


def dialect_name():
    return get_engine().dialect.name


def supports_skip_locked():
    """MariaDB >= 10.6, MySQL >= 8 and PostgreSQL lock rows and skip them."""
    engine = get_engine()
    if engine.dialect.name == 'postgresql':
        return True
    if engine.dialect.name == 'mysql':
        info = engine.dialect.server_version_info or ()
        if getattr(engine.dialect, 'is_mariadb', False):
            return tuple(info[:2]) >= (10, 6)
        return tuple(info[:1]) >= (8,)
    return False


#: DB-API modules of MariaDB/MySQL drivers (``mysql+pymysql://``...).
_MYSQL_DRIVERS = ('pymysql', 'MySQLdb', 'mysql')


@sa.event.listens_for(sa.engine.Engine, 'connect')
def _session_settings(dbapi_conn, _record):
    module = type(dbapi_conn).__module__
    cur = dbapi_conn.cursor()
    if module.startswith('sqlite3'):
        # WAL lets readers proceed while the event engine writes.
        cur.execute('PRAGMA journal_mode=WAL')
        cur.execute('PRAGMA busy_timeout=30000')
    elif module.startswith(_MYSQL_DRIVERS):
        # As PostgreSQL's default: each statement reads what is committed
        # when it starts.  InnoDB's REPEATABLE READ answers a plain read
        # from a snapshot taken before the lock the transaction waited for,
        # and its locking reads lock every row and gap they scan, so two
        # lease creates booking several kinds of provider deadlocked on
        # rows neither of them wanted.
        cur.execute('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED')
        # A Galera node applies what other nodes commit a little later:
        # without the causality wait, a manager on one node may answer
        # 404 for a lease another node's manager has just created.
        cur.execute("SHOW VARIABLES LIKE 'wsrep_on'")
        row = cur.fetchone()
        if row and str(row[1]).upper() == 'ON':
            cur.execute('SET SESSION wsrep_sync_wait = %d' % _sync_wait())
    cur.close()


def _sync_wait():
    try:
        return int(cfg.CONF.galera.sync_wait)
    except (cfg.NoSuchOptError, AttributeError):
        return 1  # a tool that registered no options: the default


@sa.event.listens_for(sa.engine.Engine, 'before_cursor_execute',
                      retval=True)
def _sqlite_begin_immediate(conn, _cursor, statement, parameters, _context,
                            _executemany):
    # oslo.db opens SQLite transactions with a deferred BEGIN: one that read
    # before another connection committed then fails its first write at
    # once with "database is locked" (busy_timeout does not apply to a stale
    # snapshot).  Writers take the write lock at BEGIN and queue instead;
    # readers stay deferred so they never wait behind a writer (WAL).
    if (statement == 'BEGIN' and conn.dialect.name == 'sqlite' and
            getattr(_thread, 'writers', 0)):
        statement = 'BEGIN IMMEDIATE'
    return statement, parameters


# -- leases ----------------------------------------------------------------

_LEASE_LOAD = (orm.selectinload(models.Lease.reservations),
               orm.selectinload(models.Lease.events))


def _lease_query(session, project_id=None):
    query = session.query(models.Lease).options(*_LEASE_LOAD)
    if project_id is not None:
        query = query.filter(models.Lease.project_id == project_id)
    return query


def lease_get(ctx, lease_id, project_id=None, for_update=False):
    """The lease with its reservations and events, or LeaseNotFound.

    :param project_id: restrict to this project; another project's lease is
        reported as not found, so its existence does not leak.
    :param for_update: lock the lease row until the transaction ends.
    """
    with reader(ctx) as session:
        query = _lease_query(session, project_id).filter(
            models.Lease.id == lease_id)
        if for_update:
            # fresh rows, not what this session may have read before
            query = query.with_for_update().populate_existing()
        lease = query.one_or_none()
    if lease is None:
        raise exceptions.LeaseNotFound(id=lease_id)
    return lease


def leases_locked(ctx, lease_ids):
    """The leases of ``lease_ids`` that exist, locked until the
    transaction ends, with their reservations and events (one query
    each, however many leases): the rows a batch of events needs.

    Locked in id order, as :func:`climate.db.lease_json.refresh` and any
    other batch lock them, so that two of them wait for each other rather
    than deadlock."""
    with reader(ctx) as session:
        return _lease_query(session).filter(
            models.Lease.id.in_(sorted(set(lease_ids)))).order_by(
            models.Lease.id).with_for_update().populate_existing().all()


SORT_KEYS = ('created_at', 'name', 'start_date', 'end_date', 'status', 'id')


def _after(columns, marker, descending):
    """SQL: rows strictly after ``marker`` in the order of ``columns``.

    The expanded form ``(a > x) OR (a = x AND b > y)`` rather than a row
    comparison, which not every engine answers from the index.
    """
    clauses = []
    for i, column in enumerate(columns):
        value = marker[column.key]
        step = column < value if descending else column > value
        clauses.append(sa.and_(*[c == marker[c.key] for c in columns[:i]],
                               step))
    return sa.or_(*clauses)


_LIST_FILTERS = ('status', 'name', 'time_from', 'time_to')


@functools.lru_cache(maxsize=256)
def _page_statement(dialect_name, scoped, filter_names, sort_key, descending,
                    after_marker, limited):
    """The SELECT of one listing's page, with bind parameters for every
    value, built once per shape: a new statement object costs a cache key
    walk over the whole JSON body expression (a quarter of a millisecond)
    on every page."""
    lease_t = models.Lease.__table__
    where = []
    if scoped:
        where.append(lease_t.c.project_id == sa.bindparam('project_id'))
    if 'status' in filter_names:
        where.append(lease_t.c.status.in_(
            sa.bindparam('status', expanding=True)))
    if 'name' in filter_names:
        where.append(lease_t.c.name == sa.bindparam('name'))
    if 'time_from' in filter_names:
        where.append(lease_t.c.end_date > sa.bindparam(
            'time_from', type_=lease_t.c.end_date.type))
    if 'time_to' in filter_names:
        where.append(lease_t.c.start_date < sa.bindparam(
            'time_to', type_=lease_t.c.start_date.type))
    order = _page_order(sort_key)
    if after_marker:
        where.append(_after(order, {c.key: sa.bindparam(
            'after_' + c.key, type_=c.type) for c in order}, descending))
    query = sa.select(lease_t.c.id, lease_t.c.body).where(
        *where).order_by(*[c.desc() if descending else c.asc()
                           for c in order])
    if limited:
        query = query.limit(sa.bindparam('limit'))
    return query


def _page_order(sort_key):
    lease_t = models.Lease.__table__
    return [lease_t.c[sort_key]] + ([lease_t.c.id] if sort_key != 'id'
                                    else [])


def lease_list(ctx, project_id=None, filters=None, limit=None, marker=None,
               sort_key='created_at', sort_dir='asc'):
    """Leases matching ``filters``, one page at a time, as JSON texts.

    Pagination is keyset-based (``marker`` is the id of the last lease of the
    previous page) so a page costs the same wherever it is in the table.
    Each lease comes as ``(id, body)``: its API body (with reservations and
    events) as stored with the lease, see :mod:`climate.db.lease_json`.

    :param filters: optional ``status`` (list), ``name``, ``time_from`` and
        ``time_to`` (leases overlapping that window).
    """
    filters = {k: v for k, v in (filters or {}).items()
               if k in _LIST_FILTERS and v}
    params = dict(filters)
    if project_id is not None:
        params['project_id'] = project_id
    if limit:
        params['limit'] = limit
    lease_t = models.Lease.__table__
    with reader(ctx) as session:
        if marker is not None:
            # the marker must be a lease the caller may see, whatever the
            # filters
            found = session.execute(sa.select(*_page_order(sort_key)).where(
                lease_t.c.id == marker,
                *([] if project_id is None
                  else [lease_t.c.project_id == project_id]))).one_or_none()
            if found is None:
                raise exceptions.InvalidInput(
                    reason="marker %s is not a lease of this listing" %
                    marker)
            params.update(('after_' + key, value)
                          for key, value in found._mapping.items())
        query = _page_statement(
            session.bind.dialect.name, project_id is not None,
            tuple(sorted(filters)), sort_key, sort_dir == 'desc',
            marker is not None, bool(limit))
        rows = [tuple(row) for row in session.execute(query, params)]
        unrendered = [lease_id for lease_id, body in rows if body is None]
        if unrendered:
            # leases written before bodies were stored
            fresh = dict(session.execute(
                sa.select(lease_t.c.id, lease_json.body(
                    session.bind.dialect.name)).where(
                    lease_t.c.id.in_(unrendered))).all())
            rows = [(lease_id, body if body is not None else fresh[lease_id])
                    for lease_id, body in rows]
        return rows


def lease_bodies_fill(ctx, limit):
    """Store the listing body of up to ``limit`` leases that have none;
    returns how many (see :mod:`climate.db.lease_json`)."""
    with writer(ctx) as session:
        return lease_json.render_missing(session.connection(), limit)


def lease_name_exists(ctx, project_id, name, exclude_id=None):
    with reader(ctx) as session:
        query = session.query(models.Lease.id).filter_by(
            project_id=project_id, name=name)
        if exclude_id:
            query = query.filter(models.Lease.id != exclude_id)
        return session.query(query.exists()).scalar()


def _complete_row(table, values):
    """``values`` plus every other column of ``table`` at its Python-side
    default, so the inserted row is known without reading it back."""
    row = {}
    for column in table.columns:
        default = column.default
        if column.key in values:
            row[column.key] = values[column.key]
        elif default is None:
            row[column.key] = None
        elif default.is_callable:
            row[column.key] = default.arg(None)
        else:
            row[column.key] = default.arg
    return row


# Statements of the create path, built once: a statement object memoizes
# its cache key, a new one per call walks its columns again each time.
_INSERT_LEASE = models.Lease.__table__.insert()
_INSERT_RESERVATIONS = models.Reservation.__table__.insert()
_INSERT_EVENTS = models.Event.__table__.insert()
_INSERT_NOOP_ACTION = models.NoopAction.__table__.insert()


def lease_records(values, reservations, events):
    """The rows a new lease will be written as, complete with their
    defaults (ids, timestamps), as read-only records with the attributes
    of the models (``lease.reservations``, ``lease.events``), for
    ``climate.lease.views`` and :func:`lease_insert`."""
    lease = _complete_row(models.Lease.__table__, values)
    return types.SimpleNamespace(
        reservations=[types.SimpleNamespace(**_complete_row(
            models.Reservation.__table__, dict(r, lease_id=lease['id'])))
            for r in reservations],
        events=[types.SimpleNamespace(**_complete_row(
            models.Event.__table__, dict(e, lease_id=lease['id'])))
            for e in events],
        **lease)


#: ``session.info`` key: ``{lease id: project id}`` of the leases a
#: transaction wrote or read the project of (:func:`lease_project`).
_PROJECTS = 'climate.lease_projects'


def lease_project(session, lease_id):
    """The project of a lease, read once per transaction (the ledger
    writes it on each booking; a create's lease is known without a
    read)."""
    known = session.info.setdefault(_PROJECTS, {})
    if lease_id not in known:
        known[lease_id] = session.execute(sa.select(
            models.Lease.project_id).where(
            models.Lease.id == lease_id)).scalar()
    return known[lease_id]


def lease_insert(ctx, records, body):
    """Insert a lease with its reservations and events (``records`` from
    :func:`lease_records`) and ``body``, its listing's JSON text as
    ``climate.lease.views`` renders the records.

    Core inserts, not the ORM unit of work: this is the hot path of every
    create.  Must run inside the caller's writer transaction so that plugin
    allocations made afterwards commit or roll back with it; what they
    change in the lease's rows must be noted (see
    :func:`reservation_set_resource`) for the body to be rendered again.
    """
    lease = {key: value for key, value in vars(records).items()
             if key not in ('reservations', 'events')}
    lease['body'] = body
    with writer(ctx) as session:
        try:
            # Core on the session's connection: same transaction, without
            # the ORM's execute machinery (a fifth of a create's SQL time)
            conn = session.connection()
            conn.execute(_INSERT_LEASE, lease)
        except db_exc.DBDuplicateEntry as exc:
            if 'occurrence' in (exc.columns or ()):
                raise exceptions.OccurrenceExists(
                    series=lease.get('series_id'),
                    occurrence=lease.get('occurrence'))
            raise exceptions.LeaseNameAlreadyExists(name=lease['name'])
        if records.reservations:
            conn.execute(_INSERT_RESERVATIONS,
                         [vars(r) for r in records.reservations])
        if records.events:
            conn.execute(_INSERT_EVENTS, [vars(e) for e in records.events])
        # the ledger's bookings of the lease carry its project
        session.info.setdefault(_PROJECTS, {})[lease['id']] = \
            lease['project_id']


def reservation_set_resource(ctx, lease_id, reservation_id, resource_id):
    """Store the resource id a plugin's ``reserve`` returned."""
    with writer(ctx) as session:
        # part of the create, not an update: updated_at stays null, as the
        # create's answer shows it (the column's onupdate would stamp it)
        session.execute(sa.update(models.Reservation).where(
            models.Reservation.id == reservation_id).values(
            resource_id=resource_id,
            updated_at=models.Reservation.updated_at))
        lease_json.changed(session, (lease_id,))


def reservations_flagged(ctx, resource_type):
    """``(reservation id, lease id)`` of the reservations of
    ``resource_type`` flagged ``missing_resources`` (healing clears the
    flag once their resources are back)."""
    with reader(ctx) as session:
        return [tuple(r) for r in session.execute(
            sa.select(models.Reservation.id,
                      models.Reservation.lease_id).where(
                models.Reservation.resource_type == resource_type,
                models.Reservation.missing_resources.is_(True)).order_by(
                models.Reservation.id))]


def resource_types_of(ctx, lease_ids):
    """``{lease id: resource types of its reservations not deleted}``
    (one statement; a lease without any is left out)."""
    found = {}
    if not lease_ids:
        return found
    with reader(ctx) as session:
        rows = session.execute(sa.select(
            models.Reservation.lease_id,
            models.Reservation.resource_type).where(
            models.Reservation.lease_id.in_(sorted(set(lease_ids))),
            models.Reservation.status != states.RES_DELETED).distinct())
        for lease_id, resource_type in rows:
            found.setdefault(lease_id, set()).add(resource_type)
    return found


#: The part of a lease a plugin's periodic pass needs (the attributes of
#: ``climate.plugins.values.Lease`` it reads).
LeaseRef = collections.namedtuple('LeaseRef', 'id project_id trust_id')


def pending_reservations(ctx, resource_type):
    """``(lease, reservation)`` of the pending reservations of
    ``resource_type`` in pending leases: ``lease`` a :data:`LeaseRef`,
    ``reservation`` its parameters with ``id`` and ``status`` (one
    statement)."""
    return _reservations_in(ctx, resource_type, states.RES_PENDING,
                            states.LEASE_NOT_STARTED)


def active_reservations(ctx, resource_type):
    """As :func:`pending_reservations`, the active reservations of
    ``resource_type`` in active leases."""
    return _reservations_in(ctx, resource_type, states.RES_ACTIVE,
                            (states.ACTIVE,))


def _reservations_in(ctx, resource_type, status, lease_statuses):
    with reader(ctx) as session:
        rows = session.execute(
            sa.select(models.Reservation.id, models.Reservation.status,
                      models.Reservation.params, models.Lease.id,
                      models.Lease.project_id, models.Lease.trust_id)
            .join(models.Lease,
                  models.Lease.id == models.Reservation.lease_id)
            .where(models.Reservation.resource_type == resource_type,
                   models.Reservation.status == status,
                   models.Lease.status.in_(lease_statuses))
            .order_by(models.Reservation.id))
        return [(LeaseRef(lease_id, project, trust),
                 dict(params or {}, id=res_id, status=status))
                for res_id, status, params, lease_id, project, trust
                in rows]


def set_status(obj, kind, new, reason=None):
    """Change the status of a lease, reservation or event, checked."""
    obj.status = states.check(kind, obj.status, new)
    if kind == 'lease' and reason is not None:
        obj.status_reason = reason


def lease_delete(ctx, lease):
    with writer(ctx) as session:
        session.delete(lease)
        session.flush()


#: ``session.info`` key of the parameters a plugin stored at a create
#: (``climate.plugins.params.store_at_create``), by reservation id.
STORED_AT_CREATE = 'climate.params_stored_at_create'


def refresh_records(ctx, records):
    """Give the reservation ``records`` of :func:`lease_records` the
    parameters their rows hold now, when this transaction changed them (a
    plugin storing what it booked: addresses, a pool), through the ORM
    or ``climate.plugins.params.store_at_create``: no query, what the
    session holds only."""
    with writer(ctx) as session:
        stored = session.info.pop(STORED_AT_CREATE, None) or {}
        loaded = {obj.id: obj for obj in session.identity_map.values()
                  if isinstance(obj, models.Reservation)}
        for record in records:
            row = loaded.get(record.id)
            if row is not None:
                record.params = row.params
                record.resource_id = row.resource_id
            elif record.id in stored:
                record.params = stored[record.id]


def flush(ctx):
    with writer(ctx) as session:
        try:
            session.flush()
        except db_exc.DBDuplicateEntry as e:
            raise exceptions.Conflict(reason='duplicate %s' % (
                ', '.join(e.columns or []) or 'value'))


def _column_changes(obj):
    """``((attribute, new value), ...)`` of what changed on a loaded row,
    in the mapper's column order."""
    state = sa.inspect(obj)
    # the attributes set since the load, without computing the history
    # of the others
    unmodified = state.unmodified
    changes = []
    for attr in state.mapper.column_attrs:
        if attr.key in unmodified:
            continue
        # (not state.attrs: building it costs more than the history)
        added = orm.attributes.get_history(obj, attr.key).added
        if added:
            changes.append((attr.key, added[0]))
    return tuple(changes)


def _grouping_key(cls, changes, obj):
    """Rows with the same class and changes share one UPDATE; a change
    that cannot be compared as a key (a JSON value) keeps its row
    alone."""
    try:
        key = (cls, changes)
        hash(key)
        return key
    except TypeError:
        return (cls, id(obj))


def write_in_bulk(ctx, objects):
    """Write what changed on the loaded rows ``objects`` (leases,
    reservations, events), set-based: one UPDATE per table and set of new
    values, where a flush writes each row with a statement of its own (a
    batch of starts makes the same change to every lease, every event and
    every reservation: three statements).  ``updated_at`` is stamped as a
    flush stamps it.  The rows then hold what was written as their
    committed state, so the commit's flush writes them no more; the
    bodies of their leases are re-rendered at the commit
    (:func:`climate.db.lease_json.changed`).  Returns how many UPDATEs
    were run."""
    groups = {}
    for obj in objects:
        state = sa.inspect(obj)
        if not state.persistent or not state.modified:
            continue
        changes = _column_changes(obj)
        if changes:
            key = _grouping_key(type(obj), changes, obj)
            groups.setdefault(key, (type(obj), dict(changes), []))[
                2].append(obj)
    if not groups:
        return 0
    stamp = models.now()
    with writer(ctx) as session:
        # the connection's execute: no autoflush of the changes written
        # here
        connection = session.connection()
        touched = set()
        for cls, values, rows in groups.values():
            mapper = sa.inspect(cls)
            if 'updated_at' in mapper.column_attrs:
                values.setdefault('updated_at', stamp)
            table = cls.__table__
            connection.execute(sa.update(table).where(
                table.c.id.in_(sorted(row.id for row in rows))).values(
                {mapper.column_attrs[key].columns[0]: value
                 for key, value in values.items()}))
            for row in rows:
                for name, value in values.items():
                    orm.attributes.set_committed_value(row, name, value)
                touched.add(row.id if cls is models.Lease else row.lease_id)
        lease_json.changed(session, touched)
    return len(groups)


def detach(ctx, leases):
    """Take loaded ``leases``, their reservations and events, out of the
    transaction once :func:`write_in_bulk` wrote what changed on them
    (and nothing changed since): the commit's flush would otherwise walk
    each of their rows again (written, they still count as modified).
    What they show stays readable.  A lease whose collections changed
    (an event added or removed) stays, for the flush to write."""
    with writer(ctx) as session:
        for lease in leases:
            if lease in session and not any(
                    orm.attributes.get_history(lease, rel.key).has_changes()
                    for rel in sa.inspect(lease).mapper.relationships):
                session.expunge(lease)


def leases_with_spent_trust(ctx, limit=100):
    """``(lease id, trust id)`` of finished leases (TERMINATED, or never
    granted: EXHAUSTED, TIMEDOUT) that still name a trust (Keystone could
    not delete it when they finished); an occurrence's trust is its
    series' (``climate.db.series.spent_trusts``)."""
    with reader(ctx) as session:
        return [tuple(row) for row in session.execute(
            sa.select(models.Lease.id, models.Lease.trust_id).where(
                models.Lease.status.in_(states.LEASE_FINISHED),
                models.Lease.series_id.is_(None),
                models.Lease.trust_id.isnot(None)).limit(limit))]


def lease_forget_trust(ctx, lease_id, trust_id):
    """Clear a lease's trust id, unless it changed meanwhile."""
    with writer(ctx) as session:
        session.execute(sa.update(models.Lease).where(
            models.Lease.id == lease_id,
            models.Lease.trust_id == trust_id).values(trust_id=None))
        lease_json.changed(session, (lease_id,))


def trust_ids_in_use(ctx):
    """Every trust id a lease or a lease series refers to."""
    with reader(ctx) as session:
        return set(session.scalars(sa.select(models.Lease.trust_id).where(
            models.Lease.trust_id.isnot(None)))) | set(session.scalars(
                sa.select(models.LeaseSeries.trust_id).where(
                    models.LeaseSeries.trust_id.isnot(None))))


# -- events ----------------------------------------------------------------

_UNFINISHED = (states.UNDONE, states.IN_PROGRESS)


def _not_blocked(run_order):
    """SQL: no earlier event (by ``run_order``) of the same lease is unfinished.

    An event whose predecessor has not run yet cannot run either; claiming
    it would only give it back a moment later.
    """
    if not run_order:
        return sa.true()
    return _not_blocked_by(tuple(sorted(run_order.items())))


@functools.lru_cache(maxsize=8)
def _not_blocked_by(run_order):
    # built once: SQLAlchemy constructs (aliases, CASE) cost more than
    # running the query does
    run_order = dict(run_order)
    earlier = orm.aliased(models.Event)
    rank = sa.case(run_order, value=models.Event.event_type, else_=0)
    earlier_rank = sa.case(run_order, value=earlier.event_type, else_=0)
    # only the engine's own types wait for each other: a user's event
    # (``notification``...) is never run by the engine and blocks nothing
    return ~sa.exists().where(
        earlier.lease_id == models.Event.lease_id,
        earlier.status.in_(_UNFINISHED),
        earlier.event_type.in_(sorted(run_order)),
        earlier_rank < rank)


@functools.lru_cache(maxsize=32)
def _claim_query(status, event_type, run_order, skip_locked):
    """The due events of one status (and type), earliest first; binds
    ``now`` and ``batch``.  ``run_order``: sorted ``(type, rank)`` pairs."""
    where = [models.Event.status == status,
             models.Event.due_at <= sa.bindparam('now'),
             _not_blocked_by(run_order) if run_order else sa.true()]
    if event_type is not None:
        where.append(models.Event.event_type == event_type)
    query = sa.select(
        models.Event.id, models.Event.lease_id, models.Event.due_at,
        models.Event.status).where(*where).order_by(models.Event.due_at).limit(
        sa.bindparam('batch', type_=sa.Integer))
    if skip_locked:
        query = query.with_for_update(skip_locked=True)
    return query


def next_due(ctx, run_order=None, event_types=None):
    """The earliest ``due_at`` of an event that could run, or None.

    :param run_order: ``{event_type: rank}``; events waiting for an earlier
        one of their lease are left out (see :func:`events_claim`), and so
        are events of other types (users' own events, which the engine
        never claims: an overdue one would keep it from sleeping).
    :param event_types: the types the engine claims, when they are more
        than ``run_order``'s (a notice that waits for nothing).
    """
    types = sorted(set(event_types or ()) | set(run_order or ()))
    with reader(ctx) as session:
        query = session.query(sa.func.min(models.Event.due_at)).filter(
            models.Event.status.in_(_UNFINISHED), _not_blocked(run_order))
        if types:
            query = query.filter(models.Event.event_type.in_(types))
        return query.scalar()


#: A claimed event: its id and its lease's (which the engine locks first).
Claim = collections.namedtuple('Claim', 'event_id lease_id')


@retry_on_deadlock
def events_claim(ctx, owner, token, now, batch, ttl, run_order=None,
                 claim_order=None):
    """Claim up to ``batch`` due events for ``owner``.

    Returns ``Claim(event_id, lease_id)`` tuples.

    Due: UNDONE with ``due_at <= now``, or IN_PROGRESS whose claim expired
    (``due_at`` holds the claim's expiry) or was released because its
    manager was declared dead (``climate.db.managers``: ``due_at`` set to
    the release's time).  A claim sets the owner, a fresh
    token and pushes ``due_at`` to the expiry.  Where the engine can, rows
    are locked with SKIP LOCKED so concurrent managers never wait for or
    take each other's events; elsewhere (SQLite) each row is taken with a
    compare-and-set update.

    :param run_order: ``{event_type: rank}``: an event is not claimed while
        an event of lower rank of the same lease is unfinished (a lease's
        start runs before its before_end and end, even when all are due).
    :param claim_order: event types, most urgent first: every due event of
        a type is claimed before any of the next type.
    """
    claim = dict(status=states.IN_PROGRESS, claimed_by=owner,
                 claim_token=token, due_at=now + ttl)
    skip_locked = supports_skip_locked()
    ids = []
    with writer(ctx) as session:
        # One status and event type at a time, expired claims first:
        # ``status = X AND event_type = Y ORDER BY due_at`` walks
        # ix_events_status_type_due in order and locks only the rows it
        # returns, whereas ``status IN (...) ORDER BY due_at`` sorts every
        # due row and InnoDB locks all of them, so that a concurrent claim
        # on another manager skipped the whole backlog.
        #
        # Expired claims are rare and taken whatever their type: one query
        # on ix_events_status_due.
        order_key = tuple(sorted((run_order or {}).items()))
        passes = [(states.IN_PROGRESS, None)] + [
            (states.UNDONE, event_type)
            for event_type in claim_order or (None,)]
        for status, event_type in passes:
            if len(ids) >= batch:
                break
            query = _claim_query(status, event_type, order_key, skip_locked)
            rows = session.execute(
                query, {'now': now, 'batch': batch - len(ids)}).all()
            if skip_locked:
                ids.extend(Claim(row.id, row.lease_id) for row in rows)
                continue
            for row in rows:
                result = session.execute(sa.update(models.Event).where(
                    models.Event.id == row.id,
                    models.Event.status == row.status,
                    models.Event.due_at == row.due_at).values(**claim))
                if result.rowcount == 1:
                    ids.append(Claim(row.id, row.lease_id))
        if skip_locked and ids:
            session.execute(sa.update(models.Event).where(
                models.Event.id.in_([c.event_id for c in ids])).values(
                **claim))
        # the claimed events now show IN_PROGRESS
        lease_json.changed(session, {c.lease_id for c in ids})
    return ids


@retry_on_deadlock
def events_unclaim(ctx, token, event_ids, due):
    """Give back the claims of ``token`` on ``event_ids`` that it still
    holds: UNDONE again, due at ``due``; returns how many.  (A claim that
    was released meanwhile is someone else's now: untouched.)"""
    if not event_ids:
        return 0
    with writer(ctx) as session:
        held = sa.and_(models.Event.id.in_(sorted(set(event_ids))),
                       models.Event.status == states.IN_PROGRESS,
                       models.Event.claim_token == token)
        leases = set(session.scalars(sa.select(models.Event.lease_id).where(
            held).with_for_update()))
        done = session.execute(sa.update(models.Event).where(held).values(
            status=states.UNDONE, due_at=due, claimed_by=None,
            claim_token=None)).rowcount
        # the events show UNDONE again
        lease_json.changed(session, leases)
        return done


def event_get(ctx, event_id, for_update=False):
    with reader(ctx) as session:
        query = session.query(models.Event).filter_by(id=event_id)
        if for_update:
            query = query.with_for_update().populate_existing()
        return query.one_or_none()


def events_locked(ctx, event_ids):
    """``{id: event}`` of the events of ``event_ids`` that exist, locked
    (in id order) and read fresh: a batch checks each claim under its
    event's row lock, as :func:`event_get` does for one."""
    with reader(ctx) as session:
        rows = session.query(models.Event).filter(
            models.Event.id.in_(sorted(set(event_ids)))).order_by(
            models.Event.id).with_for_update().populate_existing().all()
    return {row.id: row for row in rows}


def events_in_progress(ctx, lease_id):
    with reader(ctx) as session:
        return session.query(models.Event).filter_by(
            lease_id=lease_id, status=states.IN_PROGRESS).all()


# -- noop plugin -------------------------------------------------------------

#: ``session.info`` key of the noop rows a batch's transaction writes
#: at its commit (:func:`gather_records`).
_GATHERED = 'climate.gathered_noop_actions'


def gather_records(ctx):
    """From now on in this transaction, the plugins' records (the noop
    plugin's rows) are written together just before it commits: a batch
    of events writes one statement rather than one per event.  Only for
    a transaction without savepoints around a plugin's call (a batch of
    events): a savepoint rolled back would not take its records back."""
    with writer(ctx) as session:
        session.info.setdefault(_GATHERED, [])


@sa.event.listens_for(orm.Session, 'before_commit')
def _write_gathered(session):
    rows = session.info.pop(_GATHERED, None)
    if rows:
        session.connection().execute(_INSERT_NOOP_ACTION, rows)


def noop_action_record(ctx, **values):
    with writer(ctx) as session:
        gathered = session.info.get(_GATHERED)
        if gathered is not None:
            gathered.append(dict(values, created_at=models.now()))
            return
        # Core, not the unit of work: it runs in every event's transaction
        session.connection().execute(_INSERT_NOOP_ACTION, values)


def noop_action_list(ctx, lease_id=None):
    with reader(ctx) as session:
        query = session.query(models.NoopAction)
        if lease_id:
            query = query.filter_by(lease_id=lease_id)
        return query.order_by(models.NoopAction.id).all()
