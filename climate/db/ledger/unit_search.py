"""Units of a class of capacity one: the ledger's unit search.

A floating IP address or a network segment is a provider whose class
holds one: it is free over a window when no booking of the class
overlaps it, which one anti-join per prefix of the candidates answers
without reading a booking row (:func:`free_units`).  :func:`place_units`
books the lowest free ids through ``climate.db.ledger.booking.book``,
which re-checks each under its lock, and replaces those taken meanwhile
by concurrent bookers.
"""

import sqlalchemy as sa

from climate.db.ledger import booking
from climate.db.ledger import slot_search
from climate.db.ledger import windows
from climate.db import models
from climate import dates
from climate import exceptions
from climate.scheduling import capacity

Inv = models.LedgerInventory
Book = models.LedgerBooking

# a datetime as the messages give it
_fmt = dates.format_timestamp


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
    capacity may be found busy while it has room:
    :func:`slot_search.place` is the search for those."""
    busy = sa.exists().where(
        Book.provider_id == Inv.provider_id, Book.resource_class == cls,
        windows.overlapping(session, start, end, after))
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
    """Which of ``ids`` have a ``cls`` inventory and no booking of
    ``cls`` over ``[start, end)``: two statements."""
    query = sa.select(Inv.provider_id).where(
        Inv.provider_id.in_(ids), Inv.resource_class == cls)
    if kind is not None:
        query = query.where(Inv.provider_kind == kind)
    held = set(session.execute(query).scalars())
    if not held:
        return []
    query = sa.select(Book.provider_id).where(
        Book.provider_id.in_(sorted(held)),
        windows.overlapping(session, start, end, after),
        Book.resource_class == cls)
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
    windows.check_window(start, end)
    after = windows.started_after(session, start)
    free = []
    for ids in _unit_chunks(slot_search.sorted_ids(provider_ids)):
        free += _free_units(session, ids, start, end, kind, cls,
                            after=after)
    return free


def place_units(session, reservation_id, lease_id, cls, count, start, end,
                providers=None, kind=None, exclude_reservation=None):
    """Book one ``cls`` on each of ``count`` distinct providers whose
    ``cls`` capacity is one (a floating IP, a network segment): a provider
    is free iff no booking of ``cls`` overlaps ``[start, end)``.  The
    lowest free ids are taken, as :func:`slot_search.place` with affinity
    false would; :func:`booking.book` re-checks each under its lock, so a
    provider of larger or no usable capacity is never overbooked, only
    refused.

    The free ones are found by a statement per doubling prefix of the
    candidates (:data:`UNIT_CHUNKS`, :func:`_free_units`), or, with a
    reservation left out, a prefix of ids at a time as
    :func:`slot_search.search` reads them (:func:`_free_of`).  Providers
    taken meanwhile by concurrent bookers are replaced, at most
    :data:`slot_search.PLACE_ROUNDS` times; the Conflict names them
    (``taken``) and counts only the others free (``available``).

    :returns: the provider ids booked.
    :raises Conflict: fewer than ``count`` are free.
    """
    if cls == capacity.WHOLE:
        raise exceptions.InvalidInput(
            reason='place_units books units of a class of capacity one, '
                   'not whole providers (%s)' % capacity.WHOLE)
    windows.check_window(start, end)
    slot_search.check_count(count)
    allowed = None if providers is None else slot_search.sorted_ids(providers)
    skip = set()
    free = []
    # nothing left out: one statement per prefix of the candidates
    # (_free_units), each stopping at the count-th free one; all the
    # providers of the kind in one
    units = exclude_reservation is None
    after = windows.started_after(session, start)
    for _round in range(slot_search.PLACE_ROUNDS):
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
            for ids, size in slot_search.provider_chunks(session, kind,
                                                         allowed):
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
            booking.book(session, reservation_id, lease_id,
                         [booking.Request(p, cls, 1) for p in free], start,
                         end, exclude_reservation)
            return free
        except exceptions.Conflict as exc:
            skip.add(exc.kwargs.get('provider'))
    # the ones refused under lock are not free: the count is the
    # decision's, never one it refused with
    skip.discard(None)
    free = [p for p in free if p not in skip]
    raise exceptions.Conflict(
        reason='%d provider(s) are free of %s from %s to %s UTC; %d asked%s'
        % (len(free), cls, _fmt(start), _fmt(end), count,
           slot_search.taken_text(skip)),
        available=len(free), at=start, taken=sorted(skip))
