"""The waiting ``with_retries`` leases, tried again.

Each manager runs a :class:`RetryWorker`.  A pass holds the
``lease_retries`` work lock (``climate.db.work_locks``), so that
passes of several managers run one after the other and leases are granted
in the order :mod:`climate.scheduling.retry_queue` decides; each lease is
tried in a transaction of its own (``LeaseService.grant``) that checks,
under the lease's row lock, that it still waits: a lease is granted once,
whoever tries it.  A manager killed during a pass loses only the
transaction under way (rolled back) and the lock (its connection closes);
another manager's pass takes over.

A pass runs when a counted attempt is due (every ``[leases]
retry_interval`` seconds per lease) and whenever capacity is released
(``LeaseService.released``: a lease ended, was deleted, or gave back what
its failed start held), which every manager hears through a fanout cast.
"""

import datetime
import threading

from oslo_config import cfg
from oslo_log import log as logging

from climate import context as climate_context
from climate import dates
from climate.db import retries as db_retries
from climate.db import work_locks
from climate import exceptions
from climate.manager.workers import base as worker_base
from climate.notifications import lease as lease_notifications
from climate.scheduling import retry_queue
from climate import states

LOG = logging.getLogger(__name__)
CONF = cfg.CONF

_BEHIND = ('an older waiting lease asking for the same was refused: it '
           'goes first')
# the least a worker sleeps between passes when a lease it cannot try yet
# (behind one that blocks the queue) is due already
_MIN_SLEEP = 1.0


class RetryWorker(worker_base.Worker):
    """A manager's thread that tries the waiting leases again: woken when
    a lease is queued due now, or capacity is released; stopped, it ends
    its pass after the lease being tried."""

    name = 'climate-retries'
    failure = 'Pass over the waiting leases failed; retrying'

    def __init__(self, leases):
        """:param leases: the manager's ``LeaseService``."""
        super().__init__()
        self.leases = leases
        self._released = threading.Event()
        self._ctx = climate_context.admin_context()

    def released(self):
        """Capacity was released: try every waiting lease now."""
        self._released.set()
        self.wake()

    def work(self):
        released = self._released.is_set()
        self._released.clear()
        try:
            self.run_pass(self._ctx, released)
        except Exception:
            if released:
                self._released.set()  # for the next pass
            raise
        return False

    def failed(self, exc):
        super().failed(exc)
        return True  # after the pause, not when a lease is due

    def due_in(self):
        return self.seconds_until(
            lambda: db_retries.next_due(self._ctx), CONF.manager.max_sleep,
            floor=_MIN_SLEEP, what='when a waiting lease is due')

    def run_pass(self, ctx, released):
        """One pass over the waiting leases (oldest first, at most
        ``[leases] retry_batch``); returns the ids granted, in order."""
        granted = []
        with work_locks.work_lock(db_retries.LOCK_NAME):
            now = dates.utcnow()
            waiting = db_retries.waiting(ctx, CONF.leases.retry_batch)
            decisions = retry_queue.Pass.over(
                waiting, now, CONF.leases.retry_overtake_limit, released,
                CONF.leases.retry_refusals)
            for lease in waiting:
                if self._stopping.is_set():
                    break
                action, counted = decisions.decide(lease)
                if action == retry_queue.BEHIND:
                    self._refused(ctx, lease, _BEHIND, True)
                elif action == retry_queue.TRY and \
                        self._try(ctx, lease, counted, decisions):
                    decisions.granted(lease)
                    granted.append(lease.id)
        if granted:
            # their starts are due now
            self.leases.wake()
        return granted

    def _refused(self, ctx, lease, reason, counted):
        view = self.leases.not_granted(ctx, lease.id, reason, counted,
                                       dates.utcnow())
        if view is not None and view['status'] == states.EXHAUSTED:
            LOG.info('Lease %s not granted, its retries ran out: %s',
                     lease.id, view['status_reason'])
            self.leases.notifier.send(ctx, lease_notifications.UPDATE,
                                      view)

    def _try(self, ctx, lease, counted, decisions):
        try:
            view = self.leases.grant(ctx, lease.id, dates.utcnow())
        except exceptions.ClimateException as exc:
            if exc.code >= 500:
                raise  # the database or a cloud away: not the lease's fault
            decisions.refused(lease)
            self._refused(ctx, lease, exc.message, counted)
            return False
        if view is None:
            return False  # deleted or granted by another pass meanwhile
        LOG.info('Lease %s granted after %s waiting', lease.id,
                 datetime.timedelta(seconds=int(
                     (dates.utcnow() - lease.created_at).total_seconds())))
        self.leases.notifier.send(ctx, lease_notifications.UPDATE, view)
        return True
