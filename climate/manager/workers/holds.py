"""Expires the temporary holds nobody confirmed (``climate.lease.holds``).

Every manager runs a :class:`HoldWorker`.  A pass expires each ``HELD``
lease whose ``hold_expires_at`` has come, in a transaction of its own
that locks the lease and checks it is still held
(``LeaseService.expire_hold``): of two managers, or of an expiry and a
confirm, one changes the lease and the other finds it changed, on
Galera too (both write the lease's row: one loses at certification and
its retry finds it changed).  So a hold expires once, and never after it
was confirmed.  Between passes a worker sleeps until the next expiry it
knows of, at most ``[leases] hold_poll_interval`` (a hold made on
another manager is found within it); a hold made on its own manager
wakes it.
"""

from oslo_config import cfg
from oslo_log import log as logging
import sqlalchemy as sa

from climate import context as climate_context
from climate import dates
from climate.db import api as db_api
from climate.db import models
from climate.manager import outages
from climate.manager.workers import base as worker_base
from climate import states

LOG = logging.getLogger(__name__)
CONF = cfg.CONF

#: Most holds one pass expires (the next pass comes at once when more are
#: due).
BATCH = 100


def due(ctx, now, limit=BATCH):
    """Ids of the holds expired by ``now``, soonest first."""
    lease = models.Lease.__table__
    with db_api.reader(ctx) as session:
        return [row[0] for row in session.execute(
            sa.select(lease.c.id).where(
                lease.c.status == states.HELD,
                lease.c.hold_expires_at <= now).order_by(
                    lease.c.hold_expires_at, lease.c.id).limit(limit))]


def next_expiry(ctx):
    """When the soonest hold expires, or None when nothing is held."""
    lease = models.Lease.__table__
    with db_api.reader(ctx) as session:
        return session.execute(sa.select(
            sa.func.min(lease.c.hold_expires_at)).where(
                lease.c.status == states.HELD)).scalar()


class HoldWorker(worker_base.Worker):
    """The holds' expiries in one manager."""

    name = 'climate-holds'
    failure = 'Pass over the expired holds failed'

    def __init__(self, leases):
        super().__init__()
        self.leases = leases
        self._ctx = climate_context.admin_context()

    def work(self):
        return len(self.run_pass(self._ctx)) >= BATCH

    def due_in(self):
        return self.seconds_until(
            lambda: next_expiry(self._ctx), CONF.leases.hold_poll_interval,
            what='the next hold expiry')

    def run_pass(self, ctx, now=None):
        """Expire what is due; returns the ids of the holds that this
        pass expired (not those another manager or a confirm got to
        first).  A hold that fails to expire (a plugin's release raised)
        is logged and tried again at the next pass, after the others: it
        comes first in every pass, so failing the pass would keep every
        later hold from expiring.  A lost database fails the pass."""
        now = now or dates.utcnow()
        expired = []
        for lease_id in due(ctx, now):
            if self._stopping.is_set():
                break
            try:
                view = self.leases.expire_hold(ctx, lease_id, now)
            except Exception as exc:
                if outages.is_database_outage(exc):
                    raise
                LOG.exception('Could not expire the hold of lease %s; '
                              'trying again at the next pass', lease_id)
                continue
            if view is not None:
                expired.append(lease_id)
        return expired
