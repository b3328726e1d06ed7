"""Maintenance windows (``climate.manager.maintenance``): rows, and the
bookings a window hits."""

import collections

from oslo_db import exception as db_exc
import sqlalchemy as sa

from climate import dates
from climate.db import api as db_api
from climate.db import hosts as db_hosts
from climate.db.ledger import booking as ledger_booking
from climate.db import models
from climate import exceptions
from climate import states

Window = models.MaintenanceWindow
Book = models.LedgerBooking
WHOLE = ledger_booking.WHOLE

#: A booking on a window's host: its host id and resource class.
Hit = collections.namedtuple(
    'Hit', 'id reservation_id host_id resource_class start_date end_date')


def bookings_on(ctx, host_ids, start, end):
    """The bookings of leases not over on ``host_ids`` overlapping
    ``[start, end)``, with their reservation and lease rows:
    ``[(Hit, reservation, lease)]``, by start."""
    if not host_ids:
        return []
    with db_api.reader(ctx) as session:
        rows = session.execute(
            sa.select(Book.id, Book.reservation_id, Book.provider_id,
                      Book.resource_class, Book.start_date, Book.end_date,
                      models.Reservation, models.Lease).join(
                models.Reservation,
                models.Reservation.id == Book.reservation_id).join(
                models.Lease, models.Lease.id == Book.lease_id).where(
                Book.provider_id.in_(sorted(db_hosts.provider(h)
                                            for h in host_ids)),
                Book.start_date < end, Book.end_date > start,
                models.Lease.status.notin_(states.LEASE_FINISHED)).order_by(
                    Book.start_date, Book.id)).all()
    return [(Hit(r[0], r[1], db_hosts.host_of(r[2]), r[3], r[4], r[5]),
             r[6], r[7]) for r in rows]


def insert(session, values):
    """A new window's row; Conflict (409) when the name is taken."""
    row = Window(**values)
    session.add(row)
    try:
        session.flush()
    except db_exc.DBDuplicateEntry:
        raise exceptions.Conflict(
            reason='a maintenance window named %s exists already' %
            values['name'])
    return row


def get(ctx, window_id):
    with db_api.reader(ctx) as session:
        row = session.get(Window, str(window_id))
    if row is None:
        raise exceptions.NotFound(
            message='Maintenance window %s could not be found.' % window_id,
            kind='Maintenance window', id=window_id)
    return row


def listing(ctx):
    """Every window, soonest first."""
    with db_api.reader(ctx) as session:
        return session.execute(sa.select(Window).order_by(
            Window.start_date, Window.id)).scalars().all()


def cancel(ctx, window_id):
    with db_api.writer(ctx) as session:
        session.execute(sa.update(Window).where(
            Window.id == window_id).values(status='CANCELLED',
                                           lease_id=None))


def view(row):
    """A window as the API shows it."""
    return {'id': row.id, 'name': row.name, 'reason': row.reason,
            'project_id': row.project_id, 'user_id': row.user_id,
            'start_date': dates.format(row.start_date),
            'end_date': dates.format(row.end_date),
            'hosts': list(row.hosts or []), 'lease_id': row.lease_id,
            'affected': list(row.affected or []), 'status': row.status,
            'dry_run': False,
            'created_at': dates.format_timestamp(row.created_at),
            'updated_at': dates.format_timestamp(row.updated_at)}
