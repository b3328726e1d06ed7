"""When to power reservable hosts off and wake them: the power plan, no I/O.

Power follows the ledger (decision 8 of the design): the bookings say
when every reservable host is next needed, so a host nobody needs for a
while can be off meanwhile, and be on again when its next booking starts.
Everything here works on plain values (a host's power state and flags,
its bookings as half-open ``(start, end)`` intervals of naive UTC
datetimes) and is deterministic; the manager feeds it and hands the
actions to a power backend.

**Wake lead.**  The time a host takes to come back, plus a margin: its
measured boot time (``Settings.default_boot`` until it is measured) plus
``Settings.wake_margin``.  A host is woken one wake lead before its next
booking starts, so the booking finds it on whenever the boot takes no
longer than the wake lead.

**The rules** (:func:`plan`), for the hosts Climate manages the power of
(``managed``); a host in maintenance is never acted on (its power is the
operator's while they work on it):

1. *Wake for a booking.*  A host that is off (or whose state is unknown:
   powering on a host that is on is harmless, starting a lease on a host
   that is off is not) is woken when its next booking starts within its
   wake lead, or when it is inside a booking.  Run on time, that is at
   ``next_start - wake_lead``; a booking made less than a wake lead ahead
   wakes the host at once and the action says it will be late
   (:attr:`Action.late`).
2. *Power off.*  A host that is on is powered off when nothing forbids it
   (:func:`protection`: it is managed, reservable, enabled, not in
   maintenance, has no servers and is inside no booking) and its next
   booking, if any, is at least ``wake_lead + min_off`` away: it would
   stay off ``min_off`` at least before it has to wake, so short gaps,
   whose boot would cost more than the rest saves, are left alone.
3. *Spares.*  Of the free hosts (allocatable -- reservable, enabled, not
   in maintenance, without servers -- and inside no booking), ``target =
   max(spare_awake, ceil(spare_share * free))`` are kept awake for leases
   that start now.  Spares are counted among the awake free hosts free
   for at least ``wake_lead + min_off`` (the ones rule 2 would power off;
   a host booked again soon stays on anyway but takes only short leases).
   The plan keeps the spares it needs from the hosts it would power off,
   and wakes sleeping ones when too few are awake, in one order: the
   longest free stretch first (no next booking at all first), then the
   lowest id.  Every awake hour costs the same idle power, so the spares
   should be the hosts that can take the longest lease that starts now.
4. *Disabled* (``Settings.enabled`` False, the default): nothing is
   powered off and no spare is woken; rule 1 still wakes a host found
   off with a booking due, so turning the plan off never makes a lease
   start late.

:func:`next_wake` says when the plan's answer next changes by the clock
alone; the caller runs it again then, and whenever a booking or a
host's power state changes.  :func:`tally` turns a history of intervals
off into host-hours off and kWh saved against always-on.
"""

import bisect
import collections
import datetime
import functools
import math
import operator

ON = 'on'
OFF = 'off'
#: Powered on, not yet up: counts as awake for the spares (it will be on
#: within its boot time), never powered off (it is booting).
WAKING = 'waking'
#: The backend could not tell: never powered off, never counted as awake.
UNKNOWN = 'unknown'
STATES = (ON, OFF, WAKING, UNKNOWN)

POWER_OFF = 'power_off'
WAKE = 'wake'

#: Why a wake or a power-off is due.
FOR_BOOKING = 'booking'
FOR_SPARE = 'spare'
FREE = 'free'

#: A host as the plan sees it.  ``boot_seconds``: its measured boot time,
#: None until measured.  ``managed``: Climate may act on its power (a
#: power backend is configured for it).
HostPower = collections.namedtuple(
    'HostPower',
    'host_id state boot_seconds has_servers maintenance disabled '
    'reservable managed',
    defaults=(None, False, False, False, True, True))


class Settings(collections.namedtuple(
        'Settings', 'enabled min_off wake_margin default_boot spare_awake '
        'spare_share',
        defaults=(False, datetime.timedelta(hours=2),
                  datetime.timedelta(minutes=5),
                  datetime.timedelta(minutes=10), 2, 0.05))):
    """The plan's settings (the ``[power]`` options); durations are
    timedeltas."""

    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls, *args, **kwargs)
        # a zero min_off would power a host off at the very instant it
        # is due to wake, and the plan would never run again to wake it
        if self.min_off <= datetime.timedelta(0):
            raise ValueError('min_off must be positive')
        if (self.wake_margin < datetime.timedelta(0) or
                self.default_boot < datetime.timedelta(0)):
            raise ValueError('wake_margin and default_boot must not be '
                             'negative')
        if self.spare_awake < 0 or not 0.0 <= self.spare_share <= 1.0:
            raise ValueError('spare_awake must not be negative and '
                             'spare_share must be within 0..1')
        return self


class Action(collections.namedtuple(
        'Action', 'host_id verb reason need_at ready_at',
        defaults=(None, None))):
    """Power ``host_id`` off or wake it, now.  For a wake: ``need_at``,
    the start of the booking it is for (None for a spare), and
    ``ready_at``, when the host should be up (now plus its wake lead)."""

    __slots__ = ()

    @property
    def late(self):
        """Whether the host cannot be up by the booking's start: the
        booking was made, or found the host off, less than a wake lead
        ahead."""
        return (self.verb == WAKE and self.need_at is not None and
                self.ready_at > self.need_at)


def wake_lead(host, settings):
    """How long before it is needed a host is woken: its boot time
    (measured, else the default) plus the margin."""
    return _lead(host.boot_seconds, settings.default_boot,
                 settings.wake_margin)


def default_lead(default_boot, wake_margin):
    """The wake lead of a host whose boot time was never measured (the
    allocator's look ahead: could a host asleep now be up in time)."""
    return _lead(None, default_boot, wake_margin)


# the plan asks it of every host at every run: remembered, as
# constructing timedeltas was most of a run's time
@functools.lru_cache(maxsize=4096)
def _lead(boot_seconds, default_boot, wake_margin):
    boot = (default_boot if boot_seconds is None
            else datetime.timedelta(seconds=boot_seconds))
    return boot + wake_margin


def allocatable(host):
    """Whether a lease may take the host: reservable, enabled, not in
    maintenance and without servers."""
    return (host.reservable and not host.disabled and not host.maintenance
            and not host.has_servers)


def protection(host, in_booking):
    """Why the host may not be powered off (a short phrase), or None."""
    if not host.managed:
        return 'not managed'
    if host.maintenance:
        return 'in maintenance'
    if host.disabled:
        return 'disabled'
    if not host.reservable:
        return 'not reservable'
    if host.has_servers:
        return 'has servers'
    if in_booking:
        return 'in a reservation'
    return None


def asleep(hosts):
    """Ids of the hosts not known to be on: what
    :func:`climate.scheduling.hosts.choose` puts after awake hosts."""
    return frozenset(h.host_id for h in hosts if h.state != ON)


def ready_at(hosts, now, settings):
    """When a lease that starts ``now`` on ``hosts`` has them all up:
    ``now`` when all are on, else the latest of the others' ``now +
    wake lead`` (a host already booting counts as just woken: the plan
    does not know when its boot began)."""
    return max([now] + [now + wake_lead(h, settings) for h in hosts
                        if h.state != ON])


#: What the plan knows of one host at ``now``: the start of the booking
#: it is inside (None: free now) and of its next one (None: none).
_Look = collections.namedtuple('_Look', 'host current next_start lead')


def _looks(hosts, bookings, now, settings):
    """A :data:`_Look` per host, by host id (one loop: the plan runs over
    every host at every change)."""
    looks = []
    for host in sorted(hosts, key=operator.attrgetter('host_id')):
        current = next_start = None
        for start, end in bookings.get(host.host_id, ()):
            if end <= now or end <= start:
                continue
            if start <= now:
                if current is None or start < current:
                    current = start
            elif next_start is None or start < next_start:
                next_start = start
        looks.append(_Look(host, current, next_start,
                           wake_lead(host, settings)))
    return looks


def _long_free(look, now, settings):
    """Free long enough to be worth powering off."""
    return (look.next_start is None or
            look.next_start - now >= look.lead + settings.min_off)


def _spare_rank(look, now):
    """Longest free stretch first, none booked first of all; then id."""
    if look.next_start is None:
        return (0, 0.0, look.host.host_id)
    return (1, -(look.next_start - now).total_seconds(), look.host.host_id)


def spare_target(free_hosts, settings):
    """How many free hosts to keep awake: the count, or the share of the
    free hosts rounded up, whichever is more."""
    # less a hair: 0.1 * 30 is 3.0000000000000004 in floating point,
    # which must keep 3 hosts awake, not 4
    return max(settings.spare_awake,
               int(math.ceil(settings.spare_share * free_hosts - 1e-9)))


def plan(hosts, bookings, now, settings):
    """The power actions due at ``now`` (see the rules above).

    :param hosts: :class:`HostPower` values.
    :param bookings: ``{host_id: [(start, end), ...]}``; hosts absent
        have none.
    :returns: :class:`Action` values, wakes for bookings first, then
        power-offs, then spare wakes, each by host id.
    """
    looks = _looks(hosts, bookings, now, settings)
    actions = []
    for look in looks:
        host = look.host
        if (not host.managed or host.maintenance or
                host.state not in (OFF, UNKNOWN)):
            continue
        need = look.current
        if need is None and look.next_start is not None and \
                look.next_start - look.lead <= now:
            need = look.next_start
        if need is not None:
            actions.append(Action(host.host_id, WAKE, FOR_BOOKING, need,
                                  now + look.lead))
    if not settings.enabled:
        return actions

    free = [lk for lk in looks
            if allocatable(lk.host) and lk.current is None]
    target = spare_target(len(free), settings)
    awake = [lk for lk in free if lk.host.state in (ON, WAKING) and
             _long_free(lk, now, settings)]
    may_go = sorted((lk for lk in awake
                     if lk.host.state == ON and
                     protection(lk.host, False) is None),
                    key=lambda lk: _spare_rank(lk, now))
    # the awake hosts the plan cannot power off count as spares first
    keep = max(0, target - (len(awake) - len(may_go)))
    actions.extend(Action(lk.host.host_id, POWER_OFF, FREE)
                   for lk in sorted(may_go[keep:],
                                    key=lambda lk: lk.host.host_id))
    short = target - len(awake)
    if short > 0:
        sleeping = sorted((lk for lk in free
                           if lk.host.managed and lk.host.state == OFF and
                           _long_free(lk, now, settings)),
                          key=lambda lk: _spare_rank(lk, now))
        actions.extend(Action(lk.host.host_id, WAKE, FOR_SPARE, None,
                              now + lk.lead)
                       for lk in sorted(sleeping[:short],
                                        key=lambda lk: lk.host.host_id))
    return actions


def next_wake(hosts, bookings, now, settings):
    """The first instant after ``now`` at which :func:`plan` may answer
    differently with nothing else changed (a booking starts or ends, a
    host's wake time or the end of its long free stretch comes), or None.
    """
    soonest = datetime.datetime.max
    for host in hosts:
        spans = bookings.get(host.host_id)
        if not spans:
            continue
        lead = wake_lead(host, settings)
        ahead = lead + settings.min_off
        for start, end in spans:
            # the earliest of a booking's instants is start - ahead
            if end <= now or end <= start or start - ahead >= soonest:
                continue
            for when in (start - ahead, start - lead, start, end):
                if now < when < soonest:
                    soonest = when
                    break
    return None if soonest == datetime.datetime.max else soonest


#: Host-hours off and the energy they saved against always-on, in kWh.
Tally = collections.namedtuple('Tally', 'host_hours_off kwh_saved')


def _seconds_within(intervals, since, until):
    """Seconds of the union of ``intervals`` inside ``[since, until)``."""
    total = 0.0
    for start, end in _union(intervals):
        start, end = max(start, since), min(end, until)
        if end > start:
            total += (end - start).total_seconds()
    return total


def tally(off, since, until, idle_watts, off_watts=0.0):
    """What powering off saved over ``[since, until)``.

    :param off: ``{host_id: [(start, end), ...]}``, when each host was
        off (a host booting is on: it draws power).
    :param idle_watts: what a host draws on and idle, one figure or
        ``{host_id: watts}``.
    :param off_watts: what a host still draws off (its BMC).
    """
    hours = kwh = 0.0
    for host_id, intervals in off.items():
        host_hours = _seconds_within(intervals, since, until) / 3600.0
        watts = (idle_watts[host_id] if isinstance(idle_watts, dict)
                 else idle_watts)
        hours += host_hours
        kwh += host_hours * (watts - off_watts) / 1000.0
    return Tally(hours, kwh)


def tally_steps(off, windows, idle_watts, off_watts=0.0):
    """:func:`tally` of each window of ``windows`` (``(since, until)``
    pairs in order, none overlapping the next), in one walk over the
    intervals: each off interval is cut only into the windows it
    overlaps, where a tally per window reads every interval once per
    window (a month by the hour at 100,000 hosts: 72 million steps)."""
    starts = [since for since, _until in windows]
    seconds = [[0.0, 0.0] for _window in windows]  # [all, weighed]
    for host_id, intervals in off.items():
        watts = (idle_watts[host_id] if isinstance(idle_watts, dict)
                 else idle_watts)
        for start, end in _union(intervals):
            index = max(0, bisect.bisect_right(starts, start) - 1)
            while index < len(windows) and windows[index][0] < end:
                since, until = windows[index]
                within = (min(end, until) - max(start, since)).total_seconds()
                if within > 0:
                    seconds[index][0] += within
                    seconds[index][1] += within * (watts - off_watts)
                index += 1
    return [Tally(total / 3600.0, weighed / 3600.0 / 1000.0)
            for total, weighed in seconds]


def _union(intervals):
    """``intervals`` merged where they overlap, in order."""
    merged = []
    for start, end in sorted(intervals):
        if end <= start:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged
