"""Where units of a shape go: the ledger's slot search.

Slots of a *shape* (``{class: amount per unit}``, e.g. an instance
flavor or a volume) are placed by the rule of
``climate.scheduling.capacity``: providers in id order, a growing prefix
at a time (``capacity.SEARCH_CHUNKS``), best fit on the first prefix
that holds them.  :func:`search` reads each prefix's inventories and its
bookings over the window; :func:`place` then locks the providers chosen,
re-checks them (``climate.db.ledger.booking``) and books, searching again
for those taken meanwhile by concurrent bookers.  Every function costs a
fixed number of statements whatever the number of providers and
bookings: the first prefix is enough unless the low ids are full.
"""

import collections
import threading

import sqlalchemy as sa

from climate.db.ledger import booking
from climate.db.ledger import windows
from climate.db import models
from climate import dates
from climate import exceptions
from climate.scheduling import capacity

Inv = models.LedgerInventory
Book = models.LedgerBooking

#: Rounds of search, lock and re-check :func:`place` makes before it
#: gives up on providers taken meanwhile by concurrent bookers.
PLACE_ROUNDS = 3

# a datetime as the messages give it
_fmt = dates.format_timestamp


def check_count(count):
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise exceptions.InvalidInput(
            reason='the number of units must be a positive integer, not %r'
            % (count,))


def _shape_classes(shape):
    classes = sorted(cls for cls, amount in shape.items() if amount > 0)
    if not classes or capacity.WHOLE in classes:
        raise exceptions.InvalidInput(
            reason='a shape asks a positive amount of some classes other '
                   'than %s' % capacity.WHOLE)
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


def provider_chunks(session, kind, allowed):
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
    query = sa.select(*booking.INVENTORY_COLUMNS).where(
        Inv.provider_id.in_(ids), Inv.resource_class.in_(classes))
    if kind is not None:
        query = query.where(Inv.provider_kind == kind)
    inventories = booking.by_provider(session.execute(query))

    over = windows.overlapping(session, start, end, after)

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


def sorted_ids(providers):
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
    windows.check_window(start, end)
    check_count(count)
    classes = _shape_classes(shape)
    allowed = None if providers is None else sorted_ids(providers)
    skip = set(skip)
    found = {}
    after = windows.started_after(session, start)
    for ids, size in provider_chunks(session, kind, allowed):
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
    return [booking.Request(provider, cls, units * amount)
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
        inventories = booking.lock(session, chosen)
        booked = booking.bookings_over(session, chosen, start, end,
                                       exclude_reservation)
        lost = {p for p in chosen
                if capacity.provider_fit(inventories.get(p, {}),
                                         booked.get(p, {}), shape, start,
                                         end) < placed[p]}
        if not lost:
            booking.insert(session, reservation_id, lease_id,
                           booking.expand_whole(booking.amounts_wanted(
                               _shape_requests(shape, placed)), inventories),
                           start, end)
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
            taken_text(skip)),
        available=available, at=start, taken=sorted(skip))


def taken_text(taken):
    return ' (%d provider(s) taken meanwhile by concurrent bookers)' % len(
        taken) if taken else ''


def _shape_text(shape):
    return '{%s}' % ', '.join('%s: %d' % (cls, amount)
                              for cls, amount in sorted(shape.items()))
