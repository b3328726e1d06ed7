"""A manager's periodic work (healing, sweeping trusts) in a thread of its
own, one pass every interval, until the manager stops."""

from oslo_log import log as logging

from climate.manager.workers import base as worker_base

LOG = logging.getLogger(__name__)


class PeriodicTask(worker_base.Worker):
    """Subclasses give ``interval`` and ``run_once``."""

    name = 'climate-periodic'
    # the first pass one interval after the start
    wait_first = True

    def __init__(self):
        super().__init__()
        self._interval = None

    def interval(self):
        """Seconds between two passes; 0 or None: the task does not run."""
        raise NotImplementedError

    def run_once(self):
        """One pass (also called directly by tests)."""
        raise NotImplementedError

    def start(self):
        # read once: the task keeps the pace it started with
        self._interval = self.interval()
        if not self._interval:
            return
        super().start()

    def work(self):
        self.run_once()
        return False

    def due_in(self):
        return self._interval

    def failed(self, exc):
        # no pause but the interval: the next pass may well succeed (a
        # service back up...)
        LOG.exception('%s pass failed; next one in %s s', self.name,
                      self._interval)
        return False
