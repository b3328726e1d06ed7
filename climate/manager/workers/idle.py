"""Looks at the started leases for idle ones (``climate.manager.idle``).

With ``[idle] enabled`` every manager runs an :class:`IdleWorker`: every
``[idle] poll_interval`` seconds it asks the plugins whether anything
uses each watched lease's reservations, and warns or ends the idle ones;
each step is a transaction of its own that locks the lease and checks it
again, so of several managers one acts.
"""

from oslo_config import cfg
from oslo_log import log as logging

from climate import context as climate_context
from climate import dates
from climate.manager import outages
from climate.manager.workers import base as worker_base

LOG = logging.getLogger(__name__)
CONF = cfg.CONF


class IdleWorker(worker_base.Worker):
    """Idle reclaim in one manager."""

    name = 'climate-idle'
    failure = 'Pass over the idle leases failed'

    def __init__(self, idle):
        super().__init__()
        self.idle = idle
        self._ctx = climate_context.admin_context()

    def start(self):
        if CONF.idle.enabled:
            super().start()

    def work(self):
        self.run_pass(self._ctx)
        return False

    def due_in(self):
        return CONF.idle.poll_interval

    def run_pass(self, ctx, now=None):
        """One look at every watched lease; returns ``{lease id: what
        was done}`` (a lease a plugin failed to read is logged and looked
        at again next time; a lost database fails the pass)."""
        now = now or dates.utcnow()
        done = {}
        for lease_id in self.idle.watched(ctx):
            if self._stopping.is_set():
                break
            try:
                action = self.idle.check(ctx, lease_id, now)
            except Exception as exc:
                if outages.is_database_outage(exc):
                    raise
                LOG.exception('Could not tell whether lease %s is idle; '
                              'looking again at the next pass', lease_id)
                continue
            if action is not None:
                done[lease_id] = action
        return done
