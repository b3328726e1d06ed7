"""A manager's liveness heartbeat, and the takeover of dead managers'
claims.

Every ``[manager] heartbeat_interval`` seconds, in a thread of its own, a
manager stamps its row in ``managers`` with the database's time, then
looks for managers whose stamp is older than ``heartbeat_timeout``: it
releases their claims and tells the engines, which take those events over
at once (``climate.db.managers`` says why this keeps every event run
exactly once).  The same read says when the oldest other stamp will be too
old, and a sweep alone runs then, between two stamps.  After ``kill -9`` a
manager's events thus run elsewhere ``heartbeat_timeout`` after its last
stamp (between ``heartbeat_timeout - heartbeat_interval`` and
``heartbeat_timeout`` after its death, plus the time to claim and run
them) instead of the whole claim TTL, which stays as the last resort
(claims of a manager that never wrote a heartbeat, e.g. during a rolling
upgrade).

A manager declares others dead only once its own stamps have gone
through for ``heartbeat_timeout`` seconds in a row (by its own monotonic
clock): after an outage of the database, every stamp is old, and the
first manager back would otherwise declare all the others dead before
they could stamp again.
"""

import datetime
import time

from oslo_config import cfg
from oslo_db import exception as db_exc
from oslo_log import log as logging

from climate import context as climate_context
from climate import dates
from climate.db import managers as db_managers
from climate.manager.workers import periodic

LOG = logging.getLogger(__name__)
CONF = cfg.CONF

# A sweep timed for a stamp getting too old runs this much later, so that
# the stamp is too old by then (the database's clock and this manager's
# monotonic one do not tick in step to the microsecond).
_SWEEP_MARGIN = 0.02


class Heartbeat(periodic.PeriodicTask):
    """Stamps ``owner``'s row and sweeps dead managers' claims.

    :param on_takeover: called (no argument) after claims of dead managers
        were released, to wake the engines that will claim them.
    """

    name = 'climate-heartbeat'

    def __init__(self, owner, on_takeover=None, conf=None,
                 clock=time.monotonic):
        super().__init__()
        self.owner = owner
        self.conf = conf or CONF
        self.on_takeover = on_takeover
        self._clock = clock
        # monotonic times: the last stamp that went through, and the first
        # of the current unbroken run of them
        self._last_beat = None
        self._alive_since = None
        # monotonic times of the next stamp, and of the next sweep between
        # two stamps, if any
        self._next_beat = None
        self._next_sweep = None
        self.started = False

    def interval(self):
        return self.conf.manager.heartbeat_interval

    def timeout(self):
        """Seconds without a stamp after which a manager is dead."""
        return self.conf.manager.heartbeat_timeout

    def start(self):
        """Write this manager's row, then stamp it in the background.

        A database that cannot be reached now does not stop the manager:
        the next passes write the row once it can.
        """
        if self.timeout() <= self.interval():
            LOG.warning('[manager] heartbeat_timeout (%s s) should be '
                        'several heartbeat_interval (%s s): managers will '
                        'be declared dead between two of their heartbeats',
                        self.timeout(), self.interval())
        self.started = True
        try:
            self.beat()
        except Exception:
            LOG.exception('Cannot write the heartbeat of manager %s yet',
                          self.owner)
        self._next_beat = self._clock() + self.interval()
        super().start()

    def stop(self, timeout=30):
        """Stop stamping; release this manager's remaining claims and
        delete its row, so that nobody waits for them."""
        super().stop(timeout)
        if not self.started:
            return 0
        self.started = False
        try:
            released = db_managers.unregister(
                climate_context.admin_context(), self.owner,
                dates.utcnow())
        except Exception:
            LOG.exception('Cannot remove the heartbeat of manager %s; '
                          'others will declare it dead in %s s',
                          self.owner, self.timeout())
            return 0
        if released:
            LOG.info('Manager %s released %d claim(s) as it stopped',
                     self.owner, released)
            self._takeover()
        return released

    def alive(self):
        """Whether this manager's last stamp is recent enough that the
        others still count it alive (by its own monotonic clock).  An
        engine that is not should not claim: its claims would be
        released as soon as they are made."""
        if not self.started:
            # not run as a service (tests calling the engine directly)
            return True
        last = self._last_beat
        return last is not None and self._clock() - last < self.timeout()

    def beat(self):
        """Stamp this manager's row."""
        began = self._clock()
        _now, registered = db_managers.beat(
            climate_context.admin_context(), self.owner)
        if not registered and self._last_beat is not None:
            LOG.warning('Manager %s was declared dead by another manager '
                        '(no heartbeat for over %s s): its claims were '
                        'released, events it was running will be given up '
                        'when they try to commit; joining again',
                        self.owner, self.timeout())
        if (self._last_beat is None or
                began - self._last_beat >= self.timeout()):
            # a new unbroken run of stamps starts
            self._alive_since = began
        self._last_beat = began

    def sweep(self):
        """Release the claims of the managers dead now (by the database's
        clock), if this manager has been alive for a whole
        ``heartbeat_timeout``; returns ``{manager: claims released}``.

        Also sets when the next sweep should run to catch the oldest
        other manager the moment its stamp gets too old, rather than at
        the next heartbeat (up to ``heartbeat_interval`` later).
        """
        self._next_sweep = None
        if (self._alive_since is None or
                self._clock() - self._alive_since < self.timeout()):
            return {}
        timeout = datetime.timedelta(seconds=self.timeout())
        ctx = climate_context.admin_context()
        now, oldest = db_managers.oldest_heartbeat(ctx, self.owner)
        if oldest is None:
            return {}
        stale_in = (oldest + timeout - now).total_seconds()
        if stale_in >= 0:
            # a stamp exactly ``timeout`` old is not dead yet
            self._next_sweep = self._clock() + stale_in + _SWEEP_MARGIN
            return {}
        released = db_managers.release_dead(ctx, timeout, dates.utcnow(),
                                            now)
        for name, count in released.items():
            LOG.warning('Manager %s has sent no heartbeat for over %s s: '
                        'declared dead, %d of its claims released',
                        name, self.timeout(), count)
        if any(released.values()):
            self._takeover()
        return released

    def run_once(self):
        """One pass: stamp, then sweep."""
        self.beat()
        return self.sweep()

    def work(self):
        # a stamp every interval; between two, a sweep alone when another
        # manager's stamp is about to be too old
        if self._clock() >= self._next_beat:
            self._next_beat = self._clock() + self._interval
            self.run_once()
        else:
            self.sweep()
        return False

    def due_in(self):
        wake = self._next_beat
        if self._next_sweep is not None:
            wake = min(wake, self._next_sweep)
        return wake - self._clock()

    def failed(self, exc):
        self._next_sweep = None
        if isinstance(exc, db_exc.DBConnectionError):
            # an outage: one line a second, not a traceback
            LOG.warning('Heartbeat of manager %s failed, the database '
                        'is unreachable (%s); next one in %s s',
                        self.owner, exc, self._interval)
        else:
            # the next pass may well succeed
            LOG.exception('Heartbeat of manager %s failed; next one '
                          'in %s s', self.owner, self._interval)
        return False

    def _takeover(self):
        if self.on_takeover is not None:
            try:
                self.on_takeover()
            except Exception:
                LOG.exception('Cannot wake the engines')
