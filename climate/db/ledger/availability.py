"""Read views of the ledger for the availability API: what is free.

:func:`free_capacity` gives the free capacity per provider and class over
a window (usable, peak, free).  :class:`Outlook` (behind
:func:`earliest_start` and the instance availability search) counts how
many units of a shape fit over time: it reads the inventories grouped by
distinct inventory (:func:`inventory_profiles`: a few rows, not one per
provider) and the bookings from the requested start on through
``span_level`` (``climate.db.ledger.windows``), a stretch of time at a
time: the requested window first, then a horizon four times as long each
time the units do not fit, so its statements grow with the logarithm of
how far it has to look, and its rows with the bookings within that
stretch.  Counts only: nothing here books or locks.
"""

import collections

from oslo_db import exception as db_exc
import sqlalchemy as sa

from climate.db.ledger import inventory
from climate.db.ledger import windows
from climate.db import models
from climate.scheduling import capacity

Inv = models.LedgerInventory
Book = models.LedgerBooking


def _bookings_between(session, provider_ids, start, end):
    query = sa.select(Book.provider_id, Book.resource_class,
                      Book.start_date, Book.end_date, Book.amount).where(
        Book.provider_id.in_(sorted(provider_ids)), Book.end_date > start)
    if end is not None:
        query = query.where(Book.start_date < end)
    booked = {}
    for provider, cls, b_start, b_end, amount in session.execute(query):
        booked.setdefault(provider, {}).setdefault(cls, []).append(
            capacity.Booking(b_start, b_end, amount))
    return booked


def free_capacity(session, provider_ids, start, end, kind=None):
    """Per provider and class over ``[start, end)``: ``{provider: {class:
    {'usable', 'peak', 'free'}}}`` (``free`` = usable - peak, at least
    0).  Two statements.

    :param provider_ids: None for every provider (of ``kind``): the
        bookings are then read by the window alone, level by level of
        their length (``span_level``), never the whole table.
    """
    windows.check_window(start, end)
    inventories = inventory.inventories_of(session, provider_ids, kind)
    if provider_ids is not None:
        booked = _bookings_between(session, list(inventories), start,
                                   end) if inventories else {}
    else:
        booked = {}
        for provider, cls, b_start, b_end, amount in session.execute(
                sa.select(Book.provider_id, Book.resource_class,
                          Book.start_date, Book.end_date,
                          Book.amount).where(windows.window(start, end))):
            booked.setdefault(provider, {}).setdefault(cls, []).append(
                capacity.Booking(b_start, b_end, amount))
    view = {}
    for provider, held in inventories.items():
        for cls, inv in held.items():
            rows = booked.get(provider, {}).get(cls, ())
            high = capacity.peak(rows, start, end)
            usable = capacity.usable(inv)
            view.setdefault(provider, {})[cls] = {
                'usable': usable, 'peak': high,
                'free': max(0, usable - high)}
    return view


def earliest_start(session, shape, count, duration, earliest,
                   latest_end=None, affinity=None, provider_ids=None,
                   kind=None):
    """The earliest start at or after ``earliest`` at which ``count``
    units of ``shape`` fit for ``duration`` (``capacity.earliest_window``
    over the providers' inventories and bookings), or None.  An
    :class:`Outlook` over the providers: the requested start first, then
    a growing horizon (a few statements)."""
    if count < 1 or not duration:
        raise ValueError('count and duration must be positive')
    outlook = Outlook(session, shape, provider_ids, kind)
    found = outlook.earliest(count, duration, earliest, latest_end,
                             affinity)
    return None if found is None else found[0]


#: Above this many providers named, the availability reads take every
#: provider (of the kind) and keep the named ones: a list of thousands of
#: ids in the statement costs more than the rows it would leave out.
NAMED_MAX = 1000

_PROFILE = ('total', 'reserved', 'allocation_ratio', 'min_unit', 'max_unit',
            'step_size')
_SEP = ','


def _profile_query(classes, kind, named, per_provider=False):
    columns = []
    for i, cls in enumerate(classes):
        for field in _PROFILE:
            columns.append(sa.func.max(sa.case(
                (Inv.resource_class == cls, getattr(Inv, field)))).label(
                'c%d_%s' % (i, field)))
    query = sa.select(Inv.provider_id, *columns).where(
        Inv.resource_class.in_(classes))
    if kind is not None:
        query = query.where(Inv.provider_kind == kind)
    if named is not None:
        query = query.where(Inv.provider_id.in_(named))
    query = query.group_by(Inv.provider_id)
    if per_provider:
        return query
    inner = query.subquery()
    keys = [inner.c['c%d_%s' % (i, field)]
            for i in range(len(classes)) for field in _PROFILE]
    return sa.select(sa.func.count(), sa.func.aggregate_strings(
        inner.c.provider_id, _SEP), *keys).group_by(*keys)


def _profile(classes, values):
    held = {}
    width = len(_PROFILE)
    for i, cls in enumerate(classes):
        row = values[i * width:(i + 1) * width]
        if row[0] is not None:
            held[cls] = capacity.Inventory(
                int(row[0]), int(row[1]), float(row[2]), int(row[3]),
                None if row[4] is None else int(row[4]), int(row[5]))
    return held


def inventory_profiles(session, classes, kind=None, provider_ids=None):
    """The providers' inventories of ``classes``, grouped: ``[({class:
    Inventory}, [provider ids])]``, one entry per distinct inventory (a
    provider lacking a class has no entry for it).  One grouped statement
    whose answer has as many rows as there are distinct inventories, not
    providers (the ids come joined in one string per row)."""
    classes = sorted(classes)
    named = None if provider_ids is None else sorted(set(provider_ids))
    if named is not None and not named:
        return []
    for attempt in range(2):
        rows = session.execute(_profile_query(classes, kind, named)).all()
        groups = [(_profile(classes, row[2:]), row[1].split(_SEP))
                  for row in rows]
        if all(len(ids) == row[0] for row, (_h, ids) in zip(rows, groups)):
            return groups
        if attempt or session.get_bind().dialect.name != 'mysql':
            break
        # GROUP_CONCAT stops at group_concat_max_len (1 MB by default on
        # MariaDB, 1 kB on MySQL): as long as a packet, then once more
        try:
            session.execute(sa.text(
                'SET SESSION group_concat_max_len = GREATEST('
                '@@session.group_concat_max_len, @@global.max_allowed_packet)'
            ))
        except (db_exc.DBError, sa.exc.DBAPIError):
            break
    # ids holding the separator: one row per provider
    return [(_profile(classes, row[1:]), [row[0]]) for row in
            session.execute(_profile_query(classes, kind, named, True))]


class Outlook:
    """How many units of one shape fit on a set of providers over time:
    the availability search's reads, made once per request and kept
    across the windows it asks about.

    The inventories are read as *profiles* -- each distinct inventory of
    the shape's classes, with the ids of the providers that have it (one
    grouped statement, a few rows however many providers) -- so the
    providers with nothing booked cost a count, not a row each.  The
    bookings are read from a start on, a stretch of time at a time as the
    questions need (:meth:`earliest` tries the requested start first, then
    a growing horizon), grouped by provider and window with an amount per
    class; only providers holding a booking in the stretch read are
    worked out one by one (``capacity.sweep``).  Counts only: it books
    nothing and locks nothing (the booking re-checks under its locks).
    """

    def __init__(self, session, shape, provider_ids=None, kind=None,
                 profiles=None):
        self.session = session
        self.shape = {cls: amount for cls, amount in shape.items()
                      if amount > 0}
        if not self.shape:
            raise ValueError('a shape must ask for some amount of a class')
        self.classes = sorted(self.shape)
        self.kind = kind
        self.named = None if provider_ids is None else set(provider_ids)
        #: ``{provider: {class: Inventory}}`` (one dict per profile)
        self.held = {}
        #: ``{units: providers}`` with nothing booked in what was read
        self.idle = collections.Counter()
        self._base = {}
        self._all = {}
        if self.named is None or self.named:
            if profiles is None:
                profiles = inventory_profiles(session, self.classes, kind,
                                              self._in_statement())
            self._count(profiles)
        self._reset(None)

    # -- reads --

    def _count(self, profiles):
        for held, ids in profiles:
            held = {cls: inv for cls, inv in held.items()
                    if cls in self.shape}
            if self.named is not None:
                ids = [p for p in ids if p in self.named]
            if not ids:
                continue
            units = capacity.units_fit(held, {
                cls: capacity.usable(inv) for cls, inv in held.items()},
                self.shape)
            for provider in ids:
                self.held[provider] = held
                self._base[provider] = units
            if units:
                self.idle[units] += len(ids)
        self._all = dict(self.idle)

    def _in_statement(self):
        """The ids to name in the statements, or None for all."""
        if self.named is not None and len(self.named) <= NAMED_MAX:
            return sorted(self.named)
        return None

    def _reset(self, start):
        """Forget the bookings read; read them again from ``start``."""
        self.idle = collections.Counter(self._all)
        self.busy = {}
        self.rows = {}
        self.last = {}
        self.since = start
        self.until = start

    def _read(self, low, high):
        """The bookings overlapping ``[low, high)`` (high None: no end)
        that started at or after ``self.until`` unless nothing was read
        yet; ``[low, high)`` must go on from what was read."""
        if self.named is not None and not self.named:
            self.until = high
            return
        amounts = [sa.func.sum(sa.case(
            (Book.resource_class == cls, Book.amount), else_=0))
            for cls in self.classes]
        query = sa.select(Book.provider_id, Book.start_date, Book.end_date,
                          *amounts).where(
            Book.resource_class.in_(self.classes))
        named = self._in_statement()
        if named is not None or high is None:
            query = query.where(Book.end_date > low)
            if named is not None:
                query = query.where(Book.provider_id.in_(named))
            if high is not None:
                query = query.where(Book.start_date < high)
        else:
            query = query.where(windows.window(low, high))
        if self.until != self.since:
            query = query.where(Book.start_date >= self.until)
        query = query.group_by(Book.provider_id, Book.start_date,
                               Book.end_date)
        for row in self.session.execute(query):
            provider = row[0]
            held = self.held.get(provider)
            if held is None:
                continue
            if provider not in self.busy:
                self.busy[provider] = held
                units = self._base[provider]
                if units:
                    self.idle[units] -= 1
                    if not self.idle[units]:
                        del self.idle[units]
            amounts = tuple(int(amount or 0) for amount in row[3:])
            if any(amounts) and row[2] > row[1]:
                self.rows.setdefault(provider, []).append(
                    (row[1], row[2], amounts))
            if row[2] > self.last.get(provider, row[2]):
                self.last[provider] = row[2]
            else:
                self.last.setdefault(provider, row[2])
        self.until = high

    def _after(self, start):
        """``(idle, changing)`` for a sweep from ``start``: providers whose
        bookings read all end by ``start`` hold their full capacity from
        then on, as the idle ones do."""
        idle = collections.Counter(self.idle)
        changing = {}
        for provider, last in self.last.items():
            if last > start:
                changing[provider] = self.busy[provider]
            elif self._base[provider]:
                idle[self._base[provider]] += 1
        return idle, changing

    def _cover(self, start, end):
        """Read what ``[start, end)`` needs (end None: everything)."""
        if self.since is None or start < self.since:
            self._reset(start)
        if self.until is None:
            return
        if end is None or end > self.until:
            self._read(self.until, end)

    # -- answers --

    def most(self, affinity=None):
        """Units that fit with nothing booked (more never do)."""
        return capacity.count_fit(self._all, affinity)

    def units(self, start, end, affinity=None):
        """Units that fit over ``[start, end)``."""
        windows.check_window(start, end)
        self._cover(start, end)
        idle, changing = self._after(start)
        for _when, units in capacity.sweep_rows(
                idle, changing, self.rows, self.shape, end - start,
                start, end, affinity):
            return units
        return 0

    def earliest(self, count, duration, earliest, latest_end=None,
                 affinity=None):
        """``(start, units)``: the earliest start at or after ``earliest``
        at which ``count`` units fit over ``[start, start + duration)``
        (ending by ``latest_end`` if given), and how many fit then; or
        None.  Reads the requested window first, then a horizon four
        times as long each time, up to ``latest_end`` (everything when
        None, after a first look)."""
        if count < 1 or not duration:
            raise ValueError('count and duration must be positive')
        if latest_end is not None and earliest + duration > latest_end:
            return None
        if self.most(affinity) < count:
            return None
        span = duration
        while True:
            bound = None
            if latest_end is not None:
                try:
                    bound = min(earliest + span, latest_end)
                except OverflowError:
                    bound = latest_end
            elif span == duration:
                # no end given: the requested window, then everything
                bound = earliest + span
            self._cover(earliest, bound)
            known = self.until
            if latest_end is not None and (known is None or
                                           known > latest_end):
                known = latest_end
            idle, changing = self._after(earliest)
            for when, units in capacity.sweep_rows(
                    idle, changing, self.rows, self.shape,
                    duration, earliest, known, affinity):
                if units >= count:
                    return when, units
            if known is None or known == latest_end:
                return None
            span *= 4
