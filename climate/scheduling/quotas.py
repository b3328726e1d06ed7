"""Quota arithmetic, free of I/O: a project's effective limits, the
calendar periods of a budget, and the check of a lease's window against
what the project holds (``climate.manager.quotas`` reads the rows).

Limits follow Nova's convention: -1 (or no entry for a class) is no
limit, 0 allows nothing.
"""

import collections
import datetime

from climate.scheduling import capacity
from climate.scheduling import usage

UNLIMITED = -1
PERIODS = ('day', 'week', 'month', 'year')

#: What a project may reserve.  ``max_concurrent`` ``{class: amount}``,
#: ``budget`` ``{class: resource-hours}`` per ``budget_period``.
Limits = collections.namedtuple('Limits', 'max_lease_duration max_extension '
                                'max_concurrent budget budget_period')

#: One booking (or usage record) of the project: ``lease_id`` tells this
#: lease's own from the others.
Holding = collections.namedtuple('Holding', 'lease_id resource_class start '
                                 'end amount')

#: A limit a lease would break: ``kind`` ``concurrent`` or ``budget``;
#: ``used`` is what the project would hold (at ``at``, or within
#: ``period``) with the lease, ``fits`` the most of the class the lease
#: could hold instead (over its whole window, or within the period).
Excess = collections.namedtuple('Excess', 'kind resource_class limit used '
                                'fits at period')


def effective(own, defaults):
    """``own`` (a project's :class:`Limits`, None where it has none)
    over ``defaults``: each field, and each class of the two maps, from
    the project when it has it."""
    def merged(name):
        out = dict(getattr(defaults, name) or {})
        out.update(getattr(own, name) or {})
        return {cls: value for cls, value in out.items()
                if value != UNLIMITED}

    def field(name):
        value = getattr(own, name)
        return getattr(defaults, name) if value is None else value

    return Limits(field('max_lease_duration'), field('max_extension'),
                  merged('max_concurrent'), merged('budget'),
                  field('budget_period'))


def needs_lock(limits):
    """Whether checking a lease against ``limits`` reads what the
    project holds (so two checks of the project must take turns)."""
    return bool(limits.max_concurrent or limits.budget)


def period_start(when, period):
    """The start of the calendar period (UTC) holding ``when``."""
    day = when.replace(hour=0, minute=0, second=0, microsecond=0)
    if period == 'day':
        return day
    if period == 'week':
        return day - datetime.timedelta(days=day.weekday())
    if period == 'month':
        return day.replace(day=1)
    return day.replace(month=1, day=1)


def next_period(start, period):
    """The start of the period after the one starting at ``start``."""
    if period == 'day':
        return start + datetime.timedelta(days=1)
    if period == 'week':
        return start + datetime.timedelta(days=7)
    if period == 'month':
        return (start + datetime.timedelta(days=32)).replace(day=1)
    return start.replace(year=start.year + 1)


def periods(start, end, period):
    """The calendar periods overlapping ``[start, end)``, as ``(start,
    end)`` pairs in order."""
    out = []
    cursor = period_start(start, period)
    while cursor < end:
        following = next_period(cursor, period)
        out.append((cursor, following))
        cursor = following
    return out


def _seconds(first, last):
    return max(0.0, (last - first).total_seconds())


def _concurrent(limits, by_class, lease_id, start, end):
    for cls in sorted(limits.max_concurrent):
        limit = limits.max_concurrent[cls]
        held = [capacity.Booking(h.start, h.end, h.amount)
                for h in by_class.get(cls, ())]
        excess = capacity.first_excess(held, start, end, limit)
        if excess is None:
            continue
        others = capacity.peak([capacity.Booking(h.start, h.end, h.amount)
                                for h in by_class.get(cls, ())
                                if h.lease_id != lease_id], start, end)
        return Excess('concurrent', cls, limit, excess[1],
                      max(0, limit - others), excess[0], None)
    return None


def _budget(limits, budgets):
    for (p_start, p_end), held in budgets:
        for cls in sorted(limits.budget):
            limit = limits.budget[cls]
            used, mine = held.get(cls, (0, 0))
            if used <= limit * 3600.0 + 1e-6:
                continue
            return Excess('budget', cls, limit, usage.hours(used),
                          usage.hours(max(0.0, limit * 3600.0 - (
                              used - mine))), None, (p_start, p_end))
    return None


def excess(limits, holdings, budgets, lease_id, start, end):
    """The first limit the project breaks with the lease ``lease_id``
    over ``[start, end)``, as an :class:`Excess`, or None: concurrent
    limits first, then budgets period by period.

    :param holdings: :class:`Holding` of every booking and record of the
        project overlapping the window, of the classes limited at once.
    :param budgets: ``[((start, end), {class: (resource-seconds held,
        the lease's share)})]`` of each budget period the window
        overlaps (:func:`periods`), the classes with a budget.
    """
    by_class = collections.defaultdict(list)
    for holding in holdings:
        by_class[holding.resource_class].append(holding)
    return (_concurrent(limits, by_class, lease_id, start, end) or
            _budget(limits, budgets))


def held_within(holdings, start, end, lease_id):
    """``{class: (resource-seconds held within [start, end), the lease's
    share)}`` of ``holdings`` (what ``climate.db.quotas.held_within``
    sums in SQL)."""
    out = {}
    for h in holdings:
        seconds = h.amount * _seconds(max(h.start, start), min(h.end, end))
        held, own = out.get(h.resource_class, (0, 0))
        out[h.resource_class] = (held + seconds, own + (
            seconds if h.lease_id == lease_id else 0))
    return out


