"""Lease series (recurring leases, ``climate.manager.series``): rows and
the reads of their occurrences."""

from oslo_db import exception as db_exc
import sqlalchemy as sa

from climate.db import api as db_api
from climate.db import models
from climate import exceptions
from climate.lease import recurrence
from climate import states

Series = models.LeaseSeries
Lease = models.Lease


def insert(session, values):
    """A new series' row; SeriesNameAlreadyExists (409) when the project
    has a series of that name."""
    row = Series(**values)
    session.add(row)
    try:
        session.flush()
    except db_exc.DBDuplicateEntry:
        raise exceptions.SeriesNameAlreadyExists(name=values['name'])
    return row


def get(ctx, series_id, project_id=None, for_update=False):
    """The series, or SeriesNotFound (another project's too: its
    existence does not leak)."""
    with db_api.reader(ctx) as session:
        query = sa.select(Series).where(Series.id == series_id)
        if project_id is not None:
            query = query.where(Series.project_id == project_id)
        if for_update:
            query = query.with_for_update().execution_options(
                populate_existing=True)
        row = session.execute(query).scalar_one_or_none()
    if row is None:
        raise exceptions.SeriesNotFound(id=series_id)
    return row


def listing(ctx, project_id=None):
    """The series of a project (None: every project), oldest first."""
    with db_api.reader(ctx) as session:
        query = sa.select(Series).order_by(Series.created_at, Series.id)
        if project_id is not None:
            query = query.where(Series.project_id == project_id)
        return session.execute(query).scalars().all()


def occurrences(ctx, series_ids):
    """``{series id: [lease rows (id, occurrence, name, start_date,
    end_date, status)]}`` of the occurrences that exist, in order."""
    found = {series_id: [] for series_id in series_ids}
    if not series_ids:
        return found
    with db_api.reader(ctx) as session:
        rows = session.execute(sa.select(
            Lease.series_id, Lease.id, Lease.occurrence, Lease.name,
            Lease.start_date, Lease.end_date, Lease.status).where(
                Lease.series_id.in_(list(series_ids))).order_by(
                    Lease.series_id, Lease.occurrence)).all()
    for row in rows:
        found[row.series_id].append(row)
    return found


def occurrence_leases(ctx, series_id, from_index=0):
    """The lease rows (ORM, with reservations and events) of a series'
    occurrences numbered ``from_index`` or later, in order, locked (in id
    order, as every batch locks leases)."""
    with db_api.reader(ctx) as session:
        ids = session.scalars(sa.select(Lease.id).where(
            Lease.series_id == series_id,
            Lease.occurrence >= from_index).order_by(Lease.id)).all()
    if not ids:
        return []
    return sorted(db_api.leases_locked(ctx, ids),
                  key=lambda lease: lease.occurrence)


def due(ctx, horizon_end, limit):
    """Ids of live series whose next occurrence starts before
    ``horizon_end``, soonest first."""
    with db_api.reader(ctx) as session:
        return list(session.scalars(sa.select(Series.id).where(
            Series.status == recurrence.LIVE,
            Series.next_start.isnot(None),
            Series.next_start < horizon_end).order_by(
                Series.next_start, Series.id).limit(limit)))


def next_start(ctx):
    """The soonest next occurrence start of a live series, or None."""
    with db_api.reader(ctx) as session:
        return session.execute(sa.select(sa.func.min(
            Series.next_start)).where(
                Series.status == recurrence.LIVE)).scalar()


def spent_trusts(ctx, limit=100):
    """``(series id, trust id)`` of series with nothing left to book
    (every occurrence booked, or cancelled, or stopped) none of whose
    occurrences is still to run or running: their trust is no longer
    needed."""
    unfinished = sa.select(Lease.id).where(
        Lease.series_id == Series.id,
        Lease.status.notin_(states.LEASE_FINISHED)).exists()
    with db_api.reader(ctx) as session:
        return [tuple(row) for row in session.execute(
            sa.select(Series.id, Series.trust_id).where(
                sa.or_(Series.status != recurrence.LIVE,
                       Series.next_start.is_(None)),
                Series.trust_id.isnot(None),
                ~unfinished).limit(limit))]


def forget_trust(ctx, series_id, trust_id):
    with db_api.writer(ctx) as session:
        session.execute(sa.update(Series).where(
            Series.id == series_id, Series.trust_id == trust_id).values(
                trust_id=None, generation=Series.generation + 1))
