"""Webhooks and their deliveries: SQL.

Deliveries are written by the event engine in the transaction that marks
their event DONE (:func:`deliveries_insert`, in the caller's transaction),
then claimed by the managers' delivery workers as events are
(:func:`deliveries_claim`: ``FOR UPDATE SKIP LOCKED`` where the database
has it, a compare-and-set update on SQLite), and finished by the claimer
only while its claim token is still on the row (:func:`delivery_finish`).
See ``climate.manager.webhooks``.
"""

import sqlalchemy as sa

from climate.db import api as db_api
from climate.db import models

_WEBHOOKS = models.Webhook.__table__
_DELIVERIES = models.WebhookDelivery.__table__

PENDING = 'pending'
DELIVERED = 'delivered'
FAILED = 'failed'

#: What the delivery log shows of a delivery (not its body: the lease it
#: carries is one GET away).
_LOG_COLUMNS = ('id', 'webhook_id', 'lease_id', 'event_id', 'event_type',
                'status', 'attempts', 'next_attempt_at', 'last_status_code',
                'last_error', 'created_at', 'delivered_at')


def _dicts(rows):
    return [dict(row._mapping) for row in rows]


# -- webhooks -----------------------------------------------------------------

def webhook_insert(ctx, values):
    """Write a webhook row (``values`` complete but for defaults); returns
    it as a mapping."""
    row = models.Webhook(**values)
    with db_api.writer(ctx) as session:
        session.add(row)
        session.flush()
        return {c.key: getattr(row, c.key) for c in _WEBHOOKS.columns}


def webhook_list(ctx, project_id=None):
    """Webhooks, oldest first; of one project when ``project_id`` is
    given."""
    query = sa.select(_WEBHOOKS).order_by(_WEBHOOKS.c.created_at,
                                          _WEBHOOKS.c.id)
    if project_id is not None:
        query = query.where(_WEBHOOKS.c.project_id == project_id)
    with db_api.reader(ctx) as session:
        return _dicts(session.execute(query))


def webhook_get(ctx, webhook_id, project_id=None):
    """The webhook as a mapping, or None (also when it belongs to another
    project than ``project_id``, when given)."""
    query = sa.select(_WEBHOOKS).where(_WEBHOOKS.c.id == webhook_id)
    if project_id is not None:
        query = query.where(_WEBHOOKS.c.project_id == project_id)
    with db_api.reader(ctx) as session:
        row = session.execute(query).one_or_none()
    return None if row is None else dict(row._mapping)


def webhook_delete(ctx, webhook_id, project_id=None):
    """Delete the webhook and its delivery log; False if there was none
    (in ``project_id``, when given)."""
    where = [_WEBHOOKS.c.id == webhook_id]
    if project_id is not None:
        where.append(_WEBHOOKS.c.project_id == project_id)
    with db_api.writer(ctx) as session:
        conn = session.connection()
        if conn.execute(sa.select(_WEBHOOKS.c.id).where(*where)
                        ).one_or_none() is None:
            return False
        # explicitly, not only by the foreign key's cascade: SQLite
        # enforces it only with foreign keys on
        conn.execute(_DELIVERIES.delete().where(
            _DELIVERIES.c.webhook_id == webhook_id))
        conn.execute(_WEBHOOKS.delete().where(*where))
        return True


def webhooks_of_project(ctx, project_id):
    """A project's webhooks (in the caller's transaction, if any)."""
    with db_api.reader(ctx) as session:
        return _dicts(session.execute(
            sa.select(_WEBHOOKS).where(
                _WEBHOOKS.c.project_id == project_id).order_by(
                _WEBHOOKS.c.created_at, _WEBHOOKS.c.id)))


# -- deliveries ---------------------------------------------------------------

def deliveries_insert(ctx, rows):
    """Write delivery rows in the caller's transaction (the event's)."""
    if not rows:
        return
    with db_api.writer(ctx) as session:
        session.connection().execute(_DELIVERIES.insert(), rows)


def deliveries_list(ctx, webhook_id, limit):
    """A webhook's delivery log, newest first, at most ``limit`` rows."""
    columns = [_DELIVERIES.c[name] for name in _LOG_COLUMNS]
    with db_api.reader(ctx) as session:
        return _dicts(session.execute(
            sa.select(*columns).where(
                _DELIVERIES.c.webhook_id == webhook_id).order_by(
                _DELIVERIES.c.created_at.desc(), _DELIVERIES.c.id).limit(
                limit)))


def delivery_get(ctx, delivery_id):
    """Every column of a delivery, or None."""
    with db_api.reader(ctx) as session:
        row = session.execute(sa.select(_DELIVERIES).where(
            _DELIVERIES.c.id == delivery_id)).one_or_none()
    return None if row is None else dict(row._mapping)


def next_due(ctx):
    """The earliest ``next_attempt_at`` of a pending delivery, or None."""
    with db_api.reader(ctx) as session:
        return session.execute(sa.select(
            sa.func.min(_DELIVERIES.c.next_attempt_at)).where(
            _DELIVERIES.c.status == PENDING)).scalar()


@db_api.retry_on_deadlock
def deliveries_claim(ctx, owner, token, now, batch, ttl):
    """Claim up to ``batch`` due deliveries for ``owner``; returns them
    with their webhook's url and secret, as mappings.

    Due: pending with ``next_attempt_at <= now``; a claimed delivery has
    ``next_attempt_at`` pushed to the claim's expiry, so the claim of a
    manager that died while sending expires and another one takes it
    (the endpoint may then see the delivery twice: at least once, and the
    ``X-Climate-Delivery`` header tells the copies apart).  The claim
    counts the attempt before it is made: a delivery that kills its
    senders still ends.
    """
    claim = dict(claimed_by=owner, claim_token=token,
                 next_attempt_at=now + ttl,
                 attempts=_DELIVERIES.c.attempts + 1)
    skip_locked = db_api.supports_skip_locked()
    query = sa.select(_DELIVERIES.c.id, _DELIVERIES.c.next_attempt_at).where(
        _DELIVERIES.c.status == PENDING,
        _DELIVERIES.c.next_attempt_at <= now).order_by(
        _DELIVERIES.c.next_attempt_at).limit(batch)
    if skip_locked:
        query = query.with_for_update(skip_locked=True)
    with db_api.writer(ctx) as session:
        conn = session.connection()
        rows = conn.execute(query).all()
        ids = []
        if skip_locked:
            ids = [row.id for row in rows]
            if ids:
                conn.execute(_DELIVERIES.update().where(
                    _DELIVERIES.c.id.in_(ids)).values(**claim))
        else:
            for row in rows:
                # compare-and-set: another manager's claim changed the time
                done = conn.execute(_DELIVERIES.update().where(
                    _DELIVERIES.c.id == row.id,
                    _DELIVERIES.c.status == PENDING,
                    _DELIVERIES.c.next_attempt_at == row.next_attempt_at
                ).values(**claim))
                if done.rowcount == 1:
                    ids.append(row.id)
        if not ids:
            return []
        return _dicts(conn.execute(sa.select(
            _DELIVERIES.c.id, _DELIVERIES.c.body, _DELIVERIES.c.attempts,
            _DELIVERIES.c.event_type, _DELIVERIES.c.webhook_id,
            _WEBHOOKS.c.url, _WEBHOOKS.c.secret).join(
            _WEBHOOKS, _WEBHOOKS.c.id == _DELIVERIES.c.webhook_id).where(
            _DELIVERIES.c.id.in_(ids), _DELIVERIES.c.claim_token == token)))


@db_api.retry_on_deadlock
def delivery_finish(ctx, delivery_id, token, values):
    """Record an attempt's outcome (``values``) and drop the claim, if the
    claim is still ``token``; returns whether it was."""
    with db_api.writer(ctx) as session:
        done = session.connection().execute(_DELIVERIES.update().where(
            _DELIVERIES.c.id == delivery_id,
            _DELIVERIES.c.status == PENDING,
            _DELIVERIES.c.claim_token == token).values(
            claimed_by=None, claim_token=None, **values))
        return done.rowcount == 1


@db_api.retry_on_deadlock
def deliveries_release(ctx, owner, ids, now):
    """Give back claims a stopping manager made and never attempted: due
    again at ``now``."""
    with db_api.writer(ctx) as session:
        session.connection().execute(_DELIVERIES.update().where(
            _DELIVERIES.c.id.in_(ids),
            _DELIVERIES.c.status == PENDING,
            _DELIVERIES.c.claimed_by == owner).values(
            claimed_by=None, claim_token=None, next_attempt_at=now,
            # the claim counted an attempt that was never made
            attempts=_DELIVERIES.c.attempts - 1))
