"""Idempotency-Keys of lease creates: SQL.

A key row is written in the transaction that writes its lease (see
``climate.manager.idempotency``), first, so that a concurrent create with
the same key waits on the primary key and then fails with
:class:`KeyTaken`, never making a second lease.
"""

import sqlalchemy as sa
from oslo_db import exception as db_exc

from climate.db import api as db_api
from climate.db import models

_KEYS = models.IdempotencyKey.__table__
_INSERT = _KEYS.insert()


class KeyTaken(Exception):
    """Another create wrote the same key first (its transaction committed
    while this one waited on the key's row)."""


def get(ctx, project_id, key):
    """The key's row (expired or not) as a mapping, or None."""
    with db_api.reader(ctx) as session:
        row = session.execute(sa.select(_KEYS).where(
            _KEYS.c.project_id == project_id,
            _KEYS.c.idempotency_key == key)).one_or_none()
    return None if row is None else dict(row._mapping)


def insert(ctx, values, replace_expired_before=None):
    """Write a key row in the caller's transaction.

    :param replace_expired_before: delete the key's row first if it
        expired before this time (it is not purged yet).
    :raises KeyTaken: the key is in use (a concurrent create committed it).
    """
    with db_api.writer(ctx) as session:
        conn = session.connection()
        if replace_expired_before is not None:
            conn.execute(_KEYS.delete().where(
                _KEYS.c.project_id == values['project_id'],
                _KEYS.c.idempotency_key == values['idempotency_key'],
                _KEYS.c.expires_at <= replace_expired_before))
        try:
            conn.execute(_INSERT, values)
        except db_exc.DBDuplicateEntry:
            raise KeyTaken(values['idempotency_key'])


def purge(ctx, now, limit=1000):
    """Delete up to ``limit`` keys expired at ``now``; returns how many."""
    with db_api.writer(ctx) as session:
        conn = session.connection()
        expired = conn.execute(sa.select(
            _KEYS.c.project_id, _KEYS.c.idempotency_key).where(
            _KEYS.c.expires_at <= now).order_by(
            _KEYS.c.expires_at).limit(limit)).all()
        if expired:
            conn.execute(_KEYS.delete().where(
                sa.tuple_(_KEYS.c.project_id, _KEYS.c.idempotency_key).in_(
                    [tuple(row) for row in expired]),
                _KEYS.c.expires_at <= now))
        return len(expired)
