"""Idle reclaim (``climate.manager.idle``): the projects' policies, and
the leases a pass looks at."""

import sqlalchemy as sa

from climate import dates
from climate.db import api as db_api
from climate.db import models
from climate import states

Policy = models.IdlePolicy
Lease = models.Lease


def get(ctx, project_id):
    """The project's policy row, or None."""
    with db_api.reader(ctx) as session:
        return session.get(Policy, project_id)


def listing(ctx):
    with db_api.reader(ctx) as session:
        return session.execute(sa.select(Policy).order_by(
            Policy.project_id)).scalars().all()


def put(ctx, project_id, values):
    with db_api.writer(ctx) as session:
        row = session.get(Policy, project_id, with_for_update=True)
        if row is None:
            row = Policy(project_id=project_id)
            session.add(row)
        for key, value in values.items():
            setattr(row, key, value)
        row.updated_at = models.now()
        session.flush()
        return view(row)


def delete(ctx, project_id):
    """Remove the project's policy; whether there was one."""
    with db_api.writer(ctx) as session:
        return bool(session.execute(sa.delete(Policy).where(
            Policy.project_id == project_id)).rowcount)


def view(row):
    return {'project_id': row.project_id,
            'resource_types': row.resource_types,
            'warn_after': row.warn_after, 'end_after': row.end_after,
            'created_at': dates.format_timestamp(row.created_at),
            'updated_at': dates.format_timestamp(row.updated_at)}


def watched(ctx, projects=None, limit=1000):
    """Ids of started leases that may be reclaimed (ACTIVE, not kept),
    of ``projects`` only when given (None: every project), oldest start
    first."""
    with db_api.reader(ctx) as session:
        query = sa.select(Lease.id).where(
            Lease.status == states.ACTIVE,
            Lease.keep_idle == sa.false()).order_by(
                Lease.start_date, Lease.id).limit(limit)
        if projects is not None:
            if not projects:
                return []
            query = query.where(Lease.project_id.in_(sorted(projects)))
        return list(session.scalars(query))
