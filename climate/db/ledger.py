"""The capacity ledger's SQL: inventories, bookings, the locked re-check.

Decision 7 of the design: every kind of resource is an amount of a
*resource class* on a *provider* -- a compute host's ``VCPU``,
``MEMORY_MB``, ``DISK_GB``, later a Cinder pool's ``VOLUME_GB`` or an
external network's ``FLOATING_IP`` -- with an inventory (Placement's
model: total, reserved, allocation ratio, min/max unit, step) in
``ledger_inventories``, and reservations hold amounts of it over
half-open windows ``[start, end)`` in ``ledger_bookings``.

**The rule.**  At no instant do the bookings of a ``(provider, class)``
overlapping it add up to more than the inventory's usable capacity
(``climate.scheduling.capacity.usable``).

**A provider taken whole** (a compute host of a ``physical:host``
reservation) is booked as ``HOST = 1`` *and* all the usable capacity of
each of its other classes over the window.  So the one rule makes whole
and partial bookings exclusive both ways: a host booked whole has no VCPU
left for instance slots, and a host carrying one slot has not all its
VCPU left for a whole booking.  When a provider's inventory changes, its
whole bookings follow it (:func:`set_inventory`).

**Locking.**  A booking is decided and written in the caller's
transaction: :func:`book` locks the inventory rows of the providers
involved (``SELECT ... FOR UPDATE``, ordered by provider and class, so
two bookers never wait on each other in a cycle), reads the bookings of
those providers overlapping the window in one query, re-checks the rule
with the pure functions of ``climate.scheduling.capacity`` and inserts,
or raises Conflict naming the provider, the class and the first instant
that would exceed.  Transactions read committed (PostgreSQL's default,
set on MariaDB's connections by ``climate.db.api``), so the read after
the lock sees what the booker that held it before us committed.  On
SQLite the transaction's write lock (``BEGIN IMMEDIATE``, see
``climate.db.api``) serializes writers and ``FOR UPDATE`` is not needed.

**Set-based.**  Every function costs a fixed number of statements
whatever the number of providers and bookings.  The searches
(:func:`search` for slots, :func:`place_whole` for whole providers) read
providers in id order, a growing prefix at a time
(``climate.scheduling.capacity.SEARCH_CHUNKS``), with their inventories
and bookings over the window: the first prefix is enough unless the low
ids are full.  The availability view of every provider
(:func:`free_capacity`) reads the bookings overlapping a window through
``span_level`` (the bit length of a booking's length in seconds): a
booking of level k that overlaps ``[start, end)`` started after ``start -
2**k``, so each level is one bounded range of the index ``(span_level,
start_date, ...)`` and a few long bookings never make it read every short
one.

**Availability** (:class:`Outlook`, behind :func:`earliest_start` and the
instance availability search) reads the inventories grouped by distinct
inventory (:func:`inventory_profiles`: a few rows, not one per provider)
and the bookings from the requested start on through ``span_level``, a
stretch of time at a time: the requested window first, then a horizon
four times as long each time the units do not fit, so its statements
grow with the logarithm of how far it has to look, and its rows with
the bookings within that stretch.

Every public function but :func:`run` takes the caller's SQLAlchemy
session (``with db_api.writer(ctx) as session``) and joins its
transaction, so a plugin books in the transaction of the lease; ``run``
runs one in a transaction of its own, re-run whole when it loses a
deadlock (``retry_on_deadlock``).
"""

import collections
import datetime
import functools
import threading
import uuid

from oslo_db import exception as db_exc
import sqlalchemy as sa

from climate.db import api as db_api
from climate.db import models
from climate import dates
from climate import exceptions
from climate.scheduling import capacity

Inv = models.LedgerInventory
Book = models.LedgerBooking
WHOLE = capacity.WHOLE

#: The kind of provider a compute host is.
COMPUTE_HOST = 'compute_host'
#: The kind of provider a volume pool is (``climate.db.volume_pools``).
VOLUME_POOL = 'volume_pool'
#: The kind of provider a registered floating IP address is
#: (``climate.db.floatingips``).
FLOATINGIP = 'floatingip'
#: The kind of provider a reservable network segment is
#: (``climate.db.network_segments``).
NETWORK_SEGMENT = 'network_segment'

#: Lock what a booking takes (the rule's guard): the inventory rows, and
#: the host rows a host choice locks first (``climate.db.hosts``).  Only
#: the concurrency tests turn it off, to show that their checks find
#: overbooking then.
LOCKING = True

#: Rounds of search, lock and re-check :func:`place` makes before it
#: gives up on providers taken meanwhile by concurrent bookers.
PLACE_ROUNDS = 3

#: Highest ``span_level`` searched: 2**40 seconds is 34,000 years.
MAX_SPAN_LEVEL = 40
#: Oldest time a level's range starts at (MariaDB's DATETIME starts at
#: the year 1000).
_OLDEST = datetime.datetime(1000, 1, 1)

#: One amount wanted: ``(provider_id, resource_class, amount)``.  The
#: class ``HOST`` (``capacity.WHOLE``) with amount 1 takes the provider
#: whole.
Request = collections.namedtuple('Request', 'provider_id resource_class '
                                 'amount')

_INV_COLUMNS = (Inv.provider_id, Inv.resource_class, Inv.total, Inv.reserved,
                Inv.allocation_ratio, Inv.min_unit, Inv.max_unit,
                Inv.step_size)


# a datetime as the messages give it
_fmt = dates.format_timestamp


def span_level(start, end):
    """The ``span_level`` of a booking over ``[start, end)``."""
    return int((end - start).total_seconds()).bit_length()


def _check_window(start, end):
    if not (isinstance(start, datetime.datetime) and
            isinstance(end, datetime.datetime)) or not end > start:
        raise exceptions.InvalidInput(
            reason='a booking needs a start before its end (got %s, %s)' %
            (start, end))
    if span_level(start, end) > MAX_SPAN_LEVEL:
        raise exceptions.InvalidInput(
            reason='a booking cannot last more than 2**%d seconds' %
            MAX_SPAN_LEVEL)


def _overlaps(start, end):
    """WHERE: bookings overlapping ``[start, end)``, level by level."""
    levels = []
    for level in range(MAX_SPAN_LEVEL + 1):
        try:
            after = max(_OLDEST,
                        start - datetime.timedelta(seconds=2 ** level))
        except OverflowError:
            after = _OLDEST
        levels.append(sa.and_(Book.span_level == level,
                              Book.start_date > after))
    return sa.and_(sa.or_(*levels), Book.start_date < end,
                   Book.end_date > start)


def window(start, end):
    """WHERE clause: the bookings overlapping ``[start, end)``, read level
    by level of their length (one bounded range of the ``(span_level,
    start_date, ...)`` index per level, never the whole table)."""
    return _overlaps(start, end)


def _inventory(row):
    return capacity.Inventory(row.total, row.reserved, row.allocation_ratio,
                              row.min_unit, row.max_unit, row.step_size)


def _by_provider(rows):
    """``{provider: {class: Inventory}}`` of inventory rows."""
    found = {}
    for row in rows:
        found.setdefault(row.provider_id, {})[row.resource_class] = \
            _inventory(row)
    return found


def _locking(query):
    """``query`` as a locking read of inventory rows by provider.

    Through the ``(provider_id, resource_class)`` index on MariaDB: on a
    small table its optimizer scans the whole table instead, and a locking
    scan waits on (and takes) every row it passes, so bookers of different
    providers queued and deadlocked on each other's rows."""
    if not LOCKING:
        return query
    for dialect in ('mysql', 'mariadb'):
        query = query.with_hint(Inv, 'FORCE INDEX (%s)' %
                                models.LEDGER_INVENTORY_KEY, dialect)
    return query.with_for_update()


@functools.lru_cache(maxsize=None)
def _lock_query(locking):
    # built once (per LOCKING, which only the concurrency tests change):
    # every booking runs it
    query = sa.select(Inv.id, *_INV_COLUMNS).where(Inv.provider_id.in_(
        sa.bindparam('providers', expanding=True))).order_by(
        Inv.provider_id, Inv.resource_class)
    return _locking(query) if locking else query


@functools.lru_cache(maxsize=None)
def _bump_statement():
    # by primary key, rows already locked in key order: no scan, no wait
    return sa.update(Inv).where(Inv.id.in_(sa.bindparam(
        'ids', expanding=True))).values(
        # not an inventory change: its updated_at stays
        generation=Inv.generation + 1, updated_at=Inv.updated_at)


def _bump(connection, row_ids):
    """Write the generation of the inventory rows ``row_ids``: what makes
    two writers of a provider's capacity conflict on every database (see
    the module's doc, *Locking*)."""
    if LOCKING and row_ids:
        connection.execute(_bump_statement(), {'ids': sorted(row_ids)})


def _lock(session, provider_ids):
    """Lock the inventory rows of ``provider_ids`` (provider, then class
    order), bump their generation and return them: ``{provider: {class:
    Inventory}}``."""
    if not provider_ids:
        return {}
    connection = session.connection()
    rows = connection.execute(_lock_query(LOCKING),
                              {'providers': sorted(set(provider_ids))}).all()
    _bump(connection, [row.id for row in rows])
    return _by_provider(rows)


def started_after(session, when):
    """The earliest start a booking overlapping a window from ``when`` on
    may have: ``when`` minus the longest booking's length bound
    (``2**max(span_level)`` seconds; one seek of the ``(span_level,
    ...)`` index).  Bounds a provider's range of the ``(provider, class,
    start, ...)`` index below, so that reading its bookings over a window
    does not read every booking of its that starts before it.

    A booking of level k lasts less than 2**k seconds, so one that ends
    after ``when`` started after ``when - 2**k``.  Read after the lock
    on the providers it bounds, it sees every booking of theirs: any
    other booking written meanwhile is on providers not locked by the
    caller."""
    return start_bound(when, longest_level(session))


def longest_level(session):
    """The highest ``span_level`` of any booking (None with none): one
    seek, for callers bounding several windows (:func:`start_bound`).
    Core on the session's connection: the quota check of every create
    reads it, and the ORM's execute costs more than the seek."""
    return session.connection().execute(_LONGEST).scalar()


_LONGEST = sa.select(sa.func.max(Book.span_level))


def start_bound(when, level):
    """:func:`started_after` of ``when`` given :func:`longest_level`."""
    if level is None:
        return _OLDEST
    try:
        return max(_OLDEST, when - datetime.timedelta(seconds=2 ** level))
    except OverflowError:
        return _OLDEST


def time_param(name):
    """A bound datetime parameter, for statements built once and run with
    parameters on the session's connection: building a statement and
    running it through the ORM cost more than the statement itself on
    the paths of every create (host choice, quota check)."""
    return sa.bindparam(name, type_=sa.DateTime())


def overlapping_at():
    """WHERE clause: :func:`overlapping` with its window and bound below
    as the parameters ``start``, ``end`` and ``after``, for statements
    built once."""
    return sa.and_(Book.start_date > time_param('after'),
                   Book.start_date < time_param('end'),
                   Book.end_date > time_param('start'))


def overlapping(session, start, end, after=None):
    """WHERE clause: the bookings overlapping ``[start, end)``, for a read
    of some providers' own index ranges, bounded below by ``after``
    (:func:`started_after` of ``start``, read now when not given)."""
    if after is None:
        after = started_after(session, start)
    return sa.and_(Book.start_date > after, Book.start_date < end,
                   Book.end_date > start)


@functools.lru_cache(maxsize=None)
def _booked_query(excluding):
    query = sa.select(Book.provider_id, Book.resource_class,
                      Book.start_date, Book.end_date, Book.amount).where(
        Book.provider_id.in_(sa.bindparam('providers', expanding=True)),
        overlapping_at())
    if excluding:
        query = query.where(Book.reservation_id != sa.bindparam('mine'))
    return query


def _booked(session, provider_ids, start, end, exclude_reservation=None):
    """``{provider: {class: [Booking]}}`` over ``[start, end)`` on
    providers the caller locked, as committed now (one query, on the
    session's connection: built once, it runs on every booking)."""
    if not provider_ids:
        return {}
    rows = session.connection().execute(
        _booked_query(exclude_reservation is not None), {
            'providers': sorted(set(provider_ids)),
            'after': started_after(session, start), 'start': start,
            'end': end, 'mine': exclude_reservation})
    booked = {}
    for provider, cls, b_start, b_end, amount in rows:
        booked.setdefault(provider, {}).setdefault(cls, []).append(
            capacity.Booking(b_start, b_end, amount))
    return booked


def _wanted(requests):
    """``{(provider, class): amount}`` of ``requests``, summed; a whole
    provider as ``(provider, HOST): 1``."""
    wanted = collections.defaultdict(int)
    for provider, cls, amount in requests:
        if not isinstance(amount, int) or isinstance(amount, bool) or \
                amount < 0:
            raise exceptions.InvalidInput(
                reason='amount of %s on provider %s must be a '
                       'non-negative integer, not %r' % (cls, provider,
                                                         amount))
        if cls == WHOLE and amount != 1:
            raise exceptions.InvalidInput(
                reason='a provider is taken whole once (%s = 1), not %r' % (
                    WHOLE, amount))
        if amount:
            wanted[provider, cls] += amount
    return dict(wanted)


def _expand(wanted, inventories):
    """``wanted`` with each whole provider turned into all its usable
    capacity (``capacity.whole_amounts``)."""
    expanded = collections.defaultdict(int)
    for (provider, cls), amount in wanted.items():
        held = inventories.get(provider, {})
        if cls not in held:
            raise exceptions.Conflict(
                reason='provider %s has no %s inventory' % (provider, cls),
                provider=provider, resource_class=cls, at=None)
        if cls == WHOLE:
            for each, usable in capacity.whole_amounts(held).items():
                if usable:
                    expanded[provider, each] += usable
        else:
            expanded[provider, cls] += amount
    return dict(expanded)


def _recheck(expanded, inventories, booked, start, end):
    """Conflict naming the first ``(provider, class)`` (in lock order)
    and instant at which ``expanded`` and ``booked`` would exceed the
    usable capacity."""
    for (provider, cls), amount in sorted(expanded.items()):
        usable = capacity.usable(inventories[provider][cls])
        rows = booked.get(provider, {}).get(cls, ())
        hit = capacity.first_excess(rows, start, end, usable - amount)
        if hit is not None:
            when, held = hit
            raise exceptions.Conflict(
                reason='not enough %s on provider %s at %s UTC: %d of %d '
                       'are booked then and %d more are asked' % (
                           cls, provider, _fmt(when), held, usable, amount),
                provider=provider, resource_class=cls, at=when)


def _insert(session, reservation_id, lease_id, expanded, start, end):
    level = span_level(start, end)
    rows = [dict(id=str(uuid.uuid4()), reservation_id=reservation_id,
                 lease_id=lease_id, provider_id=provider,
                 resource_class=cls, amount=amount, start_date=start,
                 end_date=end, span_level=level)
            for (provider, cls), amount in sorted(expanded.items())]
    if rows:
        project_id = db_api.lease_project(session, lease_id)
        for row in rows:
            row['project_id'] = project_id
        session.execute(sa.insert(Book), rows)


# -- booking ------------------------------------------------------------------

def book(session, reservation_id, lease_id, requests, start, end,
         exclude_reservation=None, locked=None):
    """Book ``requests`` (:class:`Request` tuples) for a reservation over
    ``[start, end)``, in the caller's transaction, or raise Conflict.

    Locks the inventory rows of the providers named, reads their bookings
    overlapping the window (those of ``exclude_reservation`` left out),
    re-checks the rule and inserts.  Amounts are totals per provider and
    class; unit bounds (max_unit...) are the search's concern
    (:func:`place`).

    :param locked: ``{provider: {class: Inventory}}`` of providers the
        caller locked in this transaction (:func:`lock`) and found
        without any booking over the window (:func:`busy_providers`).
        When it holds every provider asked for, they are neither locked
        nor read again: the rule is re-checked against nothing booked.
    :returns: ``{(provider, class): amount}`` booked, a whole provider
        expanded into its classes.
    :raises Conflict: with ``provider``, ``resource_class`` and ``at``
        (the first instant that would exceed) in its ``kwargs``.
    """
    _check_window(start, end)
    wanted = _wanted(requests)
    providers = sorted({provider for provider, _cls in wanted})
    if locked is not None and all(p in locked for p in providers):
        inventories, booked = locked, {}
    else:
        inventories = _lock(session, providers)
        booked = _booked(session, providers, start, end, exclude_reservation)
    expanded = _expand(wanted, inventories)
    _recheck(expanded, inventories, booked, start, end)
    _insert(session, reservation_id, lease_id, expanded, start, end)
    return expanded


def release(session, reservation_id, provider_ids=None):
    """Remove the reservation's bookings (on ``provider_ids`` only, if
    given); returns how many rows went."""
    query = sa.delete(Book).where(Book.reservation_id == reservation_id)
    if provider_ids is not None:
        query = query.where(Book.provider_id.in_(sorted(provider_ids)))
    return session.execute(query).rowcount


def bookings_of(session, reservation_id):
    """The reservation's bookings: ``[(provider, class, amount, start,
    end)]`` by provider and class."""
    return [tuple(r) for r in session.execute(sa.select(
        Book.provider_id, Book.resource_class, Book.amount, Book.start_date,
        Book.end_date).where(Book.reservation_id == reservation_id).order_by(
        Book.provider_id, Book.resource_class, Book.start_date))]


def providers_of(session, reservation_id, kind, after=None):
    """The providers of ``kind`` the reservation books (with a booking
    ending after ``after``, when given)."""
    query = sa.select(Book.provider_id).where(
        Book.reservation_id == reservation_id,
        Book.provider_id.like(kind + ':%'))
    if after is not None:
        query = query.where(Book.end_date > after)
    return set(session.execute(query).scalars())


def requests_of(session, reservation_id):
    """What the reservation holds, as :class:`Request` tuples (a whole
    provider as ``HOST = 1``), and its lease id; ``([], None)`` if it
    holds nothing."""
    rows = session.execute(sa.select(
        Book.provider_id, Book.resource_class, Book.amount,
        Book.lease_id).where(Book.reservation_id == reservation_id)).all()
    whole = {r.provider_id for r in rows if r.resource_class == WHOLE}
    requests = [Request(p, WHOLE, 1) for p in sorted(whole)]
    requests += [Request(r.provider_id, r.resource_class, r.amount)
                 for r in rows if r.provider_id not in whole]
    return requests, (rows[0].lease_id if rows else None)


def rebook(session, reservation_id, lease_id, requests, start, end):
    """Replace the reservation's bookings with ``requests`` over ``[start,
    end)`` (moved dates, changed amounts, other providers), re-checked
    under the lock of every provider it held or will hold, its own old
    bookings left out; Conflict leaves them as they were."""
    _check_window(start, end)
    wanted = _wanted(requests)
    old = {r[0] for r in bookings_of(session, reservation_id)}
    providers = sorted(old | {provider for provider, _cls in wanted})
    inventories = _lock(session, providers)
    expanded = _expand(wanted, inventories)
    booked = _booked(session, [p for p, _c in expanded], start, end,
                     exclude_reservation=reservation_id)
    _recheck(expanded, inventories, booked, start, end)
    release(session, reservation_id)
    _insert(session, reservation_id, lease_id, expanded, start, end)
    return expanded


def move(session, reservation_id, start, end):
    """Give the reservation's bookings the window ``[start, end)``,
    amounts unchanged (:func:`rebook`); returns what it holds."""
    requests, lease_id = requests_of(session, reservation_id)
    if not requests:
        return {}
    return rebook(session, reservation_id, lease_id, requests, start, end)


def resize(session, reservation_id, requests, start, end):
    """Give the reservation ``requests`` instead of what it holds, over
    ``[start, end)`` (:func:`rebook`, its lease id kept)."""
    _old, lease_id = requests_of(session, reservation_id)
    if lease_id is None:
        raise exceptions.Conflict(
            reason='reservation %s holds nothing to resize' % reservation_id)
    return rebook(session, reservation_id, lease_id, requests, start, end)


# -- whole providers picked by their owner (physical:host) --------------------

def lock(session, provider_ids):
    """Lock the inventory rows of ``provider_ids`` as a booking does
    (provider, then class order) and return ``{provider: {class:
    Inventory}}``.  A plugin that picks providers itself locks them with
    this before it checks them (:func:`busy_providers`) and books
    (:func:`book`): the lock is held from the check to the commit."""
    return _lock(session, provider_ids)


def busy_providers(session, provider_ids, start, end,
                   exclude_reservation=None):
    """Which of ``provider_ids`` (locked by the caller, :func:`lock`)
    hold a booking of any class over ``[start, end)``, as committed now:
    one query, a locking read on MariaDB (see :func:`book`)."""
    return set(_booked(session, provider_ids, start, end,
                       exclude_reservation))


def set_end(session, reservation_id, end):
    """Give each booking of the reservation the end ``end``, keeping its
    own start (an active reservation healed onto another provider holds
    that one from the swap on), re-checked under the lock of every
    provider it holds, its own bookings left out; whole providers take
    their capacity of now, as in :func:`rebook`.  Conflict (or
    InvalidInput for an end not after a start) leaves them as they were.

    :returns: ``{(provider, class): amount}`` booked.
    """
    rows = session.execute(sa.select(
        Book.provider_id, Book.resource_class, Book.amount, Book.start_date,
        Book.lease_id).where(Book.reservation_id == reservation_id)).all()
    if not rows:
        return {}
    inventories = _lock(session, sorted({r.provider_id for r in rows}))
    groups = {}
    for row in rows:
        groups.setdefault(row.start_date, []).append(row)
    plans = []
    for start, group in sorted(groups.items()):
        _check_window(start, end)
        whole = {r.provider_id for r in group if r.resource_class == WHOLE}
        requests = [Request(p, WHOLE, 1) for p in sorted(whole)] + [
            Request(r.provider_id, r.resource_class, r.amount)
            for r in group if r.provider_id not in whole]
        expanded = _expand(_wanted(requests), inventories)
        booked = _booked(session, sorted({p for p, _c in expanded}), start,
                         end, exclude_reservation=reservation_id)
        _recheck(expanded, inventories, booked, start, end)
        plans.append((start, expanded))
    release(session, reservation_id)
    held = {}
    for start, expanded in plans:
        _insert(session, reservation_id, rows[0].lease_id, expanded, start,
                end)
        held.update(expanded)
    return held


def move_whole(session, booking_id, old_provider, new_provider, start):
    """Move a provider taken whole -- the reservation whose ``HOST``
    booking is ``booking_id`` -- from ``old_provider`` to
    ``new_provider``, held from ``start`` to the booking's end, if it is
    still on ``old_provider`` (compare-and-set: of two concurrent movers
    one moves it).  The new provider is booked by :func:`book` (locked,
    re-checked, Conflict before anything is written), then the
    reservation's bookings on the old one go.

    :returns: True when moved, False when the booking is not (any more)
        on ``old_provider``.
    """
    _lock(session, [old_provider, new_provider])
    query = sa.select(Book.reservation_id, Book.lease_id,
                      Book.end_date).where(
        Book.id == booking_id, Book.provider_id == old_provider,
        Book.resource_class == WHOLE)
    if LOCKING:
        query = query.with_for_update()
    row = session.execute(query).one_or_none()
    if row is None:
        return False
    book(session, row.reservation_id, row.lease_id,
         [Request(new_provider, WHOLE, 1)], start, row.end_date)
    release(session, row.reservation_id, [old_provider])
    return True


# -- search -------------------------------------------------------------------

def _check_count(count):
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise exceptions.InvalidInput(
            reason='the number of units must be a positive integer, not %r'
            % (count,))


def _shape_classes(shape):
    classes = sorted(cls for cls, amount in shape.items() if amount > 0)
    if not classes or WHOLE in classes:
        raise exceptions.InvalidInput(
            reason='a shape asks a positive amount of some classes other '
                   'than %s' % WHOLE)
    return classes


def _next_providers(session, kind, after, size):
    """The next ``size`` provider ids (all if None) of ``kind`` after
    ``after``, in id order: one index range."""
    query = sa.select(Inv.provider_id).distinct()
    if kind is not None:
        query = query.where(Inv.provider_kind == kind)
    if after is not None:
        query = query.where(Inv.provider_id > after)
    query = query.order_by(Inv.provider_id)
    if size is not None:
        query = query.limit(size)
    return session.execute(query).scalars().all()


def _provider_chunks(session, kind, allowed):
    """``(ids, size)`` chunks of providers in id order, growing by
    ``SEARCH_CHUNKS`` and then the rest (``size`` None): from ``allowed``
    when the caller names the providers, else read a chunk at a time.  A
    chunk shorter than its size is the last."""
    position, after = 0, None
    for size in list(capacity.SEARCH_CHUNKS) + [None]:
        if allowed is not None:
            ids = allowed[position:None if size is None else position + size]
            position += len(ids)
        else:
            ids = _next_providers(session, kind, after, size)
            after = ids[-1] if ids else after
        yield ids, size


def _fits_of(session, ids, shape, classes, start, end, kind,
             exclude_reservation, count=None, after=None):
    """``{provider: units of shape}`` over ``[start, end)`` for ``ids``:
    their inventories and their bookings over the window, two
    statements.

    For one unit (``count`` 1), a third one first: the sum and the
    largest of each provider's bookings per class, which bound its fit
    (``capacity.fit_bounds``); only the providers whose exact fit may
    change the plan have their bookings read
    (``capacity.one_unit_sweep``), the others showing a fit that plans
    the same (a lower bound, for a provider that is not the choice).
    """
    query = sa.select(*_INV_COLUMNS).where(
        Inv.provider_id.in_(ids), Inv.resource_class.in_(classes))
    if kind is not None:
        query = query.where(Inv.provider_kind == kind)
    inventories = _by_provider(session.execute(query))

    over = overlapping(session, start, end, after)

    def over_window(query, providers):
        query = query.where(
            Book.provider_id.in_(providers),
            Book.resource_class.in_(classes), over)
        if exclude_reservation is not None:
            query = query.where(Book.reservation_id != exclude_reservation)
        return query

    fits = {}
    sweep = sorted(inventories)
    if count == 1 and sweep:
        sums, largest = {}, {}
        for provider, cls, total, high in session.execute(over_window(
                sa.select(Book.provider_id, Book.resource_class,
                          sa.func.sum(Book.amount), sa.func.max(Book.amount)),
                sweep).group_by(Book.provider_id, Book.resource_class)):
            sums.setdefault(provider, {})[cls] = int(total)
            largest.setdefault(provider, {})[cls] = int(high)
        fits, sweep = capacity.one_unit_sweep({
            p: capacity.fit_bounds(held, sums.get(p, {}),
                                   largest.get(p, {}), shape)
            for p, held in inventories.items()})
    booked = {}
    if sweep:
        for provider, cls, b_start, b_end, amount in session.execute(
                over_window(sa.select(Book.provider_id, Book.resource_class,
                                      Book.start_date, Book.end_date,
                                      Book.amount), sweep)):
            booked.setdefault(provider, {}).setdefault(cls, []).append(
                capacity.Booking(b_start, b_end, amount))
    for p in sweep:
        fits[p] = capacity.provider_fit(inventories[p], booked.get(p, {}),
                                        shape, start, end)
    return {p: fits.get(p, 0) for p in ids}


_SORTED = collections.OrderedDict()
_SORTED_LOCK = threading.Lock()
_SORTED_SIZE = 8


def _sorted_ids(providers):
    """``sorted(set(providers))``, remembered for the last few lists: a
    plugin passes the same thousands of matching ids to every search,
    and hashing them costs a fraction of sorting them.  The list is
    shared: read it, never change it."""
    key = tuple(providers)
    with _SORTED_LOCK:
        hit = _SORTED.get(key)
        if hit is not None:
            _SORTED.move_to_end(key)
            return hit
    ids = sorted(set(key))
    with _SORTED_LOCK:
        _SORTED[key] = ids
        while len(_SORTED) > _SORTED_SIZE:
            _SORTED.popitem(last=False)
    return ids


def search(session, shape, count, start, end, affinity=None, providers=None,
           kind=None, exclude_reservation=None, skip=()):
    """Where ``count`` units of ``shape`` go over ``[start, end)`` by the
    placement rule of ``climate.scheduling.capacity`` (providers in id
    order, a growing prefix at a time, best fit on the first prefix that
    holds them): ``(fits, plan)``, with ``fits`` the units that fit on
    each provider examined (for one unit, a lower bound on the providers
    that are not the choice: see :func:`_fits_of`) and ``plan``
    ``{provider: units}`` or None.

    Each round reads the next ids (unless ``providers`` names them), their
    inventories and their bookings over the window: at most three
    statements a round (four for one unit: :func:`_fits_of`) and
    ``len(SEARCH_CHUNKS) + 1`` rounds, whatever the
    number of providers and bookings; the first round is enough unless
    the low ids are full.

    :param providers: provider ids the caller allows (e.g. the hosts
        matching a filter); None for any of ``kind``.
    :param skip: providers to count as full (lost to concurrent bookers).
    """
    _check_window(start, end)
    _check_count(count)
    classes = _shape_classes(shape)
    allowed = None if providers is None else _sorted_ids(providers)
    skip = set(skip)
    found = {}
    after = started_after(session, start)
    for ids, size in _provider_chunks(session, kind, allowed):
        live = [p for p in ids if p not in skip]
        if live:
            found.update(_fits_of(session, live, shape, classes, start, end,
                                  kind, exclude_reservation, count, after))
        found.update((p, 0) for p in ids if p in skip)
        placed = capacity.plan(found, count, affinity) if found else None
        if placed is not None or size is None or len(ids) < size:
            return found, placed
    return found, None


def _shape_requests(shape, placed):
    return [Request(provider, cls, units * amount)
            for provider, units in sorted(placed.items())
            for cls, amount in sorted(shape.items()) if amount > 0]


def place(session, reservation_id, lease_id, shape, count, start, end,
          affinity=None, providers=None, kind=None,
          exclude_reservation=None):
    """Find where ``count`` units of ``shape`` fit over ``[start, end)``
    (affinity: None, True for one provider, False for distinct ones) and
    book them, in the caller's transaction.

    Searches (:func:`search`), locks the chosen providers and re-checks
    under the lock how many units each still holds; providers taken
    meanwhile by another booker count as full and the search runs again,
    at most :data:`PLACE_ROUNDS` times.

    :returns: ``{provider: units}``.
    :raises Conflict: they do not fit; the message says how many do.
        Its kwargs: ``available`` (the units that fit, the providers
        lost under lock counted full, as the search counts them) and
        ``taken`` (those providers, lost to concurrent bookers: a
        refusal's own reads may still find them free).
    """
    skip = set()
    found = {}
    for _round in range(PLACE_ROUNDS):
        found, placed = search(session, shape, count, start, end, affinity,
                               providers, kind, exclude_reservation, skip)
        if placed is None:
            break
        chosen = sorted(placed)
        inventories = _lock(session, chosen)
        booked = _booked(session, chosen, start, end, exclude_reservation)
        lost = {p for p in chosen
                if capacity.provider_fit(inventories.get(p, {}),
                                         booked.get(p, {}), shape, start,
                                         end) < placed[p]}
        if not lost:
            _insert(session, reservation_id, lease_id,
                    _expand(_wanted(_shape_requests(shape, placed)),
                            inventories), start, end)
            return placed
        skip |= lost
    # the providers lost under lock in the last round count as the next
    # search would count them, full: ``available`` is the decision's own
    # figure, never one it refused with
    found.update((p, 0) for p in skip if p in found)
    available = capacity.total_fit(found, affinity)
    raise exceptions.Conflict(
        reason='%d unit(s) of %s %sfit from %s to %s UTC; %d asked%s' % (
            available, _shape_text(shape),
            {True: 'on one provider ', False: 'on distinct providers ',
             None: ''}[affinity], _fmt(start), _fmt(end), count,
            _taken_text(skip)),
        available=available, at=start, taken=sorted(skip))


def _taken_text(taken):
    return ' (%d provider(s) taken meanwhile by concurrent bookers)' % len(
        taken) if taken else ''


def _shape_text(shape):
    return '{%s}' % ', '.join('%s: %d' % (cls, amount)
                              for cls, amount in sorted(shape.items()))


def _free_units(session, ids, start, end, kind, cls, limit=None, after=None):
    """Which of ``ids`` (any of ``kind`` if None) have a ``cls`` inventory
    and no booking of ``cls`` overlapping ``[start, end)``, the lowest
    ``limit`` of them: one statement, stopping at the ``limit``-th free
    one, each provider checked by a range of the ``(provider, class,
    start)`` index that ends at the first overlapping booking.

    Measured (benchmarks/bench_floatingips.py, 4,000 segments, the first
    free one at the 629th): this anti-join costs MariaDB 14 us a
    provider where the read of each provider's latest booking (a
    correlated ``ORDER BY ... LIMIT 1``) cost 54.  A provider of larger
    capacity may be found busy while it has room: :func:`place` is the
    search for those."""
    busy = sa.exists().where(
        Book.provider_id == Inv.provider_id, Book.resource_class == cls,
        overlapping(session, start, end, after))
    query = sa.select(Inv.provider_id).where(
        Inv.resource_class == cls, ~busy).order_by(Inv.provider_id)
    if ids is not None:
        query = query.where(Inv.provider_id.in_(ids))
    if kind is not None:
        query = query.where(Inv.provider_kind == kind)
    if limit is not None:
        query = query.limit(limit)
    return list(session.execute(query).scalars())


def _free_of(session, ids, start, end, kind, exclude_reservation, cls,
             after=None):
    """Which of ``ids`` have a ``cls`` inventory and no booking over
    ``[start, end)`` (of any class for ``HOST``, of ``cls`` otherwise):
    two statements."""
    query = sa.select(Inv.provider_id).where(
        Inv.provider_id.in_(ids), Inv.resource_class == cls)
    if kind is not None:
        query = query.where(Inv.provider_kind == kind)
    held = set(session.execute(query).scalars())
    if not held:
        return []
    query = sa.select(Book.provider_id).where(
        Book.provider_id.in_(sorted(held)),
        overlapping(session, start, end, after))
    if cls != WHOLE:
        query = query.where(Book.resource_class == cls)
    if exclude_reservation is not None:
        query = query.where(Book.reservation_id != exclude_reservation)
    busy = set(session.execute(query.distinct()).scalars())
    return sorted(held - busy)


#: How many more of the named candidates, in id order, each statement
#: of a search for units of capacity one checks (then all the rest).
#: Each candidate id is a bound parameter, and a long list costs more to
#: send and plan than the check itself (on MariaDB, 40 ms for 4,000 where
#: the check took 9): the prefix doubles until enough are found.
UNIT_CHUNKS = (64, 128, 256, 512, 1024, 2048)


def _unit_chunks(allowed):
    """Successive prefixes of ``allowed`` (:data:`UNIT_CHUNKS`, then the
    rest)."""
    position = 0
    for size in UNIT_CHUNKS + (None,):
        if position >= len(allowed):
            return
        chunk = allowed[position:None if size is None else position + size]
        position += len(chunk)
        yield chunk


def free_units(session, provider_ids, cls, start, end, kind=None):
    """Which of ``provider_ids`` have a ``cls`` inventory and no booking
    of ``cls`` over ``[start, end)``, in id order: for a class of
    capacity one (a floating IP, a network segment), the providers free
    over the window (a statement per prefix, :data:`UNIT_CHUNKS`; no
    booking row is read)."""
    _check_window(start, end)
    after = started_after(session, start)
    free = []
    for ids in _unit_chunks(_sorted_ids(provider_ids)):
        free += _free_units(session, ids, start, end, kind, cls,
                            after=after)
    return free


def _place_free(session, reservation_id, lease_id, cls, count, start, end,
                providers, kind, exclude_reservation):
    """Book one ``cls`` on each of the ``count`` lowest ids free of it
    over ``[start, end)``, then :func:`book` (which re-checks under the
    lock).  Whole providers are found a prefix of ids at a time as
    :func:`search` does (at most three statements a round); units of
    capacity one by a statement per doubling prefix of the candidates
    (:data:`UNIT_CHUNKS`, :func:`_free_units`).  Providers taken
    meanwhile by concurrent bookers are replaced, at most
    :data:`PLACE_ROUNDS` times; the Conflict names them (``taken``) and
    counts only the others free (``available``)."""
    _check_window(start, end)
    _check_count(count)
    allowed = None if providers is None else _sorted_ids(providers)
    skip = set()
    free = []
    # a class of capacity one, with nothing left out: one statement per
    # prefix of the candidates (_free_units), each stopping at the
    # count-th free one; all the providers of the kind in one
    units = cls != WHOLE and exclude_reservation is None
    after = started_after(session, start)
    for _round in range(PLACE_ROUNDS):
        free = []
        if units and allowed is None:
            free = [p for p in _free_units(session, None, start, end, kind,
                                           cls, count + len(skip), after)
                    if p not in skip]
        elif units:
            for ids in _unit_chunks(allowed):
                live = [p for p in ids if p not in skip]
                if live:
                    free += _free_units(session, live, start, end, kind,
                                        cls, count - len(free), after)
                if len(free) >= count:
                    break
        else:
            for ids, size in _provider_chunks(session, kind, allowed):
                live = [p for p in ids if p not in skip]
                if live:
                    free += _free_of(session, live, start, end, kind,
                                     exclude_reservation, cls, after)
                if len(free) >= count or size is None or len(ids) < size:
                    break
        free = free[:count]
        if len(free) < count:
            break
        try:
            # refused before it writes anything: nothing to undo
            book(session, reservation_id, lease_id,
                 [Request(p, cls, 1) for p in free], start, end,
                 exclude_reservation)
            return free
        except exceptions.Conflict as exc:
            skip.add(exc.kwargs.get('provider'))
    # the ones refused under lock are not free: the count is the
    # decision's, never one it refused with
    skip.discard(None)
    free = [p for p in free if p not in skip]
    raise exceptions.Conflict(
        reason='%d provider(s) are free %s from %s to %s UTC; %d asked%s'
        % (len(free), 'whole' if cls == WHOLE else 'of ' + cls,
           _fmt(start), _fmt(end), count, _taken_text(skip)),
        available=len(free), at=start, taken=sorted(skip))


def place_whole(session, reservation_id, lease_id, count, start, end,
                providers=None, kind=COMPUTE_HOST, exclude_reservation=None):
    """Book ``count`` providers whole over ``[start, end)``: the lowest
    ids among those with a ``HOST`` inventory and no booking of any class
    over the window (see :func:`_place_free`).

    :returns: the provider ids booked.
    :raises Conflict: fewer than ``count`` are free.
    """
    return _place_free(session, reservation_id, lease_id, WHOLE, count,
                       start, end, providers, kind, exclude_reservation)


def place_units(session, reservation_id, lease_id, cls, count, start, end,
                providers=None, kind=None, exclude_reservation=None):
    """Book one ``cls`` on each of ``count`` distinct providers whose
    ``cls`` capacity is one (a floating IP, a network segment): a provider
    is free iff no booking of ``cls`` overlaps ``[start, end)``
    (:func:`_free_units`; see :func:`_place_free`).
    The lowest free ids are taken, as :func:`place` with affinity false
    would; :func:`book` re-checks each under its lock, so a provider of
    larger or no usable capacity is never overbooked, only refused.

    :returns: the provider ids booked.
    :raises Conflict: fewer than ``count`` are free.
    """
    if cls == WHOLE:
        raise exceptions.InvalidInput(
            reason='place_whole books whole providers, not place_units')
    return _place_free(session, reservation_id, lease_id, cls, count,
                       start, end, providers, kind, exclude_reservation)


# -- inventory ----------------------------------------------------------------

def _validated(provider_id, values):
    if isinstance(values, capacity.Inventory):
        values = values._asdict()
    inv = dict(values)
    for key in ('total', 'reserved', 'min_unit', 'max_unit', 'step_size'):
        value = inv.get(key)
        if value is None and key != 'total':
            continue
        if not isinstance(value, int) or isinstance(value, bool) or \
                value < 0:
            raise exceptions.InvalidInput(
                reason='%s of provider %s must be a non-negative integer, '
                       'not %r' % (key, provider_id, value))
    inv.setdefault('reserved', 0)
    if inv.get('min_unit') is None:
        inv['min_unit'] = 1
    if inv.get('step_size') is None:
        inv['step_size'] = 1
    if inv.get('max_unit') is None:
        inv['max_unit'] = max(1, inv['total'])
    ratio = inv.get('allocation_ratio')
    inv['allocation_ratio'] = 1.0 if ratio is None else ratio
    if isinstance(inv['allocation_ratio'], bool) or not isinstance(
            inv['allocation_ratio'], (int, float)) or \
            not inv['allocation_ratio'] > 0:
        raise exceptions.InvalidInput(
            reason='allocation_ratio of provider %s must be a positive '
                   'number, not %r' % (provider_id, ratio))
    if inv['step_size'] < 1 or inv['min_unit'] < 1 or \
            inv['min_unit'] > inv['max_unit']:
        raise exceptions.InvalidInput(
            reason='provider %s: step_size and min_unit must be at least '
                   '1 and min_unit at most max_unit' % provider_id)
    return capacity.Inventory(inv['total'], inv['reserved'],
                              float(inv['allocation_ratio']),
                              inv['min_unit'], inv['max_unit'],
                              inv['step_size'])


def set_inventory(session, provider_id, kind, inventories, now=None):
    """Set (replace) what ``provider_id`` has: ``{class: Inventory or
    dict}``; classes not named are removed.

    Refused (Conflict, nothing changed) when the bookings not yet over
    would exceed the new usable capacity at some instant from ``now`` on
    (the message names the class and the instant), or hold a class that
    goes.  Whole bookings of the provider follow the new capacity.
    """
    now = now or models.now()
    new = {cls: _validated(provider_id, values)
           for cls, values in inventories.items()}
    if WHOLE in new and new[WHOLE].total != 1:
        raise exceptions.InvalidInput(
            reason='the %s inventory of provider %s has a total of 1' % (
                WHOLE, provider_id))
    query = _locking(sa.select(Inv).where(
        Inv.provider_id == provider_id).order_by(Inv.resource_class))
    current = session.execute(query).scalars().all()
    # a new provider has no row to bump: two first writers meet on the
    # unique key instead (below)
    _bump(session.connection(), [row.id for row in current])
    for row in current:
        if row.provider_kind != kind:
            raise exceptions.InvalidInput(
                reason='provider %s is a %s, not a %s' % (
                    provider_id, row.provider_kind, kind))
    query = sa.select(Book.id, Book.reservation_id, Book.lease_id,
                      Book.resource_class, Book.amount, Book.start_date,
                      Book.end_date).where(Book.provider_id == provider_id,
                                           Book.end_date > now)
    rows = session.execute(query).all()
    whole = {(r.reservation_id, r.start_date, r.end_date): r.lease_id
             for r in rows if r.resource_class == WHOLE}
    after = {}
    amounts = capacity.whole_amounts(new)
    for key in whole:
        # a HOST it holds stays, whatever the new inventory says
        after.setdefault(WHOLE, []).append(
            capacity.Booking(key[1], key[2], 1))
        for cls, amount in amounts.items():
            if amount and cls != WHOLE:
                after.setdefault(cls, []).append(
                    capacity.Booking(key[1], key[2], amount))
    for r in rows:
        if (r.reservation_id, r.start_date, r.end_date) not in whole:
            after.setdefault(r.resource_class, []).append(
                capacity.Booking(r.start_date, r.end_date, r.amount))
    for cls, booked in sorted(after.items()):
        last = max(b.end for b in booked)
        if cls not in new:
            first = min(max(b.start, now) for b in booked)
            raise exceptions.Conflict(
                reason='provider %s cannot lose its %s inventory: it is '
                       'booked from %s UTC' % (provider_id, cls,
                                               _fmt(first)),
                provider=provider_id, resource_class=cls, at=first)
        usable = capacity.usable(new[cls])
        hit = capacity.first_excess(booked, now, last, usable)
        if hit is not None:
            raise exceptions.Conflict(
                reason='the usable %s of provider %s cannot become %d: %d '
                       'are booked at %s UTC' % (cls, provider_id, usable,
                                                 hit[1], _fmt(hit[0])),
                provider=provider_id, resource_class=cls, at=hit[0])
    by_class = {row.resource_class: row for row in current}
    for cls, inv in sorted(new.items()):
        row = by_class.get(cls)
        if row is None:
            session.add(Inv(provider_id=provider_id, provider_kind=kind,
                            resource_class=cls, **inv._asdict()))
        elif tuple(_inventory(row)) != tuple(inv):
            for key, value in inv._asdict().items():
                setattr(row, key, value)
            row.updated_at = models.now()
    for cls, row in by_class.items():
        if cls not in new:
            session.delete(row)
    try:
        session.flush()
    except db_exc.DBDuplicateEntry:
        # a new provider's rows lock nothing: two first writers meet here
        raise exceptions.Conflict(
            reason='the inventory of provider %s was being set at the same '
                   'time; try again' % provider_id, provider=provider_id,
            at=None)
    # whole bookings take the provider's new capacity
    for (res_id, start, end), lease_id in sorted(whole.items()):
        session.execute(sa.delete(Book).where(
            Book.reservation_id == res_id, Book.provider_id == provider_id,
            Book.start_date == start, Book.end_date == end,
            Book.resource_class != WHOLE))
        _insert(session, res_id, lease_id,
                {(provider_id, cls): amount
                 for cls, amount in amounts.items()
                 if amount and cls != WHOLE}, start, end)


def delete_provider(session, provider_id, now=None):
    """Remove a provider's inventory; refused (Conflict) while bookings
    not yet over hold it.  Returns the number of classes removed."""
    now = now or models.now()
    _lock(session, [provider_id])
    holders = session.execute(sa.select(
        Book.reservation_id, sa.func.max(Book.end_date)).where(
        Book.provider_id == provider_id, Book.end_date > now).group_by(
        Book.reservation_id).order_by(Book.reservation_id).limit(10)).all()
    if holders:
        until = max(end for _r, end in holders)
        raise exceptions.Conflict(
            reason='provider %s is booked until %s UTC at least, by '
                   'reservation(s) %s' % (
                       provider_id, _fmt(until),
                       ', '.join(r for r, _e in holders)),
            provider=provider_id, at=until)
    return session.execute(sa.delete(Inv).where(
        Inv.provider_id == provider_id)).rowcount


def inventories_of(session, provider_ids=None, kind=None):
    """``{provider: {class: Inventory}}``."""
    query = sa.select(*_INV_COLUMNS)
    if provider_ids is not None:
        query = query.where(Inv.provider_id.in_(sorted(provider_ids)))
    if kind is not None:
        query = query.where(Inv.provider_kind == kind)
    return _by_provider(session.execute(query.order_by(
        Inv.provider_id, Inv.resource_class)))


# -- availability -------------------------------------------------------------

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
    _check_window(start, end)
    inventories = inventories_of(session, provider_ids, kind)
    if provider_ids is not None:
        booked = _bookings_between(session, list(inventories), start,
                                   end) if inventories else {}
    else:
        booked = {}
        for provider, cls, b_start, b_end, amount in session.execute(
                sa.select(Book.provider_id, Book.resource_class,
                          Book.start_date, Book.end_date,
                          Book.amount).where(_overlaps(start, end))):
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
            query = query.where(_overlaps(low, high))
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
        _check_window(start, end)
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


def holders(session, provider_ids, after):
    """The reservations holding bookings on ``provider_ids`` not yet over
    at ``after``: ``[(reservation_id, lease_id, provider_id)]``, distinct,
    in that order (healing finds what a lost provider carried)."""
    if not provider_ids:
        return []
    return [tuple(r) for r in session.execute(sa.select(
        Book.reservation_id, Book.lease_id, Book.provider_id).where(
        Book.provider_id.in_(sorted(provider_ids)),
        Book.end_date > after).distinct().order_by(
        Book.reservation_id, Book.provider_id))]


# -- transactions -------------------------------------------------------------

@db_api.retry_on_deadlock
def run(ctx, func, *args, **kwargs):
    """``func(session, *args, **kwargs)`` in a transaction of its own,
    re-run whole when it loses a deadlock.  Not for a caller inside a
    transaction already: a retry could not re-run the caller's part
    (decorate the caller's outermost function instead)."""
    with db_api.writer(ctx) as session:
        return func(session, *args, **kwargs)
