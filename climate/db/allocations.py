"""Who holds a provider, and when: the ledger's bookings of one resource
class, as ``/v1/os-hosts/allocations`` (class ``HOST``,
``climate.db.hosts``) and ``/v1/volume-pools/allocations`` (class
``VOLUME_GB``, ``climate.plugins.virtual_volume.allocations``) list
them.
"""

import sqlalchemy as sa

from climate.db import api as db_api
from climate.db import models

Book = models.LedgerBooking


def bookings(ctx, resource_class, provider_id=None, lease_id=None,
             reservation_id=None, time_from=None):
    """``[(provider_id, reservation_id, lease_id, start, end, amount)]``
    of the bookings of ``resource_class`` (one statement), optionally of
    one provider, lease or reservation, and ending after ``time_from``;
    in no order."""
    query = sa.select(Book.provider_id, Book.reservation_id, Book.lease_id,
                      Book.start_date, Book.end_date, Book.amount).where(
        Book.resource_class == resource_class)
    if provider_id is not None:
        query = query.where(Book.provider_id == provider_id)
    if lease_id is not None:
        # through the reservations' index: bookings have none by lease
        query = query.where(Book.lease_id == lease_id,
                            Book.reservation_id.in_(sa.select(
                                models.Reservation.id).where(
                                models.Reservation.lease_id == lease_id)))
    if reservation_id is not None:
        query = query.where(Book.reservation_id == reservation_id)
    if time_from is not None:
        query = query.where(Book.end_date > time_from)
    with db_api.reader(ctx) as session:
        return [tuple(r) for r in session.execute(query)]
