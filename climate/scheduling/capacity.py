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

import collections
import heapq
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


def fit_bounds(inventories, sums, largest, shape):
    """``(low, high)``: bounds of :func:`provider_fit` on a provider with
    ``inventories`` whose bookings overlapping the window add up to
    ``sums`` (``{class: amount}``), the largest being ``largest``.  Each
    of them holds its amount at some instant of the window, so the peak
    is at least the largest and at most the sum (exact with one booking
    or none)."""
    def fit(held):
        return units_fit(inventories, {
            cls: usable(inventories[cls]) - held.get(cls, 0)
            for cls in shape if cls in inventories}, shape)
    return fit(sums), fit(largest)


def one_unit_sweep(bounds):
    """Which providers' exact fit :func:`plan` of one unit needs, given
    ``bounds`` (``{provider: (low, high)}`` of :func:`fit_bounds`):
    ``(known, needed)``, ``known`` a fit standing in for the exact one of
    each other provider, ``needed`` the sorted rest.

    With one unit every affinity plans the same: the provider of fewest
    units among those holding one (ties: the lowest id).  A provider
    surely holding one (``low >= 1``) with the least ``(high, id)`` is
    no worse than that choice, so a provider whose ``(low, id)`` is above
    it is not the choice: it stands in with ``low`` (still above the
    choice, so ``plan`` picks the same provider); a provider of
    ``high`` 0 holds none (0 is exact), nor does a provider of equal
    bounds need more.  Only the others are swept.
    """
    best = min(((high, p) for p, (low, high) in bounds.items()
                if low >= 1), default=None)
    known, needed = {}, []
    for provider, (low, high) in bounds.items():
        if low == high or high < 1:
            known[provider] = high
        elif best is not None and (low, provider) > best:
            known[provider] = low
        else:
            needed.append(provider)
    return known, sorted(needed)


def total_fit(fits, affinity=None):
    """How many units fit over a set of providers, given ``fits``
    (``{provider: units that fit on it}``) and the affinity rule."""
    counts = [n for n in fits.values() if n > 0]
    if affinity is True:
        return max(counts, default=0)
    if affinity is False:
        return len(counts)
    return sum(counts)


def count_fit(counts, affinity=None):
    """:func:`total_fit` of providers given as ``counts`` (``{units:
    number of providers holding that many}``)."""
    held = [(units, many) for units, many in counts.items()
            if units > 0 and many > 0]
    if affinity is True:
        return max((units for units, _many in held), default=0)
    if affinity is False:
        return sum(many for _units, many in held)
    return sum(units * many for units, many in held)


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


class _Tally:
    """A multiset of units per provider and the :func:`total_fit` of it
    under each affinity, kept as providers change."""

    def __init__(self, counts=None):
        self.counts = collections.Counter()
        self.units = 0
        self.providers = 0
        self._high = []
        for units, many in (counts or {}).items():
            self.add(units, many)

    def add(self, units, many=1):
        if units <= 0 or many <= 0:
            return
        if not self.counts[units]:
            heapq.heappush(self._high, -units)
        self.counts[units] += many
        self.units += units * many
        self.providers += many

    def remove(self, units, many=1):
        if units <= 0 or many <= 0:
            return
        if self.counts[units] < many:
            raise ValueError('%d provider(s) hold no %d unit(s)' % (many,
                                                                    units))
        self.counts[units] -= many
        self.units -= units * many
        self.providers -= many

    def total(self, affinity=None):
        if affinity is True:
            while self._high and not self.counts[-self._high[0]]:
                heapq.heappop(self._high)
            return -self._high[0] if self._high else 0
        if affinity is False:
            return self.providers
        return self.units


def idle_fits(inventories, shape):
    """``{units: providers}``: how many of ``inventories``' providers
    (``{provider: {class: Inventory}}``) hold each number of units of
    ``shape`` with nothing booked (those that hold none left out).
    Providers of the same inventory are counted with one computation."""
    seen = {}
    counts = collections.Counter()
    for held in inventories.values():
        key = tuple(held.get(cls) for cls in sorted(shape))
        units = seen.get(key)
        if units is None:
            units = seen[key] = units_fit(
                held, {cls: usable(inv) for cls, inv in held.items()},
                shape)
        if units:
            counts[units] += 1
    return dict(counts)


def shape_classes(shape):
    """The classes ``shape`` asks a positive amount of, sorted: the order
    of the amounts in :func:`sweep_rows`' rows."""
    classes = sorted(cls for cls, amount in shape.items() if amount > 0)
    if not classes:
        raise ValueError('a shape must ask for some amount of a class')
    return classes


def booking_rows(bookings, shape):
    """``{provider: [(start, end, amounts)]}`` of ``bookings`` (``{provider:
    {class: [Booking]}}``): the bookings of one provider over one window
    as one row, ``amounts`` in the order of :func:`shape_classes` (other
    classes left out; bookings of no length hold nothing)."""
    classes = shape_classes(shape)
    rows = {}
    for provider, booked in bookings.items():
        windows = {}
        for index, cls in enumerate(classes):
            for b_start, b_end, amount in booked.get(cls, ()):
                if amount and b_end > b_start:
                    held = windows.setdefault((b_start, b_end),
                                              [0] * len(classes))
                    held[index] += amount
        if windows:
            rows[provider] = [(b_start, b_end, tuple(held)) for
                              (b_start, b_end), held in windows.items()]
    return rows


def sweep(idle, inventories, bookings, shape, duration, earliest,
          latest_end=None, affinity=None):
    """Units of ``shape`` that fit over ``[t, t + duration)``, for each
    start ``t`` worth trying, in order: ``earliest``, then each booking
    end after it (units only gain room when a booking leaves the window);
    ``(t, units)`` pairs, as :func:`total_fit` counts them under
    ``affinity``, while ``t + duration`` is at most ``latest_end`` (if
    given).

    :param idle: ``{units: providers}`` of providers not named in
        ``inventories`` that have nothing booked up to the last window
        (:func:`idle_fits`): they hold as many units over every window.
    :param inventories: ``{provider: {class: Inventory}}`` of the other
        providers.
    :param bookings: ``{provider: {class: [Booking]}}`` on them.  Those
        starting at or after the end of a window yielded may be left out:
        they cannot change it.

    Each provider's units are worked out again only when a booking of it
    enters or leaves the window, so a sweep costs about the bookings it
    passes, not the providers times the starts.
    """
    return sweep_rows(idle, inventories, booking_rows(bookings, shape),
                      shape, duration, earliest, latest_end, affinity)


def sweep_rows(idle, inventories, rows, shape, duration, earliest,
               latest_end=None, affinity=None):
    """:func:`sweep` with the bookings as :func:`booking_rows` gives them
    (``{provider: [(start, end, amounts)]}``, amounts in the order of
    :func:`shape_classes`; ``start < end``)."""
    if not duration:
        raise ValueError('duration must be positive')
    classes = shape_classes(shape)
    per_unit = [shape[cls] for cls in classes]
    tally = _Tally(idle)
    room = {}
    fits = {}
    entering = []
    # providers often share one inventory object (the SQL side groups
    # them): worked out once each
    seen = {}
    for provider, held in inventories.items():
        known = seen.get(id(held))
        if known is None or known[0] is not held:
            units = units_fit(held, {cls: usable(inv)
                                     for cls, inv in held.items()}, shape)
            # every class of the shape is there, and allows its amount
            known = seen[id(held)] = (held, units, units and [
                usable(held[cls]) for cls in classes])
        units = known[1]
        tally.add(units)
        if not units:
            # nothing fits even when it is free: bookings change nothing
            continue
        room[provider] = known[2]
        fits[provider] = units
        for row in rows.get(provider, ()):
            if row[1] > earliest:
                entering.append((row[0], row[1], row[2], provider))
    entering.sort(key=lambda r: r[0])
    starts = sorted({earliest} | {r[1] for r in entering})
    active = collections.defaultdict(list)
    leaving = []
    entered = 0
    for start in starts:
        end = start + duration
        if latest_end is not None and end > latest_end:
            return
        changed = set()
        while entered < len(entering) and entering[entered][0] < end:
            row = entering[entered]
            entered += 1
            if row[1] > start:
                active[row[3]].append(row)
                heapq.heappush(leaving, (row[1], entered - 1))
                changed.add(row[3])
        while leaving and leaving[0][0] <= start:
            row = entering[heapq.heappop(leaving)[1]]
            active[row[3]].remove(row)
            changed.add(row[3])
        for provider in changed:
            held = active[provider]
            if not held:
                del active[provider]
            units = _units_left(room[provider], per_unit, held)
            if units != fits[provider]:
                tally.remove(fits[provider])
                tally.add(units)
                fits[provider] = units
        yield start, tally.total(affinity)


def _units_left(room, per_unit, active):
    """Units left on a provider with ``room`` (usable capacity per class)
    when ``active`` rows ``(start, end, amounts, provider)`` all overlap
    the window.  Intervals that all meet the window and share an instant
    share one within it, so the peak over the window of a class is its
    rows' largest overlap, wherever it lies."""
    if not active:
        peaks = (0,) * len(room)
    elif len(active) == 1:
        peaks = active[0][2]
    else:
        # ends before starts at one instant: half-open windows
        events = sorted([(r[0], 1, r[2]) for r in active] +
                        [(r[1], 0, r[2]) for r in active],
                        key=lambda e: (e[0], e[1]))
        level = [0] * len(room)
        peaks = [0] * len(room)
        for _when, kind, amounts in events:
            for index, amount in enumerate(amounts):
                if kind:
                    level[index] += amount
                    if level[index] > peaks[index]:
                        peaks[index] = level[index]
                else:
                    level[index] -= amount
    return min(max(0, free - peak) // amount
               for free, peak, amount in zip(room, peaks, per_unit))


def earliest_window(inventories, bookings, shape, count, duration,
                    earliest, latest_end=None, affinity=None):
    """The earliest start ``t >= earliest`` at which ``count`` units of
    ``shape`` fit over ``[t, t + duration)`` (ending by ``latest_end`` if
    given), or None.

    :param inventories: ``{provider: {class: Inventory}}``.
    :param bookings: ``{provider: {class: [Booking]}}``.

    Units only gain room when a booking leaves the window, so the only
    starts worth trying are ``earliest`` and the booking ends after it
    (:func:`sweep`); providers with no booking after ``earliest`` hold
    their full capacity over every window and are counted once.
    """
    if count < 1 or not duration:
        raise ValueError('count and duration must be positive')
    busy = {provider for provider, classes in bookings.items()
            if any(b[1] > earliest for rows in classes.values()
                   for b in rows)}
    idle = idle_fits({p: held for p, held in inventories.items()
                      if p not in busy}, shape)
    changing = {p: held for p, held in inventories.items() if p in busy}
    for start, units in sweep(idle, changing, bookings, shape, duration,
                              earliest, latest_end, affinity):
        if units >= count:
            return start
    return None
