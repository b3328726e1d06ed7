"""Change counters of the inventories, per kind of provider.

``inventory_versions`` holds one row per kind (``volume_pool``, ...):
every change to that kind's inventory (a provider added, removed, its
capacity or capabilities changed) calls :func:`bump` in its own
transaction, so a manager may keep what it computed from the inventory
(the providers a filter matches, their capacities) while
:func:`version` reads the same number (a primary-key read).  The compute
hosts keep their own counter (``climate.db.hosts.inventory_version``).
"""

import time

from oslo_db import exception as db_exc
import sqlalchemy as sa

from climate.db import api as db_api
from climate.db import models

Version = models.InventoryVersion


def version(ctx, kind):
    """The change counter of ``kind``'s inventory (0 before its first
    change)."""
    with db_api.reader(ctx) as session:
        return version_in(session, kind)


def version_in(session, kind):
    """:func:`version`, read in the caller's transaction."""
    return session.execute(sa.select(Version.version).where(
        Version.kind == kind)).scalar() or 0


def bump(session, kind):
    """Count a change of ``kind``'s inventory, in the changing
    transaction.

    The first change writes the row; one written again after it went
    missing (a table emptied by hand) starts from the clock (in
    microseconds), not from 1, so that no value a manager cached before
    comes back.
    """
    update = sa.update(Version).where(Version.kind == kind).values(
        version=Version.version + 1)
    if session.execute(update).rowcount:
        return
    try:
        with session.begin_nested():
            session.execute(sa.insert(Version).values(
                kind=kind, version=int(time.time() * 1e6)))
    except db_exc.DBDuplicateEntry:  # another writer wrote it first
        session.execute(update)
