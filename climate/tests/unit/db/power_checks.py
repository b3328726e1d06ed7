"""What the power planner's tests share: hosts on the ledger and
bookings on them, written straight to the database."""

import uuid

from climate.db import api as db_api
from climate.db import hosts as db_hosts
from climate.db import models


def add_host(ctx, name, caps=None, **flags):
    """A host with its ledger inventory; ``flags``: columns of its row
    (``disabled``, ``reservable``)."""
    host_id = db_hosts.host_create(
        ctx, {'hypervisor_hostname': name, 'service_name': name,
              'vcpus': 8, 'memory_mb': 1024, 'local_gb': 10}, caps or {})
    db_hosts.host_set_capacity(ctx, host_id, {})
    if flags:
        with db_api.writer(ctx) as session:
            row = db_hosts.host_row(ctx, host_id, for_update=True)
            for key, value in flags.items():
                setattr(row, key, value)
            session.flush()
    return host_id


def book(ctx, host_id, start, end):
    """Book ``host_id`` whole over ``[start, end)`` for a lease of its
    own."""
    with db_api.writer(ctx) as session:
        lease = models.Lease(name=uuid.uuid4().hex, start_date=start,
                             end_date=end, project_id='p', user_id='u',
                             status='PENDING')
        session.add(lease)
        session.flush()
        res = models.Reservation(lease_id=lease.id,
                                 resource_type='physical:host', params={},
                                 status='pending')
        session.add(res)
        session.flush()
        db_hosts.allocations_add(ctx, res.id, lease.id, [host_id], start,
                                 end)
