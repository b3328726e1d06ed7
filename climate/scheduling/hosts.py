"""Which hosts to take and when enough are free: interval arithmetic, no I/O.

Times are naive UTC datetimes; an interval ``(start, end)`` is half-open.
The SQL side (``climate.db.hosts``) hands these functions the rows of a
bounded number of queries; everything here is deterministic.

**The choice rule (best fit).**  Among the free hosts that match, a
reservation takes the ones whose free gap around the requested window is
the smallest: ``slack = (start - end of the host's previous allocation) +
(start of its next allocation - end)``, where a side with nothing within
the horizon (:func:`fit_horizon`: four times the duration, at least a
day) is open and counts as :data:`OPEN_SLACK`.  So short leases fill the
holes between existing allocations and hosts with long free stretches
stay whole for long leases; hosts free far around the window are taken
last.  Ties go to the hosts that are awake (when the caller says which
are asleep: power follows the ledger, decision 8 of the design), then to
the lowest host id.
"""

import collections
import datetime

#: What an open side of a free gap (nothing before, or nothing after)
#: weighs in the slack: 100 years, more than any real gap.
OPEN_SLACK = 100 * 365 * 86400
#: The least horizon of the choice rule (see :func:`fit_horizon`).
FIT_HORIZON_MIN = datetime.timedelta(days=1)
_FOREVER = datetime.datetime.max


#: A free host: ``prev_end`` / ``next_start`` are None when the host has
#: no allocation on that side of the window.
Candidate = collections.namedtuple('Candidate', 'host_id prev_end next_start',
                                   defaults=(None, None))


def slack(candidate, start, end, horizon=None):
    """Seconds of free time around ``[start, end)`` on this host; a side
    with nothing within ``horizon`` (a timedelta) counts as open."""
    limit = horizon.total_seconds() if horizon is not None else None

    def side(seconds):
        if seconds is None or (limit is not None and seconds >= limit):
            return OPEN_SLACK
        return seconds

    return (side(None if candidate.prev_end is None else
                 (start - candidate.prev_end).total_seconds()) +
            side(None if candidate.next_start is None else
                 (candidate.next_start - end).total_seconds()))


def choose(candidates, start, end, count, horizon=None, asleep=None):
    """The ``count`` best-fitting candidates' host ids (the choice rule).

    ``asleep``: ids of hosts powered off or still booting
    (:func:`climate.scheduling.power.asleep`); among equal slack, awake
    hosts come before them, so a lease that starts now waits for a boot
    only when no awake host fits as well.
    """
    if asleep:
        def key(c):
            return (slack(c, start, end, horizon), c.host_id in asleep,
                    c.host_id)
    else:
        def key(c):
            return (slack(c, start, end, horizon), c.host_id)
    ranked = sorted(candidates, key=key)
    return [c.host_id for c in ranked[:count]]


def awake_first(ranked, asleep):
    """``ranked`` (host ids, best fit first) with the ``asleep`` ones after
    the others, each group in its order: what a lease that starts before
    a sleeping host could be woken takes (it waits for no boot another
    host spares it; the sleeping host stays asleep, so energy is not the
    price)."""
    return ([h for h in ranked if h not in asleep] +
            [h for h in ranked if h in asleep])


def fit_horizon(start, end):
    """How far the choice rule looks around a window: a free stretch
    longer than this on one side is as good as an open one."""
    return max(FIT_HORIZON_MIN, 4 * (end - start))


def _merge(intervals):
    """Sorted, merged busy intervals."""
    merged = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def _valid_starts(busy, duration, earliest, latest_end):
    """Per host: the closed ranges ``[a, b]`` of start times ``t`` with
    ``[t, t + duration)`` free, ``t >= earliest``, ``t + duration <=
    latest_end``."""
    ranges = []
    cursor = earliest
    for start, end in _merge(busy) + [(latest_end, latest_end)]:
        gap_end = min(start, latest_end)
        if gap_end - cursor >= duration:
            ranges.append((cursor, gap_end - duration))
        cursor = max(cursor, end)
        if cursor >= latest_end:
            break
    return ranges


def free_windows(hosts, busy, count, duration, earliest, latest_end=None,
                 limit=5):
    """The earliest windows where ``count`` of ``hosts`` are free.

    :param hosts: ids of the matching hosts.
    :param busy: ``{host_id: [(start, end), ...]}`` of their allocations
        (hosts absent are free throughout).
    :param duration: a timedelta.
    :returns: up to ``limit`` dicts, earliest first, one per stretch of
        feasible start times: ``start`` (the earliest start), ``end``
        (``start + duration``), ``latest_start`` (the last start of the
        stretch; None when it never closes) and ``hosts_free`` (hosts free
        over ``[start, end)``).
    """
    if count < 1 or duration <= datetime.timedelta(0):
        raise ValueError('count and duration must be positive')
    horizon = latest_end or _FOREVER
    if earliest + duration > horizon:
        return []
    points = []
    for host in hosts:
        for first, last in _valid_starts(busy.get(host, ()), duration,
                                         earliest, horizon):
            # a start range is closed: it opens at ``first`` and closes
            # just after ``last``
            points.append((first, 0, 1))
            points.append((last, 1, -1))
    points.sort()
    windows = []
    free = 0
    open_at = None
    index = 0
    while index < len(points):
        when = points[index][0]
        # every range opening at ``when`` counts before any closing there
        while index < len(points) and points[index][:2] == (when, 0):
            free += 1
            index += 1
        if free >= count and open_at is None:
            open_at = when
            windows.append({'start': when, 'end': when + duration,
                            'latest_start': None, 'hosts_free': free})
        closing = 0
        while index < len(points) and points[index][:2] == (when, 1):
            closing += 1
            index += 1
        if free - closing < count and open_at is not None:
            # a stretch that only closes at the end of time is open
            windows[-1]['latest_start'] = (
                None if latest_end is None and when >= horizon - duration
                else when)
            open_at = None
            if len(windows) >= limit:
                break
        free -= closing
    return windows[:limit]


def earliest_start(hosts, busy, count, duration, earliest, latest_end=None):
    """The earliest start at which ``count`` hosts are free for
    ``duration``, or None."""
    windows = free_windows(hosts, busy, count, duration, earliest,
                           latest_end, limit=1)
    return windows[0]['start'] if windows else None


def free_until(busy, after):
    """When a host busy with ``busy`` stops being free after ``after`` (the
    start of its first allocation ending later), or None: free forever."""
    ends = [start for start, end in busy if end > after]
    return max(after, min(ends)) if ends else None


def timeline(hosts, busy, time_from, time_to):
    """How many of ``hosts`` are free over ``[time_from, time_to)``.

    :returns: consecutive segments ``{'start', 'end', 'free'}`` covering
        the range, merged when the count does not change.
    """
    if time_to <= time_from:
        return []
    deltas = {}
    free = len(hosts)
    for host in hosts:
        for start, end in _merge(busy.get(host, ())):
            if end <= time_from or start >= time_to:
                continue
            if start <= time_from:
                free -= 1
            else:
                deltas[start] = deltas.get(start, 0) - 1
            if end < time_to:
                deltas[end] = deltas.get(end, 0) + 1
    segments = [{'start': time_from, 'end': time_to, 'free': free}]
    for when in sorted(deltas):
        if not deltas[when]:
            continue
        free += deltas[when]
        if segments[-1]['start'] == when:
            segments[-1]['free'] = free
        else:
            segments[-1]['end'] = when
            segments.append({'start': when, 'end': time_to, 'free': free})
        if len(segments) > 1 and segments[-1]['free'] == \
                segments[-2]['free']:
            segments[-2]['end'] = segments[-1]['end']
            segments.pop()
    return segments
