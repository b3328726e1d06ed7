"""A manager's periodic work (healing, sweeping trusts) in a thread of its
own, one pass every interval, until the manager stops."""

import threading

from oslo_log import log as logging

LOG = logging.getLogger(__name__)


class PeriodicTask:
    """Subclasses give ``interval`` and ``run_once``."""

    #: Name of the thread, in logs.
    name = 'climate-periodic'

    def __init__(self):
        self._stopping = threading.Event()
        self._thread = None

    def interval(self):
        """Seconds between two passes; 0 or None: the task does not run."""
        raise NotImplementedError

    def run_once(self):
        """One pass (also called directly by tests)."""
        raise NotImplementedError

    def start(self):
        interval = self.interval()
        if not interval:
            return
        self._thread = threading.Thread(target=self._loop, args=(interval,),
                                        daemon=True, name=self.name)
        self._thread.start()

    def stop(self, timeout=30):
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _loop(self, interval):
        while not self._stopping.wait(interval):
            try:
                self.run_once()
            except Exception:
                # the next pass may well succeed (a service back up...)
                LOG.exception('%s pass failed; next one in %s s', self.name,
                              interval)
