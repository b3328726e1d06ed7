"""Database access: engine set-up and the queries the domain code needs.

Functions take the request context; nested calls with the same context
join the caller's transaction (oslo.db enginefacade), which is how a lease,
its reservations, its events and the plugins' allocations are written in
one transaction or not at all.
"""

import contextlib
import threading

import sqlalchemy as sa
from oslo_db import api as oslo_db_api
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import utils as db_utils
from sqlalchemy import orm

from climate.db import models
from climate import exceptions
from climate import states

_main = enginefacade.transaction_context()
_main.configure(sqlite_fk=True)
# how many writer() blocks the current thread is inside
_thread = threading.local()


#: Retry a whole transaction that lost a deadlock; decorate the outermost
#: function of a transaction with it.
retry_on_deadlock = oslo_db_api.wrap_db_retry(
    max_retries=5, retry_on_deadlock=True, retry_interval=0.05,
    inc_retry_interval=True, max_retry_interval=1)


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


@sa.event.listens_for(sa.engine.Engine, 'connect')
def _sqlite_pragmas(dbapi_conn, _record):
    # WAL lets readers proceed while the event engine writes.
    if type(dbapi_conn).__module__.startswith('sqlite3'):
        cur = dbapi_conn.cursor()
        cur.execute('PRAGMA journal_mode=WAL')
        cur.execute('PRAGMA busy_timeout=30000')
        cur.close()


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


SORT_KEYS = ('created_at', 'name', 'start_date', 'end_date', 'status', 'id')


def lease_list(ctx, project_id=None, filters=None, limit=None, marker=None,
               sort_key='created_at', sort_dir='asc'):
    """Leases matching ``filters``, one page at a time.

    Pagination is keyset-based (``marker`` is the id of the last lease of the
    previous page) so a page costs the same wherever it is in the table.

    :param filters: optional ``status`` (list), ``name``, ``time_from`` and
        ``time_to`` (leases overlapping that window).
    """
    filters = filters or {}
    with reader(ctx) as session:
        query = _lease_query(session, project_id)
        if filters.get('status'):
            query = query.filter(models.Lease.status.in_(filters['status']))
        if filters.get('name'):
            query = query.filter(models.Lease.name == filters['name'])
        if filters.get('time_from'):
            query = query.filter(models.Lease.end_date > filters['time_from'])
        if filters.get('time_to'):
            query = query.filter(models.Lease.start_date < filters['time_to'])
        marker_obj = None
        if marker is not None:
            marker_obj = _lease_query(session, project_id).filter(
                models.Lease.id == marker).one_or_none()
            if marker_obj is None:
                raise exceptions.InvalidInput(
                    reason="marker %s is not a lease of this listing" %
                    marker)
        sort_keys = [sort_key] if sort_key == 'id' else [sort_key, 'id']
        query = db_utils.paginate_query(query, models.Lease, limit, sort_keys,
                                        marker=marker_obj, sort_dir=sort_dir)
        return query.all()


def lease_name_exists(ctx, project_id, name, exclude_id=None):
    with reader(ctx) as session:
        query = session.query(models.Lease.id).filter_by(
            project_id=project_id, name=name)
        if exclude_id:
            query = query.filter(models.Lease.id != exclude_id)
        return session.query(query.exists()).scalar()


def lease_create(ctx, values, reservations, events):
    """Insert a lease with its reservations and events; returns the lease.

    Must run inside the caller's writer transaction so that plugin
    allocations made afterwards commit or roll back with it.
    """
    with writer(ctx) as session:
        lease = models.Lease(**values)
        lease.reservations = [models.Reservation(**r) for r in reservations]
        lease.events = [models.Event(**e) for e in events]
        session.add(lease)
        try:
            session.flush()
        except db_exc.DBDuplicateEntry:
            raise exceptions.LeaseNameAlreadyExists(name=values['name'])
        return lease


def set_status(obj, kind, new, reason=None):
    """Change the status of a lease, reservation or event, checked."""
    obj.status = states.check(kind, obj.status, new)
    if kind == 'lease' and reason is not None:
        obj.status_reason = reason


def lease_delete(ctx, lease):
    with writer(ctx) as session:
        session.delete(lease)
        session.flush()


def flush(ctx):
    with writer(ctx) as session:
        try:
            session.flush()
        except db_exc.DBDuplicateEntry as e:
            raise exceptions.Conflict(reason='duplicate %s' % (
                ', '.join(e.columns or []) or 'value'))


# -- events ----------------------------------------------------------------

def next_due(ctx):
    """The earliest ``due_at`` of any event still to run, or None."""
    with reader(ctx) as session:
        return session.query(sa.func.min(models.Event.due_at)).filter(
            models.Event.status.in_((states.UNDONE, states.IN_PROGRESS))
        ).scalar()


@retry_on_deadlock
def events_claim(ctx, owner, token, now, batch, ttl):
    """Claim up to ``batch`` due events for ``owner``; returns their ids.

    Due: UNDONE with ``due_at <= now``, or IN_PROGRESS whose claim expired
    (``due_at`` holds the claim's expiry).  A claim sets the owner, a fresh
    token and pushes ``due_at`` to the expiry.  Where the engine can, rows
    are locked with SKIP LOCKED so concurrent managers never wait for or
    take each other's events; elsewhere (SQLite) each row is taken with a
    compare-and-set update.
    """
    claim = dict(status=states.IN_PROGRESS, claimed_by=owner,
                 claim_token=token, due_at=now + ttl)
    skip_locked = supports_skip_locked()
    ids = []
    with writer(ctx) as session:
        # One status at a time, expired claims first: ``status = X ORDER BY
        # due_at`` walks ix_events_status_due in order and locks only the
        # rows it returns, whereas ``status IN (...) ORDER BY due_at`` sorts
        # every due row and InnoDB locks all of them, so that a concurrent
        # claim on another manager skipped the whole backlog.
        for status in (states.IN_PROGRESS, states.UNDONE):
            if len(ids) >= batch:
                break
            query = sa.select(models.Event.id, models.Event.due_at,
                              models.Event.status).where(
                models.Event.status == status,
                models.Event.due_at <= now).order_by(
                models.Event.due_at).limit(batch - len(ids))
            if skip_locked:
                ids.extend(row.id for row in session.execute(
                    query.with_for_update(skip_locked=True)).all())
                continue
            for row in session.execute(query).all():
                result = session.execute(sa.update(models.Event).where(
                    models.Event.id == row.id,
                    models.Event.status == row.status,
                    models.Event.due_at == row.due_at).values(**claim))
                if result.rowcount == 1:
                    ids.append(row.id)
        if skip_locked and ids:
            session.execute(sa.update(models.Event).where(
                models.Event.id.in_(ids)).values(**claim))
    return ids


def event_get(ctx, event_id, for_update=False):
    with reader(ctx) as session:
        query = session.query(models.Event).filter_by(id=event_id)
        if for_update:
            query = query.with_for_update().populate_existing()
        return query.one_or_none()


def events_in_progress(ctx, lease_id):
    with reader(ctx) as session:
        return session.query(models.Event).filter_by(
            lease_id=lease_id, status=states.IN_PROGRESS).all()


# -- noop plugin -------------------------------------------------------------

def noop_action_record(ctx, **values):
    with writer(ctx) as session:
        session.add(models.NoopAction(**values))


def noop_action_list(ctx, lease_id=None):
    with reader(ctx) as session:
        query = session.query(models.NoopAction)
        if lease_id:
            query = query.filter_by(lease_id=lease_id)
        return query.order_by(models.NoopAction.id).all()
