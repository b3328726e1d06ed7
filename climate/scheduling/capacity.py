"""Amounts on providers over time: the ledger's arithmetic, no I/O.

The capacity ledger (``climate.db.ledger``, decision 7 of the design)
holds *inventories* -- how much of a resource class a provider has -- and
*bookings* -- an amount of a class on a provider over a half-open window
``[start, end)``.  One rule holds at every instant: the bookings of a
``(provider, class)`` overlapping it never add up to more than the
inventory's usable capacity.  Everything here works on plain values handed
over by the SQL side, so it is tested on its own against brute force.

Times are any ordered values that can be compared and to which a duration
adds (naive UTC datetimes in Climate, integers in the tests).

**Usable capacity** is Placement's: ``int((total - reserved) *
allocation_ratio)``, never below zero.  ``min_unit``, ``max_unit`` and
``step_size`` bound the amount of *one unit* of a shape (one instance),
as Placement checks them per consumer: a reservation of three 4-VCPU
slots books 12 VCPU on a provider whose ``max_unit`` is 8.

**Shapes and slots.**  A shape is ``{resource class: amount per unit}``.
Over a window, the units of a shape that fit on a provider are the
least, over the shape's classes, of ``free // amount``, where ``free`` is
the usable capacity minus the *peak* usage within the window (the classes
are independent, so this is exact, not a bound).

**Affinity.**  ``None``: units may go anywhere; ``True``: all units on one
provider; ``False``: at most one unit per provider (Blazar's
``affinity`` of ``virtual:instance``).

**The placement rule.**  Providers are examined in id order, a growing
prefix at a time (the first 64, then 576, 4,672, then all of them:
:data:`SEARCH_CHUNKS`); the units are planned on the first prefix that
can hold them, by best fit: providers in order of how many units of the
shape fit on them over the window, fewest first (ties: the lowest id),
each filled as far as it goes.  With affinity, the one provider with the
fewest units that still holds them all; with anti-affinity, one unit on
each of the ``count`` providers with the fewest units (at least one).  So
the search reads what a prefix holds, not the whole inventory nor every
booking of the window; partly used providers fill up, and providers of
high ids stay whole for large shapes and whole-host reservations.
"""

import bisect
import collections
import itertools

#: The class of a provider taken whole (a compute host reserved by
#: ``physical:host``); its inventory total is 1.
WHOLE = 'HOST'

#: How many more providers, in id order, each round of the search
#: examines (the last round: all the rest).
SEARCH_CHUNKS = (64, 512, 4096)

#: What a provider has of one resource class.  ``max_unit`` None: no bound
#: but the usable capacity.
Inventory = collections.namedtuple(
    'Inventory',
    'total reserved allocation_ratio min_unit max_unit step_size',
    defaults=(0, 1.0, 1, None, 1))

#: An amount held over ``[start, end)``.
Booking = collections.namedtuple('Booking', 'start end amount')


def usable(inventory):
    """Placement's usable capacity: ``(total - reserved) * ratio``,
    rounded down, at least zero."""
    amount = int((inventory.total - inventory.reserved) *
                 inventory.allocation_ratio)
    return max(0, amount)


def unit_allowed(inventory, amount):
    """Whether one unit may hold ``amount`` of the class: Placement's
    ``min_unit``, ``max_unit`` and ``step_size``."""
    if amount < inventory.min_unit:
        return False
    if inventory.max_unit is not None and amount > inventory.max_unit:
        return False
    return amount % inventory.step_size == 0


def whole_amounts(inventories):
    """What booking a provider whole takes: ``{class: usable}`` of every
    class it has (``WHOLE`` included, whose usable capacity is 1)."""
    return {cls: usable(inv) for cls, inv in inventories.items()}


def _deltas(bookings, start, end):
    """``[(time, change)]`` of the bookings clipped to ``[start, end)``,
    sorted by time (:func:`usage` applies every change of an instant
    before it counts: a booking ending at ``t`` and one starting at ``t``
    never meet)."""
    events = []
    for b_start, b_end, amount in bookings:
        if b_start < end and b_end > start and amount:
            events.append((max(b_start, start), amount))
            events.append((min(b_end, end), -amount))
    events.sort(key=lambda e: e[0])
    return events


def usage(bookings, start, end):
    """The usage of one ``(provider, class)`` over ``[start, end)``:
    consecutive segments ``(from, to, amount)`` covering the window,
    merged when the amount does not change."""
    if not end > start:
        return []
    segments = []
    level = 0
    cursor = start
    events = _deltas(bookings, start, end)
    index = 0
    while index < len(events):
        when = events[index][0]
        if when > cursor:
            _append(segments, cursor, when, level)
            cursor = when
        while index < len(events) and events[index][0] == when:
            level += events[index][1]
            index += 1
    if cursor < end:
        _append(segments, cursor, end, level)
    return segments


def _append(segments, start, end, amount):
    if segments and segments[-1][2] == amount:
        segments[-1] = (segments[-1][0], end, amount)
    else:
        segments.append((start, end, amount))


def peak(bookings, start, end):
    """The most the bookings hold at one instant of ``[start, end)``
    (0 with none)."""
    return max((amount for _s, _e, amount in usage(bookings, start, end)),
               default=0)


def first_excess(bookings, start, end, limit):
    """The first instant of ``[start, end)`` at which the bookings hold
    more than ``limit``, and what they hold then: ``(instant, amount)``,
    or None when they never do."""
    for seg_start, _seg_end, amount in usage(bookings, start, end):
        if amount > limit:
            return seg_start, amount
    return None


def free(inventory, bookings, start, end):
    """What is left of the usable capacity at the busiest instant of
    ``[start, end)``; negative when the bookings already exceed it (an
    inventory lowered by hand)."""
    return usable(inventory) - peak(bookings, start, end)


def units_fit(inventories, free_by_class, shape):
    """How many units of ``shape`` fit on one provider that has
    ``inventories`` (``{class: Inventory}``) and ``free_by_class`` free.

    A class the provider lacks, or whose unit bounds refuse the shape's
    amount, fits nothing; classes the shape asks 0 of are ignored.
    """
    fits = None
    for cls, amount in shape.items():
        if amount <= 0:
            continue
        inventory = inventories.get(cls)
        if inventory is None or not unit_allowed(inventory, amount):
            return 0
        here = max(0, free_by_class.get(cls, 0)) // amount
        fits = here if fits is None else min(fits, here)
    if fits is None:
        raise ValueError('a shape must ask for some amount of a class')
    return fits


def provider_fit(inventories, bookings, shape, start, end):
    """Units of ``shape`` that fit over ``[start, end)`` on a provider
    with ``inventories`` and ``bookings`` (``{class: [Booking]}``)."""
    free_by_class = {cls: free(inventories[cls], bookings.get(cls, ()),
                               start, end)
                     for cls in shape if cls in inventories}
    return units_fit(inventories, free_by_class, shape)


def total_fit(fits, affinity=None):
    """How many units fit over a set of providers, given ``fits``
    (``{provider: units that fit on it}``) and the affinity rule."""
    counts = [n for n in fits.values() if n > 0]
    if affinity is True:
        return max(counts, default=0)
    if affinity is False:
        return len(counts)
    return sum(counts)


def plan(fits, count, affinity=None):
    """Where ``count`` units go (the placement rule of this module):
    ``{provider: units}``, or None when they do not fit."""
    if count < 1:
        raise ValueError('count must be positive')
    ranked = sorted(((n, p) for p, n in fits.items() if n > 0))
    if affinity is True:
        for n, provider in ranked:
            if n >= count:
                return {provider: count}
        return None
    if affinity is False:
        if len(ranked) < count:
            return None
        return {provider: 1 for _n, provider in ranked[:count]}
    placed = {}
    left = count
    for n, provider in ranked:
        take = min(n, left)
        placed[provider] = take
        left -= take
        if not left:
            return placed
    return None


def plan_in_order(fits, count, affinity=None, chunks=None):
    """The placement rule over providers in id order: :func:`plan` over
    the first ``chunks[0]`` providers of ``fits``, then the first
    ``chunks[0] + chunks[1]``..., then all; the first plan found, or
    None."""
    ordered = sorted(fits)
    bounds = list(itertools.accumulate(chunks or SEARCH_CHUNKS))
    for bound in bounds + [len(ordered)]:
        placed = plan({p: fits[p] for p in ordered[:bound]}, count,
                      affinity)
        if placed is not None or bound >= len(ordered):
            return placed
    return None


def earliest_window(inventories, bookings, shape, count, duration,
                    earliest, latest_end=None, affinity=None):
    """The earliest start ``t >= earliest`` at which ``count`` units of
    ``shape`` fit over ``[t, t + duration)`` (ending by ``latest_end`` if
    given), or None.

    :param inventories: ``{provider: {class: Inventory}}``.
    :param bookings: ``{provider: {class: [Booking]}}``.

    Units only gain room when a booking leaves the window, so the only
    starts worth trying are ``earliest`` and the booking ends after it;
    each try costs the bookings near its window (they are searched by
    start, as the SQL side reads them).
    """
    if count < 1 or not duration:
        raise ValueError('count and duration must be positive')
    by_start = {}
    for provider, classes in bookings.items():
        for cls, rows in classes.items():
            if not rows:
                continue
            ordered = sorted(rows)
            by_start[provider, cls] = ([r[0] for r in ordered], ordered)
    longest = {key: max((r[1] - r[0] for r in rows), default=None)
               for key, (_starts, rows) in by_start.items()}
    starts = {earliest}
    for classes in bookings.values():
        for rows in classes.values():
            starts.update(r[1] for r in rows if r[1] > earliest)
    for start in sorted(starts):
        end = start + duration
        if latest_end is not None and end > latest_end:
            return None
        fits = {}
        for provider, classes in inventories.items():
            near = {}
            for cls in shape:
                key = (provider, cls)
                if key not in by_start:
                    continue
                keys, rows = by_start[key]
                low = bisect.bisect_left(keys, start - longest[key])
                high = bisect.bisect_left(keys, end)
                near[cls] = rows[low:high]
            fits[provider] = provider_fit(classes, near, shape, start, end)
        if total_fit(fits, affinity) >= count:
            return start
    return None
