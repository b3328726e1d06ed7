"""A manager's background worker: a thread of its own that runs one pass
after another until the manager stops, sleeping between two passes until
the next is due or something wakes it.

A subclass gives :meth:`Worker.work` (one pass) and :meth:`Worker.due_in`
(how long until the next); the base owns the thread, ``start``, ``stop``
and ``wake``, and what a failed pass does.  A wake is never lost: the
flag is cleared before a pass, not after it, so a wake that comes while a
pass runs cuts the following sleep short.
"""

import threading

from oslo_log import log as logging
from oslo_utils import timeutils


class Worker:
    """Runs :meth:`work` in a thread named :attr:`name`, a daemon (a
    manager that exits does not wait for it)."""

    #: Name of the thread, in logs.
    name = 'climate-worker'
    #: What the log says when a pass fails.
    failure = 'Pass failed'
    #: Seconds a failed pass holds the loop back before it goes on; wakes
    #: do not cut it short (they would repeat a failing pass as often as
    #: they come).
    pause = 1.0
    #: Whether the first pass waits for :meth:`due_in` too, rather than
    #: running as the worker starts.
    wait_first = False

    def __init__(self):
        self._wakeup = threading.Event()
        self._stopping = threading.Event()
        self._thread = None

    def work(self):
        """One pass; returns whether more is waiting already (the next
        pass then runs at once, else after :meth:`due_in`)."""
        raise NotImplementedError

    def due_in(self):
        """Seconds until the next pass is due (0 or less: at once)."""
        raise NotImplementedError

    def seconds_until(self, read_next, ceiling, floor=0.0,
                      what='the next due time'):
        """Seconds until the time ``read_next()`` gives (None: nothing
        due), at least ``floor``, at most ``ceiling``; ``ceiling`` when it
        cannot be read (logged as ``Cannot read <what>``): a
        :meth:`due_in` that sleeps until a row is due."""
        try:
            nxt = read_next()
        except Exception:
            logging.getLogger(type(self).__module__).exception(
                'Cannot read %s', what)
            return ceiling
        if nxt is None:
            return ceiling
        # not climate.dates.utcnow(): truncated to the second, it would
        # wake the worker up to a second late
        wait = (nxt - timeutils.utcnow()).total_seconds()
        return max(floor, min(ceiling, wait))

    def failed(self, exc):
        """:meth:`work` raised ``exc`` (called in its ``except`` block):
        log it and pause; returns whether the next pass runs at once
        (else after :meth:`due_in`)."""
        # in the log of the module that defines the worker, as before the
        # loop was shared
        logging.getLogger(type(self).__module__).exception(self.failure)
        self.hold(self.pause)
        return False

    def start(self):
        """Start the loop in a thread of its own."""
        self._thread = threading.Thread(target=self._loop, daemon=True,
                                        name=self.name)
        self._thread.start()

    def stop(self, timeout=30):
        """Stop after the pass under way, if any, waiting for it at most
        ``timeout`` seconds."""
        self._stopping.set()
        self._wakeup.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def wake(self):
        """Run a pass now rather than when it is due (right after the one
        under way, if any)."""
        self._wakeup.set()

    def hold(self, seconds):
        """Wait ``seconds`` or until stopped, whatever wakes come."""
        if seconds > 0:
            self._stopping.wait(seconds)

    def _loop(self):
        if self.wait_first:
            self._sleep()
        while not self._stopping.is_set():
            self._wakeup.clear()
            try:
                again = self.work()
            except Exception as exc:
                again = self.failed(exc)
            if not again:
                self._sleep()

    def _sleep(self):
        if self._stopping.is_set():
            return
        timeout = self.due_in()
        if timeout > 0:
            self._wakeup.wait(timeout)
