"""Booking and its rule: the no-double-booking promise of the ledger.

**The rule.**  At no instant do the bookings of a ``(provider, class)``
overlapping it add up to more than the inventory's usable capacity
(``climate.scheduling.capacity.usable``).

**A provider taken whole** (a compute host of a ``physical:host``
reservation) is booked as ``HOST = 1`` *and* all the usable capacity of
each of its other classes over the window.  So the one rule makes whole
and partial bookings exclusive both ways: a host booked whole has no VCPU
left for instance slots, and a host carrying one slot has not all its
VCPU left for a whole booking.  When a provider's inventory changes, its
whole bookings follow it (``climate.db.ledger.inventory.set_inventory``).

**Locking.**  A booking is decided and written in the caller's
transaction: :func:`book` locks the inventory rows of the providers
involved (``SELECT ... FOR UPDATE``, ordered by provider and class, so
two bookers never wait on each other in a cycle), writes their
generation (what makes two writers of a provider's capacity conflict on
every database, Galera's nodes included), reads the bookings of those
providers overlapping the window in one query, re-checks the rule with
the pure functions of ``climate.scheduling.capacity`` and inserts, or
raises Conflict naming the provider, the class and the first instant
that would exceed.  Transactions read committed (PostgreSQL's default,
set on MariaDB's connections by ``climate.db.api``), so the read after
the lock sees what the booker that held it before us committed.  On
SQLite the transaction's write lock (``BEGIN IMMEDIATE``, see
``climate.db.api``) serializes writers and ``FOR UPDATE`` is not needed.

The searches (``slot_search``, ``unit_search``) and the inventory
changes (``inventory``) lock and write through this module
(:func:`lock`, or :func:`locking` and :func:`bump`; :func:`bookings_over`,
:func:`insert`).
"""

import collections
import functools
import uuid

import sqlalchemy as sa

from climate.db import api as db_api
from climate.db.ledger import windows
from climate.db import models
from climate import dates
from climate import exceptions
from climate.scheduling import capacity

Inv = models.LedgerInventory
Book = models.LedgerBooking
WHOLE = capacity.WHOLE

#: Lock what a booking takes (the rule's guard): the inventory rows, and
#: the host rows a host choice locks first (``climate.db.hosts``).  Only
#: the concurrency tests turn it off, to show that their checks find
#: overbooking then.
LOCKING = True

#: One amount wanted: ``(provider_id, resource_class, amount)``.  The
#: class ``HOST`` (``capacity.WHOLE``) with amount 1 takes the provider
#: whole.
Request = collections.namedtuple('Request', 'provider_id resource_class '
                                 'amount')

INVENTORY_COLUMNS = (Inv.provider_id, Inv.resource_class, Inv.total,
                     Inv.reserved, Inv.allocation_ratio, Inv.min_unit,
                     Inv.max_unit, Inv.step_size)


# a datetime as the messages give it
_fmt = dates.format_timestamp


def row_inventory(row):
    """The ``capacity.Inventory`` of an inventory row."""
    return capacity.Inventory(row.total, row.reserved, row.allocation_ratio,
                              row.min_unit, row.max_unit, row.step_size)


def by_provider(rows):
    """``{provider: {class: Inventory}}`` of inventory rows."""
    found = {}
    for row in rows:
        found.setdefault(row.provider_id, {})[row.resource_class] = \
            row_inventory(row)
    return found


def locking(query):
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
def _lock_query(locked):
    # built once (per LOCKING, which only the concurrency tests change):
    # every booking runs it
    query = sa.select(Inv.id, *INVENTORY_COLUMNS).where(Inv.provider_id.in_(
        sa.bindparam('providers', expanding=True))).order_by(
        Inv.provider_id, Inv.resource_class)
    return locking(query) if locked else query


@functools.lru_cache(maxsize=None)
def _bump_statement():
    # by primary key, rows already locked in key order: no scan, no wait
    return sa.update(Inv).where(Inv.id.in_(sa.bindparam(
        'ids', expanding=True))).values(
        # not an inventory change: its updated_at stays
        generation=Inv.generation + 1, updated_at=Inv.updated_at)


def bump(connection, row_ids):
    """Write the generation of the inventory rows ``row_ids``: what makes
    two writers of a provider's capacity conflict on every database (see
    the module's doc, *Locking*)."""
    if LOCKING and row_ids:
        connection.execute(_bump_statement(), {'ids': sorted(row_ids)})


def lock(session, provider_ids):
    """Lock the inventory rows of ``provider_ids`` (provider, then class
    order), bump their generation and return them: ``{provider: {class:
    Inventory}}``.  A plugin that picks providers itself locks them with
    this before it checks them (:func:`busy_providers`) and books
    (:func:`book`): the lock is held from the check to the commit."""
    if not provider_ids:
        return {}
    connection = session.connection()
    rows = connection.execute(_lock_query(LOCKING),
                              {'providers': sorted(set(provider_ids))}).all()
    bump(connection, [row.id for row in rows])
    return by_provider(rows)


@functools.lru_cache(maxsize=None)
def _booked_query(excluding):
    query = sa.select(Book.provider_id, Book.resource_class,
                      Book.start_date, Book.end_date, Book.amount).where(
        Book.provider_id.in_(sa.bindparam('providers', expanding=True)),
        windows.overlapping_at())
    if excluding:
        query = query.where(Book.reservation_id != sa.bindparam('mine'))
    return query


def bookings_over(session, provider_ids, start, end, exclude_reservation=None):
    """``{provider: {class: [Booking]}}`` over ``[start, end)`` on
    providers the caller locked, as committed now (one query, on the
    session's connection: built once, it runs on every booking)."""
    if not provider_ids:
        return {}
    rows = session.connection().execute(
        _booked_query(exclude_reservation is not None), {
            'providers': sorted(set(provider_ids)),
            'after': windows.started_after(session, start), 'start': start,
            'end': end, 'mine': exclude_reservation})
    booked = {}
    for provider, cls, b_start, b_end, amount in rows:
        booked.setdefault(provider, {}).setdefault(cls, []).append(
            capacity.Booking(b_start, b_end, amount))
    return booked


def amounts_wanted(requests):
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


def expand_whole(wanted, inventories):
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


def insert(session, reservation_id, lease_id, expanded, start, end):
    level = windows.span_level(start, end)
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
    (``slot_search.place``).

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
    windows.check_window(start, end)
    wanted = amounts_wanted(requests)
    providers = sorted({provider for provider, _cls in wanted})
    if locked is not None and all(p in locked for p in providers):
        inventories, booked = locked, {}
    else:
        inventories = lock(session, providers)
        booked = bookings_over(session, providers, start, end,
                               exclude_reservation)
    expanded = expand_whole(wanted, inventories)
    _recheck(expanded, inventories, booked, start, end)
    insert(session, reservation_id, lease_id, expanded, start, end)
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
    windows.check_window(start, end)
    wanted = amounts_wanted(requests)
    old = {r[0] for r in bookings_of(session, reservation_id)}
    providers = sorted(old | {provider for provider, _cls in wanted})
    inventories = lock(session, providers)
    expanded = expand_whole(wanted, inventories)
    booked = bookings_over(session, [p for p, _c in expanded], start, end,
                           exclude_reservation=reservation_id)
    _recheck(expanded, inventories, booked, start, end)
    release(session, reservation_id)
    insert(session, reservation_id, lease_id, expanded, start, end)
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


def busy_providers(session, provider_ids, start, end,
                   exclude_reservation=None):
    """Which of ``provider_ids`` (locked by the caller, :func:`lock`)
    hold a booking of any class over ``[start, end)``, as committed now:
    one query, a locking read on MariaDB (see :func:`book`)."""
    return set(bookings_over(session, provider_ids, start, end,
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
    inventories = lock(session, sorted({r.provider_id for r in rows}))
    groups = {}
    for row in rows:
        groups.setdefault(row.start_date, []).append(row)
    plans = []
    for start, group in sorted(groups.items()):
        windows.check_window(start, end)
        whole = {r.provider_id for r in group if r.resource_class == WHOLE}
        requests = [Request(p, WHOLE, 1) for p in sorted(whole)] + [
            Request(r.provider_id, r.resource_class, r.amount)
            for r in group if r.provider_id not in whole]
        expanded = expand_whole(amounts_wanted(requests), inventories)
        booked = bookings_over(session, sorted({p for p, _c in expanded}),
                               start, end,
                               exclude_reservation=reservation_id)
        _recheck(expanded, inventories, booked, start, end)
        plans.append((start, expanded))
    release(session, reservation_id)
    held = {}
    for start, expanded in plans:
        insert(session, reservation_id, rows[0].lease_id, expanded, start,
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
    lock(session, [old_provider, new_provider])
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
