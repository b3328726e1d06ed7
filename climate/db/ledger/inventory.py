"""What each provider of the ledger has: its inventories and its kind.

An inventory is Placement's model (total, reserved, allocation ratio,
min/max unit, step) of a class on a provider, in ``ledger_inventories``.
A change is locked and checked as a booking is
(``climate.db.ledger.booking``): refused while the bookings not yet over
would no longer fit, and a provider's whole bookings follow its new
capacity.
"""

from oslo_db import exception as db_exc
import sqlalchemy as sa

from climate.db.ledger import booking
from climate.db import models
from climate import dates
from climate import exceptions
from climate.scheduling import capacity

Inv = models.LedgerInventory
Book = models.LedgerBooking

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

# a datetime as the messages give it
_fmt = dates.format_timestamp


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
    if capacity.WHOLE in new and new[capacity.WHOLE].total != 1:
        raise exceptions.InvalidInput(
            reason='the %s inventory of provider %s has a total of 1' % (
                capacity.WHOLE, provider_id))
    query = booking.locking(sa.select(Inv).where(
        Inv.provider_id == provider_id).order_by(Inv.resource_class))
    current = session.execute(query).scalars().all()
    # a new provider has no row to bump: two first writers meet on the
    # unique key instead (below)
    booking.bump(session.connection(), [row.id for row in current])
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
             for r in rows if r.resource_class == capacity.WHOLE}
    after = {}
    amounts = capacity.whole_amounts(new)
    for key in whole:
        # a HOST it holds stays, whatever the new inventory says
        after.setdefault(capacity.WHOLE, []).append(
            capacity.Booking(key[1], key[2], 1))
        for cls, amount in amounts.items():
            if amount and cls != capacity.WHOLE:
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
        elif tuple(booking.row_inventory(row)) != tuple(inv):
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
            Book.resource_class != capacity.WHOLE))
        booking.insert(session, res_id, lease_id,
                       {(provider_id, cls): amount
                        for cls, amount in amounts.items()
                        if amount and cls != capacity.WHOLE}, start, end)


def delete_provider(session, provider_id, now=None):
    """Remove a provider's inventory; refused (Conflict) while bookings
    not yet over hold it.  Returns the number of classes removed."""
    now = now or models.now()
    booking.lock(session, [provider_id])
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
    query = sa.select(*booking.INVENTORY_COLUMNS)
    if provider_ids is not None:
        query = query.where(Inv.provider_id.in_(sorted(provider_ids)))
    if kind is not None:
        query = query.where(Inv.provider_kind == kind)
    return booking.by_provider(session.execute(query.order_by(
        Inv.provider_id, Inv.resource_class)))
