"""The background worker's loop (``climate.manager.workers``): passes,
wakes, sleeps, failures and stop, with stand-in passes.

Every wait here is bounded (``WAIT``) and only long enough for a thread
to be scheduled; no test asserts how long anything took."""

import datetime
import logging
import threading

from oslo_utils import timeutils

from climate.manager.workers import base as worker_base
from climate.manager.workers import periodic

# the longest a test waits for the worker's thread to get somewhere: far
# beyond a scheduling delay, far below a sleep that was not cut short
WAIT = 10
# a sleep no test may sit through: a pass after it shows a wake or stop
LONG = 600


class Recorder(worker_base.Worker):
    """Logs its passes and sleeps; a pass may be held, or fail."""

    name = 'climate-test-worker'

    def __init__(self, due=LONG):
        super().__init__()
        self.due = due
        self.log = []
        self.passes = 0
        self.fail = set()       # the passes (1, 2...) that raise
        self.again = set()      # the passes that say more is waiting
        self.gate = {}          # pass -> Event the pass waits for
        self.began = {}         # pass -> Event set when the pass begins
        self._changed = threading.Condition()

    def work(self):
        with self._changed:
            self.passes += 1
            n = self.passes
            self.log.append(('pass', n))
            self._changed.notify_all()
        if n in self.began:
            self.began[n].set()
        if n in self.gate:
            assert self.gate[n].wait(WAIT)
        if n in self.fail:
            raise RuntimeError('pass %d failed' % n)
        return n in self.again

    def due_in(self):
        self.log.append(('due', self.passes))
        return self.due

    def wait_for(self, passes, timeout=WAIT):
        """Whether ``passes`` passes began within ``timeout`` seconds."""
        with self._changed:
            return self._changed.wait_for(lambda: self.passes >= passes,
                                          timeout)

    def held(self, n):
        """Pass ``n`` will wait for the Event returned; returns (began,
        release)."""
        self.began[n] = threading.Event()
        self.gate[n] = threading.Event()
        return self.began[n], self.gate[n]


def test_first_pass_runs_at_start_then_sleeps_until_woken():
    worker = Recorder()
    worker.start()
    try:
        assert worker.wait_for(1)
        assert not worker.wait_for(2, timeout=0.2)
        worker.wake()
        assert worker.wait_for(2)
    finally:
        worker.stop(WAIT)
    assert worker.log[:3] == [('pass', 1), ('due', 1), ('pass', 2)]


def test_a_wake_during_a_pass_is_not_lost():
    worker = Recorder()
    began, release = worker.held(1)
    worker.start()
    try:
        assert began.wait(WAIT)
        worker.wake()           # while pass 1 runs
        release.set()
        # without the wake, pass 2 would come after LONG seconds
        assert worker.wait_for(2)
    finally:
        worker.stop(WAIT)
    assert worker.log[:3] == [('pass', 1), ('due', 1), ('pass', 2)]


def test_a_wake_during_the_sleep_cuts_it_short_once():
    worker = Recorder()
    worker.start()
    try:
        assert worker.wait_for(1)
        worker.wake()
        worker.wake()           # two wakes before a pass: one pass
        assert worker.wait_for(2)
        began, release = worker.held(3)
        worker.wake()
        assert began.wait(WAIT)
        release.set()
    finally:
        worker.stop(WAIT)
    assert [e for e in worker.log if e[0] == 'pass'] == [
        ('pass', 1), ('pass', 2), ('pass', 3)]


def test_more_waiting_runs_the_next_pass_at_once():
    worker = Recorder()
    worker.again = {1, 2}
    worker.start()
    try:
        # no wake: passes 2 and 3 run without sleeping for LONG
        assert worker.wait_for(3)
    finally:
        worker.stop(WAIT)
    assert worker.log[:4] == [('pass', 1), ('pass', 2), ('pass', 3),
                              ('due', 3)]


def test_it_sleeps_for_what_due_in_returns():
    class Waits(threading.Event):
        """The wakeup flag, recording each sleep's timeout and returning
        at once (as if the due time came)."""

        def __init__(self):
            super().__init__()
            self.timeouts = []

        def wait(self, timeout=None):
            self.timeouts.append(timeout)
            return super().wait(0)

    worker = Recorder(due=42.5)
    worker._wakeup = Waits()
    worker.start()
    try:
        assert worker.wait_for(3)
    finally:
        worker.stop(WAIT)
    # one sleep between two passes, of due_in's seconds
    assert worker._wakeup.timeouts[:2] == [42.5, 42.5]


def test_nothing_due_later_runs_the_next_pass_without_sleeping():
    worker = Recorder(due=0)
    worker.start()
    try:
        assert worker.wait_for(3)
    finally:
        worker.stop(WAIT)
    assert worker.log[:4] == [('pass', 1), ('due', 1), ('pass', 2),
                              ('due', 2)]


def test_a_failed_pass_is_logged_paused_and_followed_by_the_next(caplog):
    caplog.set_level(logging.ERROR)
    worker = Recorder(due=0)
    worker.failure = 'The test pass failed'
    worker.pause = 0.01
    worker.fail = {1}
    worker.start()
    try:
        assert worker.wait_for(2)
    finally:
        worker.stop(WAIT)
    [record] = [r for r in caplog.records
                if r.getMessage() == 'The test pass failed']
    # in the log of the module that defines the worker, with the traceback
    assert record.name == __name__
    assert record.exc_info[1].args == ('pass 1 failed',)
    # the next pass once due, as after any pass
    assert worker.log[:3] == [('pass', 1), ('due', 1), ('pass', 2)]


def test_a_failure_may_ask_for_the_next_pass_at_once():
    class AtOnce(Recorder):
        def failed(self, exc):
            super().failed(exc)
            return True

    worker = AtOnce()
    worker.pause = 0.01
    worker.fail = {1}
    worker.start()
    try:
        # no wake: pass 2 runs after the pause, not after LONG
        assert worker.wait_for(2)
    finally:
        worker.stop(WAIT)
    assert worker.log[:2] == [('pass', 1), ('pass', 2)]


def test_a_failed_pass_pauses_whatever_wakes_come_until_stopped():
    worker = Recorder(due=0)
    worker.pause = LONG
    worker.fail = {1}
    worker.start()
    assert worker.wait_for(1)
    worker.wake()
    # the pause holds: no second pass while the test looks
    assert not worker.wait_for(2, timeout=0.2)
    worker.stop(WAIT)
    assert not worker._thread.is_alive()
    assert worker.passes == 1


def test_hold_lets_wakes_by_and_ends_at_stop():
    held = threading.Event()

    class Holds(Recorder):
        def work(self):
            super().work()
            held.set()
            self.hold(LONG)
            return True

    worker = Holds()
    worker.start()
    assert held.wait(WAIT)
    worker.wake()
    assert not worker.wait_for(2, timeout=0.2)
    worker.stop(WAIT)
    assert not worker._thread.is_alive()
    # the wake did not end the hold: only the stop did, and no pass ran
    # after it
    assert worker.passes == 1


def test_stop_waits_for_the_pass_under_way_and_runs_no_other():
    worker = Recorder(due=0)
    began, release = worker.held(1)
    worker.start()
    assert began.wait(WAIT)
    stopper = threading.Thread(target=lambda: (
        worker.stop(WAIT), worker.log.append(('stopped',))))
    stopper.start()
    assert worker._stopping.wait(WAIT)
    # stop() waits for the pass
    stopper.join(0.2)
    assert stopper.is_alive()
    release.set()
    stopper.join(WAIT)
    assert not stopper.is_alive() and not worker._thread.is_alive()
    assert worker.log == [('pass', 1), ('stopped',)]


def test_stop_before_start_does_nothing():
    worker = Recorder()
    worker.stop(WAIT)
    assert worker.log == []


def test_the_thread_is_a_named_daemon():
    worker = Recorder()
    worker.start()
    try:
        assert worker.wait_for(1)
        assert worker._thread.name == 'climate-test-worker'
        assert worker._thread.daemon
    finally:
        worker.stop(WAIT)


class Task(periodic.PeriodicTask):
    name = 'climate-test-task'

    def __init__(self, every):
        super().__init__()
        self.every = every
        self.runs = threading.Semaphore(0)

    def interval(self):
        return self.every

    def run_once(self):
        self.runs.release()


def test_a_periodic_task_without_interval_starts_no_thread():
    task = Task(0)
    task.start()
    assert task._thread is None
    task.stop(WAIT)


def test_a_periodic_task_waits_an_interval_before_its_first_pass():
    task = Task(LONG)
    task.start()
    try:
        assert not task.runs.acquire(timeout=0.2)
    finally:
        task.stop(WAIT)
    assert not task._thread.is_alive()
    assert not task.runs.acquire(blocking=False)


def test_a_periodic_task_runs_every_interval():
    task = Task(0.01)
    task.start()
    try:
        for _ in range(3):
            assert task.runs.acquire(timeout=WAIT)
    finally:
        task.stop(WAIT)


# -- seconds_until: a due_in that sleeps until a row is due -----------------

def _in(seconds):
    return timeutils.utcnow() + datetime.timedelta(seconds=seconds)


def test_seconds_until_a_due_time_is_bounded_by_floor_and_ceiling():
    worker = Recorder()
    assert worker.seconds_until(lambda: None, 30) == 30
    assert worker.seconds_until(lambda: _in(3600), 30) == 30
    assert worker.seconds_until(lambda: _in(-5), 30) == 0.0
    assert worker.seconds_until(lambda: _in(-5), 30, floor=1.0) == 1.0
    assert 5 < worker.seconds_until(lambda: _in(10), 30) <= 10


def test_seconds_until_an_unreadable_time_is_the_ceiling_and_logged(caplog):
    def broken():
        raise RuntimeError('database away')

    worker = Recorder()
    with caplog.at_level(logging.ERROR):
        assert worker.seconds_until(broken, 30, what='the next thing') == 30
    [record] = [r for r in caplog.records if 'Cannot read' in r.getMessage()]
    assert record.getMessage() == 'Cannot read the next thing'
    assert record.name == __name__
    assert record.exc_info[1].args == ('database away',)
