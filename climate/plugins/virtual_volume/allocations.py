"""``GET /v1/volume-pools/allocations`` (microversion 1.6, admin): every
volume pool with the reservations holding it now or later, their windows
and gigabytes (Blazar's ``/v1/os-hosts/allocations`` shape, with the
pool's ``name`` and ``capacity_gb`` and each holding's ``size_gb``).

A holding is one booking of the ledger (class ``VOLUME_GB``): a
reservation grown while active holds a second one, from the growth on.
"""

from climate import dates
from climate.db import allocations as db_allocations
from climate.db import volume_pools as db_pools
from climate.plugins import common


def allocations(ctx, lease_id=None, reservation_id=None):
    """``[{'resource_id', 'name', 'capacity_gb', 'reservations': [{'id',
    'lease_id', 'start_date', 'end_date', 'size_gb'}]}]``, by pool id
    (a pool no reservation holds has an empty list), each pool's
    holdings by start."""
    common.check_text(lease_id, 'lease_id')
    common.check_text(reservation_id, 'reservation_id')
    pools = db_pools.pool_list(ctx)
    held = {pool['id']: [] for pool in pools}
    rows = db_allocations.bookings(
        ctx, db_pools.VOLUME_GB, lease_id=lease_id,
        reservation_id=reservation_id, time_from=dates.utcnow())
    for provider, res_id, res_lease, start, end, amount in sorted(
            rows, key=lambda r: (r[3], r[4], r[1])):
        pool_id = db_pools.pool_of(provider)
        if pool_id in held:
            held[pool_id].append({
                'id': res_id, 'lease_id': res_lease,
                'start_date': dates.format(start),
                'end_date': dates.format(end), 'size_gb': amount})
    return [{'resource_id': pool['id'], 'name': pool['name'],
             'capacity_gb': pool['capacity_gb'],
             'reservations': held[pool['id']]} for pool in pools]
