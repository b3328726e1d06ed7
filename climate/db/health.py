"""What the detailed health check reads from the database: that it
answers, and how far behind the event engines are."""

import sqlalchemy as sa

from climate.db import api as db_api
from climate.db import models
from climate.lease import events as lease_events
from climate import states

_EVENTS = models.Event.__table__


def event_backlog(ctx, now):
    """Events that should have run by ``now`` and have not:
    ``{'backlog': n, 'oldest_overdue': earliest due_at or None,
    'in_progress': events claimed and not yet expired}``.

    Due: UNDONE with ``due_at <= now``, or IN_PROGRESS whose claim expired
    (``due_at`` holds the claim's expiry); two index ranges of
    ``ix_events_status_due``.  Only the event types the engine runs
    count (its own, and users' ``notification``): another type of a
    user's stays UNDONE forever, and would otherwise look overdue.
    """
    engine_types = _EVENTS.c.event_type.in_(lease_events.RUN_EVENT_TYPES)
    due = sa.and_(_EVENTS.c.status.in_([states.UNDONE, states.IN_PROGRESS]),
                  _EVENTS.c.due_at <= now, engine_types)
    with db_api.reader(ctx) as session:
        count, oldest = session.execute(sa.select(
            sa.func.count(), sa.func.min(_EVENTS.c.due_at)).where(
            due)).one()
        running = session.execute(sa.select(sa.func.count()).where(
            _EVENTS.c.status == states.IN_PROGRESS,
            _EVENTS.c.due_at > now, engine_types)).scalar()
    return {'backlog': count, 'oldest_overdue': oldest,
            'in_progress': running}
