"""The power plan over a month of a research testbed, simulated: host-hours
off, energy saved against always-on and leases that start late, for a few
settings of ``min_off`` and of the spare pool.

In-process and deterministic (a fixed seed), no services: a static
inventory of 200 hosts (each with a measured boot of 4 to 10 minutes; a
real boot takes 0.8 to 1.2 times it, so always within its wake lead of
boot plus 5 minutes) and a synthetic lease trace over 30 days after a
week of warm-up.  Arrivals follow the hour of day and the weekday (busy
working hours, quiet nights and weekends); a lease takes 1 to 32 hosts
(most take one or two) for 1 hour to a week (log-uniform); 30 % are made
less than a wake lead ahead (most for now), the rest 15 minutes to two
weeks ahead.  Each lease is placed when it is made by the real choice
rule, ``climate.scheduling.hosts.choose`` (best fit, awake hosts first
among equals), or refused when too few hosts are free; the real
``climate.scheduling.power.plan`` runs when ``next_wake`` says, when a
lease is made and when a boot ends, and its actions take effect at once
(a power-off at once, a wake after the host's boot).

Printed per setting: host-hours off (and their share of all host-hours),
kWh saved against always-on (idle hosts draw 150 W, off ones 10 W for
their BMC, a boot 100 W over idle while it lasts), wakes per host per
day, and the leases that started late -- those made at least a wake lead
ahead (the target: none) apart from those made later -- with the mean
wait of the late ones.  Rows marked ``aw`` place a lease made less than a
wake lead ahead on awake hosts when enough of them fit (by the choice
rule over all hosts otherwise): a caller's policy measured here, not
Climate's rule, which only prefers awake hosts among equal fits.
``run.py power HOSTS:DAYS`` takes other sizes; the default took 45 s
(39 s of CPU) on a loaded machine (CPU reference loop 13 to 31 ms).
"""

import bisect
import datetime
import heapq
import math
import random
import time

from climate.scheduling import hosts as sched
from climate.scheduling import power

HOSTS = 200
DAYS = 30
WARMUP = datetime.timedelta(days=7)
SEED = 37
IDLE_WATTS = 150.0
OFF_WATTS = 10.0
BOOT_EXTRA_WATTS = 100.0
MARGIN = datetime.timedelta(minutes=5)
#: Share of the leases made less than a wake lead ahead.
LATE_MADE = 0.3
#: Hosts per lease and how often (most testbed leases take one or two).
SIZES = ((1, 45), (2, 20), (4, 15), (8, 10), (16, 7), (32, 3))
#: Leases made per hour, on average over the week, per 100 hosts.
RATE_PER_100 = 0.55
#: Relative arrivals by hour of day (0-23) and weekday (Monday first).
BY_HOUR = (0.3, 0.2, 0.2, 0.2, 0.2, 0.3, 0.5, 0.8, 1.3, 1.8, 2.0, 1.9,
           1.5, 1.8, 2.0, 1.9, 1.6, 1.3, 1.0, 0.8, 0.7, 0.6, 0.5, 0.4)
BY_WEEKDAY = (1.2, 1.3, 1.3, 1.2, 1.0, 0.5, 0.4)
MINUTE = datetime.timedelta(minutes=1)
HOUR = datetime.timedelta(hours=1)
#: The settings compared: min_off in hours, spare_awake, spare_share,
#: and whether a lease made less than a wake lead ahead is placed on
#: awake hosts when enough fit (else by the choice rule over all).
SETTINGS = ((0.5, 2, 0.05, False), (2, 0, 0.0, False), (2, 2, 0.05, False),
            (2, 8, 0.1, False), (8, 2, 0.05, False), (2, 2, 0.05, True),
            (2, 8, 0.1, True))

T0 = datetime.datetime(2030, 3, 4)      # a Monday


class Lease(object):
    __slots__ = ('created', 'start', 'end', 'count', 'hosts', 'ahead')

    def __init__(self, created, start, end, count):
        self.created, self.start, self.end = created, start, end
        self.count = count
        self.hosts = ()
        self.ahead = start - created


def _log_uniform(rng, low, high):
    return math.exp(rng.uniform(math.log(low), math.log(high)))


def inventory(count, rng):
    """The hosts, all on, each with its measured boot, and its real boot
    as a share of that."""
    hosts = [power.HostPower(i, power.ON, rng.randint(240, 600))
             for i in range(1, count + 1)]
    return hosts, {h.host_id: rng.uniform(0.8, 1.2) for h in hosts}


def trace(hosts, days, rng, lead):
    """The leases, by creation time, from the warm-up's start on."""
    weights = [w for _size, w in SIZES]
    sizes = [size for size, _w in SIZES]
    mean_factor = (sum(BY_HOUR) / 24.0) * (sum(BY_WEEKDAY) / 7.0)
    rate = RATE_PER_100 * hosts / 100.0 / mean_factor
    leases = []
    hour = T0 - WARMUP
    while hour < T0 + datetime.timedelta(days=days):
        expected = rate * BY_HOUR[hour.hour] * BY_WEEKDAY[hour.weekday()]
        # a Poisson process within the hour: exponential gaps, in seconds
        per_second = expected / 3600.0
        offset = rng.expovariate(per_second)
        while offset < 3600.0:
            created = (hour + datetime.timedelta(seconds=offset)).replace(
                microsecond=0)
            if rng.random() < LATE_MADE:
                ahead = (datetime.timedelta(0) if rng.random() < 0.8 else
                         rng.randint(1, int(lead / MINUTE) - 1) * MINUTE)
            else:
                ahead = datetime.timedelta(seconds=int(_log_uniform(
                    rng, lead.total_seconds(), 14 * 86400)))
            length = datetime.timedelta(
                seconds=int(_log_uniform(rng, 3600, 7 * 86400)))
            start = created + ahead
            leases.append(Lease(created, start, start + length,
                                rng.choices(sizes, weights)[0]))
            offset += rng.expovariate(per_second)
        hour += HOUR
    return leases


class Simulation(object):
    """One month under one setting."""

    def __init__(self, hosts, boots, leases, settings, until,
                 awake_first=False):
        self.awake_first = awake_first
        self.hosts = {h.host_id: h for h in hosts}
        self.boots = boots
        self.leases = leases
        self.settings = settings
        self.until = until
        self.lead = max(power.wake_lead(h, settings) for h in hosts)
        # per host: its bookings (start, end), sorted, ended ones dropped
        self.bookings = {h: [] for h in self.hosts}
        self.booting = {}
        self.off_since = {}
        self.off = {h: [] for h in self.hosts}
        self.boot_seconds = 0.0
        self.wakes = 0
        self.refused = 0
        self.starts = []        # (lease, seconds late)
        # (when, order, item, kind): at one instant boots end first, then
        # leases are made, then the plan runs, then leases start
        self.events = []

    def _allocate(self, lease):
        candidates = []
        for host_id, spans in self.bookings.items():
            prev_end = next_start = None
            clash = False
            for start, end in spans:
                if start < lease.end and end > lease.start:
                    clash = True
                    break
                if end <= lease.start:
                    prev_end = end
                elif next_start is None:
                    next_start = start
            if not clash:
                candidates.append(sched.Candidate(host_id, prev_end,
                                                  next_start))
        if len(candidates) < lease.count:
            self.refused += 1
            return False
        asleep = power.asleep(self.hosts.values())
        if self.awake_first and lease.ahead < self.lead:
            awake = [c for c in candidates if c.host_id not in asleep]
            if len(awake) >= lease.count:
                candidates = awake
        lease.hosts = sched.choose(
            candidates, lease.start, lease.end, lease.count,
            sched.fit_horizon(lease.start, lease.end), asleep=asleep)
        for host_id in lease.hosts:
            bisect.insort(self.bookings[host_id], (lease.start, lease.end))
        return True

    def _set(self, host_id, state):
        self.hosts[host_id] = self.hosts[host_id]._replace(state=state)

    def _act(self, now, actions):
        for action in actions:
            host_id = action.host_id
            if action.verb == power.POWER_OFF:
                self._set(host_id, power.OFF)
                self.off_since[host_id] = now
                continue
            host = self.hosts[host_id]
            self._set(host_id, power.WAKING)
            self.off[host_id].append((self.off_since.pop(host_id), now))
            boot = power.wake_lead(host, self.settings) - MARGIN
            boot_seconds = boot.total_seconds() * self.boots[host_id]
            self.booting[host_id] = now + datetime.timedelta(
                seconds=round(boot_seconds))
            heapq.heappush(self.events,
                           (self.booting[host_id], 0, host_id, 'boot'))
            self.boot_seconds += boot_seconds
            self.wakes += 1

    def run(self):
        events = self.events
        for n, lease in enumerate(self.leases):
            heapq.heappush(events, (lease.created, 1, n, 'create'))
        plan_at = None
        while True:
            due = [e[0] for e in events[:1]] + ([plan_at] if plan_at else [])
            if not due or min(due) >= self.until:
                break
            now = min(due)
            while events and events[0][0] == now and events[0][1] < 2:
                _when, _order, n, kind = heapq.heappop(events)
                if kind == 'boot':
                    if self.booting.get(n) == now:
                        del self.booting[n]
                        self._set(n, power.ON)
                else:
                    lease = self.leases[n]
                    if self._allocate(lease):
                        heapq.heappush(events, (lease.start, 2, n, 'start'))
            for spans in self.bookings.values():
                while spans and spans[0][1] <= now:
                    spans.pop(0)
            actions = power.plan(self.hosts.values(), self.bookings, now,
                                 self.settings)
            self._act(now, actions)
            # the starts due now see the plan's wakes of this instant
            while events and events[0][0] == now and events[0][3] == 'start':
                self._start(heapq.heappop(events)[2], now)
            plan_at = power.next_wake(self.hosts.values(), self.bookings,
                                      now, self.settings)
        for host_id, since in self.off_since.items():
            self.off[host_id].append((since, self.until))
        return self

    def _start(self, n, now):
        lease = self.leases[n]
        ready = now
        for host_id in lease.hosts:
            state = self.hosts[host_id].state
            if state == power.WAKING:
                ready = max(ready, self.booting[host_id])
            elif state != power.ON:
                raise AssertionError('host %s %s at a start' % (host_id,
                                                                 state))
        self.starts.append((lease, (ready - now).total_seconds()))


def simulate(hosts, boots, leases, settings, days, awake_first=False):
    """One setting's figures over the measured month."""
    until = T0 + datetime.timedelta(days=days)
    for lease in leases:
        lease.hosts = ()
    sim = Simulation(hosts, boots, leases, settings, until,
                     awake_first).run()
    saved = power.tally(sim.off, T0, until, IDLE_WATTS, OFF_WATTS)
    total_hours = len(hosts) * days * 24.0
    booked = sum(
        (min(lease.end, until) - max(lease.start, T0)).total_seconds() *
        len(lease.hosts) for lease in leases
        if lease.hosts and lease.end > T0 and lease.start < until) / 3600.0
    measured = [(lease, wait) for lease, wait in sim.starts
                if lease.start >= T0]
    lead = max(power.wake_lead(h, settings) for h in hosts)
    ahead = [w for lease, w in measured if lease.ahead >= lead]
    made_late = [w for lease, w in measured if lease.ahead < lead]
    late = [w for w in made_late if w > 0]
    return {
        'min_off': settings.min_off, 'spare_awake': settings.spare_awake,
        'spare_share': settings.spare_share, 'enabled': settings.enabled,
        'awake_first': awake_first,
        'host_hours_off': saved.host_hours_off,
        'share_off': saved.host_hours_off / total_hours,
        'kwh_saved': saved.kwh_saved -
        sim.boot_seconds / 3600.0 * BOOT_EXTRA_WATTS / 1000.0,
        'booked_share': booked / total_hours,
        'refused': sim.refused,
        'wakes_per_host_day': sim.wakes / len(hosts) / (
            (days * 86400 + WARMUP.total_seconds()) / 86400.0),
        'starts_ahead': len(ahead),
        'late_ahead': sum(1 for w in ahead if w > 0),
        'starts_made_late': len(made_late), 'late_made_late': len(late),
        'mean_wait_min': sum(late) / len(late) / 60.0 if late else 0.0,
    }


def _settings():
    yield power.Settings(enabled=False, wake_margin=MARGIN), False
    for hours, count, share, awake_first in SETTINGS:
        yield power.Settings(enabled=True, min_off=hours * HOUR,
                             wake_margin=MARGIN, spare_awake=count,
                             spare_share=share), awake_first


def _hours(delta):
    return '%gh' % (delta.total_seconds() / 3600.0)


def run(args=()):
    """``run.py power [HOSTS[:DAYS]]`` (200 hosts, 30 days)."""
    hosts_count, _sep, days = (args[0] if args else '').partition(':')
    hosts_count, days = int(hosts_count or HOSTS), int(days or DAYS)
    rng = random.Random(SEED)
    hosts, boots = inventory(hosts_count, rng)
    lead = max(power.wake_lead(h, power.Settings(wake_margin=MARGIN))
               for h in hosts)
    leases = trace(hosts_count, days, rng, lead)
    print('== power plan, %d hosts, %d days (after %d of warm-up), %d '
          'leases made, wake lead up to %d min' % (
              hosts_count, days, WARMUP.days, len(leases),
              lead.total_seconds() / 60))
    print('  %-8s %-12s %9s %6s %9s %7s %7s %6s %-14s %-14s %s' % (
        'min_off', 'spares', 'host-h off', 'off', 'kWh saved', 'booked',
        'refused', 'wakes', 'late/ahead', 'late/made-late', 'mean wait'))
    results = []
    for settings, awake_first in _settings():
        began = time.monotonic()
        figures = simulate(hosts, boots, leases, settings, days,
                           awake_first)
        results.append(figures)
        label = (_hours(settings.min_off) if settings.enabled
                 else 'always on')
        spares = ('%d/%.0f%%%s' % (settings.spare_awake,
                                   100 * settings.spare_share,
                                   ' aw' if awake_first else '')
                  if settings.enabled else '-')
        print('  %-8s %-12s %10.0f %5.1f%% %9.0f %6.1f%% %7d %6.2f '
              '%-14s %-14s %.1f min  [%.1fs]' % (
                  label, spares, figures['host_hours_off'],
                  100 * figures['share_off'], figures['kwh_saved'],
                  100 * figures['booked_share'], figures['refused'],
                  figures['wakes_per_host_day'],
                  '%d of %d' % (figures['late_ahead'],
                                figures['starts_ahead']),
                  '%d of %d' % (figures['late_made_late'],
                                figures['starts_made_late']),
                  figures['mean_wait_min'], time.monotonic() - began))
        if figures['late_ahead']:
            print('    FAIL: leases made a wake lead ahead started late')
    return results


if __name__ == '__main__':
    import sys
    run(sys.argv[1:])
