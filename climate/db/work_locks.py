"""Named jobs one manager at a time does: the retry passes over waiting
leases (``lease_retries``) and the best-effort hunts (``lease_hunts``).

A work lock is a **committed claim with an expiry** in ``work_locks``
(holder, ``held_until`` on the database's clock), not a row lock held by
an open connection: a row lock is local to the node that takes it on a
multi-writer Galera cluster, so two managers on two nodes would both
hold it.  Taking the lock is one short transaction that writes the row
only where it is free, expired or already ours; two takers on two nodes
write the same row, and certification (a row lock on a single server)
lets one of them through.  The holder renews the claim every third of
its time to live while the block runs and clears it at the end; a
manager that dies leaves a claim that expires ``ttl`` seconds later.

The lock keeps the managers from doing the same job twice, nothing
more: what the job writes (a grant, a hunt's step) conflicts on the
lease's own rows anyway, so a claim that expired under a stalled holder
costs work done twice, never a booking past capacity.

On SQLite (one process, the embedded default) a thread lock per name
does the same.
"""

import collections
import contextlib
import datetime
import os
import random
import socket
import threading
import time
import uuid

from oslo_db import exception as db_exc
from oslo_log import log as logging
import sqlalchemy as sa

from climate.db import api as db_api
from climate.db import managers as db_managers
from climate.db import models

LOG = logging.getLogger(__name__)

#: Seconds a claim lasts unless renewed.
TTL = 60.0
#: Seconds between two attempts of a taker that waits (with jitter).
POLL = 0.5

_TABLE = models.WorkLock.__table__
# SQLite has no server: one process's managers share these instead
_LOCAL = collections.defaultdict(threading.Lock)


def _holder():
    return '%s:%d:%s' % (socket.gethostname()[:200], os.getpid(),
                         uuid.uuid4().hex[:12])


def take(engine, name, holder, ttl):
    """Claim ``name`` for ``holder`` if free, expired or ours: True if
    claimed.  A concurrent taker's write (certification failure,
    deadlock, duplicate first row) is a lost race, not an error."""
    try:
        with engine.begin() as conn:
            now = db_managers.clock(conn)
            until = now + datetime.timedelta(seconds=ttl)
            if conn.execute(sa.update(_TABLE).where(
                    _TABLE.c.name == name,
                    sa.or_(_TABLE.c.holder.is_(None),
                           _TABLE.c.held_until < now,
                           _TABLE.c.holder == holder)).values(
                    holder=holder, held_until=until)).rowcount:
                return True
            if conn.execute(sa.select(_TABLE.c.name).where(
                    _TABLE.c.name == name)).first() is not None:
                return False
            # a database stamped without its row: made once
            conn.execute(_TABLE.insert().values(
                name=name, holder=holder, held_until=until))
            return True
    except (db_exc.DBDeadlock, db_exc.DBDuplicateEntry):
        return False


def renew(engine, name, holder, ttl):
    """Push the claim's expiry on; False if it is not ours any more."""
    with engine.begin() as conn:
        now = db_managers.clock(conn)
        return bool(conn.execute(sa.update(_TABLE).where(
            _TABLE.c.name == name, _TABLE.c.holder == holder).values(
            held_until=now + datetime.timedelta(seconds=ttl))).rowcount)


def give_back(engine, name, holder):
    with engine.begin() as conn:
        conn.execute(sa.update(_TABLE).where(
            _TABLE.c.name == name, _TABLE.c.holder == holder).values(
            holder=None, held_until=None))


class _Renewer(threading.Thread):
    def __init__(self, engine, name, holder, ttl):
        super().__init__(name='work-lock-%s' % name, daemon=True)
        self.engine, self.lock_name = engine, name
        self.holder, self.ttl = holder, ttl
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.wait(self.ttl / 3):
            try:
                if not renew(self.engine, self.lock_name, self.holder,
                             self.ttl):
                    LOG.warning('Work lock %s expired while held (the '
                                'holder stalled for over %g s); another '
                                'manager may take the job', self.lock_name,
                                self.ttl)
                    return
            except Exception as exc:  # an outage: try again next time
                LOG.warning('Work lock %s not renewed: %s', self.lock_name,
                            str(exc).splitlines()[0] if str(exc) else exc)


@contextlib.contextmanager
def _local(name, wait):
    lock = _LOCAL[name]
    if not lock.acquire(blocking=wait):
        yield False
        return
    try:
        yield True
    finally:
        lock.release()


@contextlib.contextmanager
def work_lock(name, wait=True, ttl=None, poll=None):
    """Hold the work lock ``name`` while the block runs; yields whether
    it is held.  With ``wait`` False a lock another manager holds is not
    waited for: the block runs without it, to do nothing."""
    engine = db_api.get_engine()
    if engine.dialect.name == 'sqlite':
        with _local(name, wait) as held:
            yield held
        return
    ttl = TTL if ttl is None else ttl
    poll = POLL if poll is None else poll
    holder = _holder()
    while not take(engine, name, holder, ttl):
        if not wait:
            yield False
            return
        time.sleep(poll * random.uniform(0.5, 1.5))
    renewer = _Renewer(engine, name, holder, ttl)
    renewer.start()
    try:
        yield True
    finally:
        renewer.stopping.set()
        renewer.join()
        try:
            give_back(engine, name, holder)
        except Exception as exc:  # an outage: the claim expires instead
            LOG.warning('Work lock %s not given back (it expires in %g s): '
                        '%s', name, ttl, str(exc).splitlines()[0]
                        if str(exc) else exc)
