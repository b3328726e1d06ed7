"""The power planner: powers reservable hosts nobody has booked off and
wakes them before they are needed (``climate.scheduling.power`` decides,
a power backend acts, ``climate.db.power`` keeps the record).

Each pass, under the ``host_power`` work lock (one manager at a time
acts on the hosts' power; a manager that finds it held skips its pass):

1. reads every host, its ``host_power`` record and its bookings of any
   class over the planning horizon (``climate.db.power.read_inputs``);
2. asks the power backend the state of the hosts whose record does not
   say (never seen, ``unknown``), and finishes the wakes under way: a
   ``waking`` host that reads on is recorded on with its boot measured
   (power on to read on), one that is neither on nor heading there is
   powered on again (a crash or a failure stopped the wake half-way),
   and one still booting past its wake lead gets that as its last error;
3. runs the plan and carries out each action through the backend, each
   host on its own: a failure of the switch (``CloudUnavailable``) is
   kept as the host's ``last_error`` and the pass goes on with the
   others; nothing a BMC does ever reaches a lease; before powering a
   host off, it reads what the host draws (``power_watts``: the host is
   free and has no servers, so that is its idle draw) and keeps the
   reading with the power off, for the energy figures;
4. sleeps until the plan next changes by the clock alone
   (``next_wake``), ``[power] plan_interval`` at most.

Every state is written before the backend is called, so that a crash
between the call and the record leaves a state the next pass reads
again rather than a wrong one: ``waking`` (with the booking it is for)
before a power on, ``unknown`` before a power off.  The backends'
actions are idempotent, so the repeated call finishes the job.

Nothing runs unless ``[power] enabled``.
"""

import collections
import datetime
import math

from oslo_config import cfg
from oslo_log import log as logging
from oslo_utils import strutils

from climate import context as climate_context
from climate.db import models
from climate.db import power as db_power
from climate.db import work_locks
from climate import exceptions
from climate.manager.workers import periodic
from climate.plugins.physical_host import power as power_backends
from climate.plugins.physical_host.power import base as power_base
from climate.scheduling import power as plan_power

LOG = logging.getLogger(__name__)
CONF = cfg.CONF

LOCK_NAME = 'host_power'
#: The extra capability an operator sets on a host under work
#: (``PUT /v1/os-hosts/{id}`` with ``{"maintenance": "true"}``): its power
#: is theirs, the planner neither powers it off nor wakes it.
MAINTENANCE = 'maintenance'
#: Seconds between two looks at a host still booting, at most.
BOOT_POLL = 30

#: What one pass did: the plan's actions, the host ids acted on with
#: success, ``{host_id: error}`` of the failures, and when the next
#: pass is due (None: at ``plan_interval``).
Pass = collections.namedtuple('Pass', 'actions done failed next_wake')


def settings_of(conf):
    """The plan's :class:`~climate.scheduling.power.Settings` from
    ``[power]``."""
    opts = conf.power
    return plan_power.Settings(
        enabled=opts.enabled,
        min_off=datetime.timedelta(seconds=opts.min_off),
        wake_margin=datetime.timedelta(seconds=opts.wake_margin),
        default_boot=datetime.timedelta(seconds=opts.default_boot_time),
        spare_awake=opts.spare_awake, spare_share=opts.spare_share)


def horizon(settings, interval, longest_boot):
    """How far ahead bookings are read: a booking further ahead than the
    longest wake lead plus ``min_off`` cannot change the plan, and the
    next pass comes within ``interval`` seconds."""
    boot = settings.default_boot
    if longest_boot is not None:
        boot = max(boot, datetime.timedelta(seconds=longest_boot))
    return (boot + settings.wake_margin + settings.min_off +
            datetime.timedelta(seconds=interval))


def in_maintenance(facts):
    """Whether a host's :data:`MAINTENANCE` capability says it is under
    work (``true``, ``yes``, ``on``, ``1``; anything else is not)."""
    return strutils.bool_from_string(facts.get(MAINTENANCE, False))


def _first_line(exc):
    text = str(exc)
    return text.splitlines()[0] if text else type(exc).__name__


def _usable_watts(watts):
    """Whether a switch's reading can be an idle draw: a finite number
    of watts above nothing (a BMC may answer 0 or garbage for a sensor it
    lacks)."""
    return (isinstance(watts, (int, float)) and
            not isinstance(watts, bool) and math.isfinite(watts) and
            watts > 0)


class PowerPlanner(periodic.PeriodicTask):
    """A periodic pass in its own thread (see the module's docstring)."""

    name = 'climate-power-planner'

    def __init__(self, conf=None, backend=None, clock=None):
        """:param backend: a power backend (default: ``[power] backend``,
            loaded on the first pass).
        :param clock: the time of a pass, naive UTC (default: the
            database's precision, ``climate.db.models.now``)."""
        super().__init__()
        self.conf = conf or CONF
        self._backend = backend
        self.clock = clock or models.now
        self._next_wake = None
        # hosts whose power reading failed and was said: said once, not
        # at every power off until their switch reads again
        self._unread = set()

    @property
    def backend(self):
        if self._backend is None:
            self._backend = power_backends.load(self.conf)
        return self._backend

    def interval(self):
        if not self.conf.power.enabled:
            return 0
        return self.conf.power.plan_interval

    def due_in(self):
        return self.seconds_until(lambda: self._next_wake,
                                  self._interval or
                                  self.conf.power.plan_interval,
                                  what='the next power plan change')

    def run_once(self):
        """One pass (see module); returns its :data:`Pass`, or None when
        the plan is disabled or another manager holds the lock."""
        if not self.conf.power.enabled:
            return None
        with work_locks.work_lock(LOCK_NAME, wait=False) as held:
            if not held:
                return None
            return self._pass()

    # -- one pass ----------------------------------------------------------

    def _pass(self):
        ctx = climate_context.admin_context()
        now = self.clock()
        settings = settings_of(self.conf)
        interval = self.conf.power.plan_interval
        inputs = db_power.read_inputs(
            ctx, now, lambda boot: horizon(settings, interval, boot))
        done, failed = [], {}
        records = {}
        for host_id, host in sorted(inputs.hosts.items()):
            records[host_id] = self._look(ctx, host, settings, done,
                                          failed)
        hosts = [self._as_plan_host(inputs.hosts[h], records[h])
                 for h in sorted(inputs.hosts)]
        actions = plan_power.plan(hosts, inputs.bookings, now, settings)
        for action in actions:
            host = inputs.hosts[action.host_id]
            if action.verb == plan_power.WAKE:
                self._wake(ctx, host, action.need_at, done, failed,
                           late=action.late)
            else:
                self._power_off(ctx, host, self._next_start(
                    inputs.bookings.get(action.host_id, ()), now), done,
                    failed)
        self._next_wake = self._due(
            db_power.records(ctx), hosts, inputs.bookings, now, settings,
            interval)
        if actions or failed:
            LOG.info('Power plan: %d action(s), %d failure(s); next pass '
                     'by %s', len(actions), len(failed),
                     self._next_wake or 'the interval')
        return Pass(actions, done, failed, self._next_wake)

    @staticmethod
    def _as_plan_host(host, record):
        row = host.row
        return plan_power.HostPower(
            host_id=row.id,
            state=record.state if record else plan_power.UNKNOWN,
            boot_seconds=record.boot_seconds if record else None,
            # servers on a host are Nova's to tell: the nova-compute step
            # of the backend refuses to power off a busy host (HostBusy)
            has_servers=False, maintenance=in_maintenance(host.facts),
            disabled=row.disabled,
            reservable=row.reservable, managed=True)

    @staticmethod
    def _next_start(spans, now):
        starts = [start for start, end in spans if start > now]
        return min(starts) if starts else None

    @staticmethod
    def _due(records, hosts, bookings, now, settings, interval):
        due = plan_power.next_wake(hosts, bookings, now, settings)
        # a boot to measure (a switch that cannot be read waits for the
        # interval: looking more often would not bring it back)
        if any(r.state == db_power.WAKING for r in records.values()):
            soon = now + datetime.timedelta(
                seconds=min(interval, BOOT_POLL))
            due = soon if due is None else min(due, soon)
        return due

    def _failed(self, ctx, host, what, exc, failed):
        message = '%s: %s' % (what, _first_line(exc))
        LOG.warning('Power planner: host %s %s', host.row.id, message)
        failed[host.row.id] = message
        return db_power.record_error(ctx, host.row.id, message,
                                     self.clock())

    def _look(self, ctx, host, settings, done, failed):
        """The host's record after reading its switch when the record
        does not tell its state, and finishing a wake under way."""
        record = host.record
        if record is not None and record.state in (db_power.ON,
                                                   db_power.OFF):
            return record
        try:
            found = self.backend.state(host.facts)
        except exceptions.CloudUnavailable as exc:
            return self._failed(ctx, host, 'reading its power state', exc,
                                failed)
        if record is not None and record.state == db_power.WAKING:
            if found.target == db_power.ON:
                return self._still_booting(ctx, host, record, settings)
            return self._wake(ctx, host, record.need_at, done, failed,
                              record=record)
        state = db_power.UNKNOWN
        if found.reached(power_base.ON):
            state = db_power.ON
        elif found.reached(power_base.OFF):
            state = db_power.OFF
        return db_power.set_state(ctx, host.row.id, state, self.clock())

    def _still_booting(self, ctx, host, record, settings):
        """A host heading for on: nothing to ask its switch again, but a
        boot longer than the wake lead (a booking may start late) is
        said as the host's last error."""
        lead = plan_power.wake_lead(self._as_plan_host(host, record),
                                    settings)
        took = self.clock() - record.since
        if took <= lead:
            return record
        message = ('still booting %d s after its power on, longer than '
                   'its wake lead (%d s)' % (took.total_seconds(),
                                             lead.total_seconds()))
        LOG.warning('Power planner: host %s is %s', host.row.id, message)
        return db_power.record_error(ctx, host.row.id, message,
                                     self.clock())

    def _wake(self, ctx, host, need_at, done, failed, record=None,
              late=False):
        """Power the host on (see module for the order of the writes)."""
        host_id = host.row.id
        if record is None or record.state != db_power.WAKING:
            # the clock of the write, not of the pass: an earlier host's
            # action may have taken minutes, and the boot is measured
            # from here
            record = db_power.set_state(ctx, host_id, db_power.WAKING,
                                        self.clock(), need_at=need_at)
        if late:
            LOG.warning('Power planner: host %s is woken for a booking '
                        'at %s that starts before it can be up', host_id,
                        need_at)
        try:
            found = self.backend.power_on(host.facts)
        except exceptions.CloudUnavailable as exc:
            return self._failed(ctx, host, 'powering on', exc, failed)
        done.append(host_id)
        if not found.reached(power_base.ON):
            # still booting: the next pass looks again
            return record
        boot = record.boot_seconds
        if self.backend.acts_in_cloud:
            # nothing boots behind a backend that calls nothing: keep
            # the default rather than measure an instant
            boot = max(0, int((self.clock() - record.since).total_seconds()))
        LOG.info('Power planner: host %s is on (boot %s s)', host_id, boot)
        return db_power.set_state(ctx, host_id, db_power.ON, self.clock(),
                                  boot_seconds=boot)

    def _power_off(self, ctx, host, until, done, failed):
        host_id = host.row.id
        # read before the power off: once off, the host draws nothing
        # worth counting; a reading refused below (servers run on the
        # host, HostBusy) was not of an idle host and is dropped
        reading = self._idle_reading(host)
        db_power.set_state(ctx, host_id, db_power.UNKNOWN, self.clock())
        try:
            found = self.backend.power_off(host.facts, until)
        except power_base.HostBusy as exc:
            # refused before the switch was asked: the host is on
            db_power.set_state(ctx, host_id, db_power.ON, self.clock())
            return self._failed(ctx, host, 'powering off', exc, failed)
        except exceptions.CloudUnavailable as exc:
            return self._failed(ctx, host, 'powering off', exc, failed)
        done.append(host_id)
        if found.reached(power_base.OFF):
            LOG.info('Power planner: host %s is off until %s', host_id,
                     until or 'a booking needs it')
            return db_power.set_state(ctx, host_id, db_power.OFF,
                                      self.clock(), reading=reading)
        return None

    def _idle_reading(self, host):
        """The :data:`~climate.db.power.Reading` of what the host draws
        now, or None: its switch does not measure power, or the reading
        failed (the host's last reading stays).  Never raises: a reading
        is only for the energy figures, never worth a power action."""
        host_id = host.row.id
        try:
            watts = self.backend.power_watts(host.facts)
        except Exception as exc:  # any failure, not only a switch's
            self._reading_failed(host_id, _first_line(exc))
            return None
        if watts is None:
            LOG.debug('Power planner: host %s: its switch measures no '
                      'power', host_id)
            return None
        if not _usable_watts(watts):
            self._reading_failed(host_id, 'not a positive number of '
                                 'watts: %r' % (watts,))
            return None
        self._unread.discard(host_id)
        return db_power.Reading(float(watts), self.clock())

    def _reading_failed(self, host_id, why):
        if host_id in self._unread:
            log = LOG.debug
        else:
            log = LOG.warning
            self._unread.add(host_id)
        log('Power planner: host %s: its power reading failed (%s); the '
            'energy figures keep its last reading or [power] idle_watts',
            host_id, why)
