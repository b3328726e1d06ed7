"""The brute-force check of the capacity ledger's rule, shared by the
concurrency tests: every instant at which some ``(provider, class)``
holds more than its usable capacity."""

import collections

import sqlalchemy as sa

from climate.scheduling import capacity


def overbooked(engine):
    """Sweep every booking's start (the only instants at which a usage
    can rise): ``([(provider, class, instant, held, usable)], rows)``."""
    with engine.connect() as conn:
        rows = conn.execute(sa.text(
            'SELECT provider_id, resource_class, start_date, end_date, '
            'amount FROM ledger_bookings')).all()
        inventories = {(r.provider_id, r.resource_class): capacity.usable(
            capacity.Inventory(r.total, r.reserved, r.allocation_ratio))
            for r in conn.execute(sa.text(
                'SELECT provider_id, resource_class, total, reserved, '
                'allocation_ratio FROM ledger_inventories'))}
    by_key = collections.defaultdict(list)
    for provider, cls, start, end, amount in rows:
        by_key[provider, cls].append((start, end, amount))
    found = []
    for key, bookings in sorted(by_key.items()):
        for instant in sorted({s for s, _e, _a in bookings}):
            held = sum(a for s, e, a in bookings if s <= instant < e)
            if held > inventories[key]:
                found.append(key + (instant, held, inventories[key]))
    return found, len(rows)
