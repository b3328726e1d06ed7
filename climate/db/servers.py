"""SQL of the servers pre-created ``virtual:instance`` reservations hold.

A server named by a pre-created reservation (``server_id``, or the server
Climate booted for a ``server`` request) is held by at most one
reservation at any instant.  It is a provider of the capacity ledger
(decision 7 of the design) of its own: ``provider_id``
``server:<server id>``, kind ``server``, one class ``SERVER`` of total 1;
a pre-created reservation books ``SERVER = 1`` on it over its window, in
the transaction that books its slot.  The ledger's lock and re-check
then refuse a second reservation whose window overlaps (409 naming the
server and the window that holds it), whatever the number of managers
booking at once; its moves, extension, end and delete move or release
that booking with the slot's (they act on every booking of the
reservation).

The inventory row is made on first use, in the booking's transaction (a
refused create leaves nothing behind), by an insert that never fails on
a row another transaction made first -- ``ON CONFLICT DO NOTHING`` on
PostgreSQL and SQLite, ``ON DUPLICATE KEY UPDATE`` on MariaDB, whose
exclusive lock on the row found keeps two late comers from deadlocking
on the shared locks a plain duplicate insert leaves -- and the booking
then locks it as any other.  The row stays when the bookings go: one
small row per server ever named, which the next lease naming it reuses.
"""

import sqlalchemy as sa
from oslo_db import exception as db_exc
from sqlalchemy.dialects import mysql
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects import sqlite

from climate.db.ledger import booking
from climate.db import models
from climate import dates
from climate import exceptions

Inv = models.LedgerInventory
Book = models.LedgerBooking

#: The kind of provider a server held by pre-created reservations is.
KIND = 'server'
#: Its one resource class (total 1).
SERVER = 'SERVER'
PREFIX = KIND + ':'
_KEY = ('provider_id', 'resource_class')


def provider(server_id):
    """The ledger provider id of server ``server_id``."""
    return PREFIX + str(server_id)


def server_of(provider_id):
    """The server id of a ledger provider id (None when not a server's)."""
    text = str(provider_id or '')
    return text[len(PREFIX):] if text.startswith(PREFIX) else None


# a datetime as the messages give it
_fmt = dates.format_timestamp


def _row(provider_id):
    return dict(provider_id=provider_id, provider_kind=KIND,
                resource_class=SERVER, total=1, reserved=0,
                allocation_ratio=1.0, min_unit=1, max_unit=1, step_size=1,
                created_at=models.now())


def ensure(session, server_id):
    """Make the server's ledger inventory (``SERVER`` = 1) unless it
    exists, in the caller's transaction; safe when concurrent first
    users make it at the same time (the late comer reads it, never
    fails).  One read of the unique key when it exists."""
    pid = provider(server_id)
    found = session.execute(sa.select(Inv.provider_kind).where(
        Inv.provider_id == pid, Inv.resource_class == SERVER)).first()
    if found is not None:
        if found.provider_kind != KIND:
            raise exceptions.InvalidInput(
                reason='provider %s is a %s, not a %s' % (
                    pid, found.provider_kind, KIND))
        return
    values = _row(pid)
    dialect = session.get_bind().dialect.name
    if dialect == 'postgresql':
        session.execute(postgresql.insert(Inv).values(
            **values).on_conflict_do_nothing(index_elements=_KEY))
    elif dialect == 'mysql':
        stmt = mysql.insert(Inv).values(**values)
        session.execute(stmt.on_duplicate_key_update(
            provider_id=stmt.inserted.provider_id))
    elif dialect == 'sqlite':
        session.execute(sqlite.insert(Inv).values(
            **values).on_conflict_do_nothing(index_elements=_KEY))
    else:
        try:
            with session.begin_nested():
                session.execute(sa.insert(Inv).values(**values))
        except db_exc.DBDuplicateEntry:
            pass  # made meanwhile by another transaction: it is there


def holder(session, server_id, start, end, exclude_reservation=None):
    """The first booking holding the server over ``[start, end)`` (its
    own reservation's left out): ``(reservation_id, lease_id, start,
    end)``, or None, as committed now (transactions read committed).
    """
    query = sa.select(Book.reservation_id, Book.lease_id, Book.start_date,
                      Book.end_date).where(
        Book.provider_id == provider(server_id),
        Book.resource_class == SERVER, Book.start_date < end,
        Book.end_date > start).order_by(Book.start_date,
                                        Book.reservation_id).limit(1)
    if exclude_reservation is not None:
        query = query.where(Book.reservation_id != exclude_reservation)
    row = session.execute(query).first()
    return None if row is None else tuple(row)


def _project_of(session, lease_id):
    """The project of a lease, as committed now (the holder's lease may
    have committed after this transaction began)."""
    query = sa.select(models.Lease.project_id).where(
        models.Lease.id == lease_id)
    return session.execute(query).scalar()


def refusal(session, server_id, start, end, lease_id,
            exclude_reservation=None):
    """The 409 for a reservation of lease ``lease_id`` asking for the
    server over ``[start, end)`` while another holds it, or None when
    none does.  It names the server and the window that holds it, and
    the lease holding it when that lease is of the asker's project (the
    server is the project's; another project's lease stays unnamed)."""
    held = holder(session, server_id, start, end, exclude_reservation)
    if held is None:
        return None
    _res, holder_lease, h_start, h_end = held
    if holder_lease == lease_id:
        by = 'another reservation of this lease'
    elif _project_of(session, holder_lease) == _project_of(
            session, lease_id) is not None:
        by = 'lease %s' % holder_lease
    else:
        by = "another project's lease"
    return exceptions.Conflict(
        reason='server %s is already held by %s from %s to %s UTC; a '
               'server is held by one lease at a time. Choose a window '
               'that does not overlap that one, or another server.' % (
                   server_id, by, _fmt(h_start), _fmt(h_end)),
        provider=provider(server_id), resource_class=SERVER,
        at=max(start, h_start), server_id=server_id)


def hold(session, reservation_id, lease_id, server_id, start, end):
    """Book the server for the reservation over ``[start, end)``
    (``SERVER`` = 1, its inventory made on first use), in the caller's
    transaction: locked and re-checked by ``booking.book``; the 409 of
    :func:`refusal` (nothing written) when another reservation holds it
    over part of the window."""
    ensure(session, server_id)
    try:
        booking.book(session, reservation_id, lease_id,
                     [booking.Request(provider(server_id), SERVER, 1)],
                     start, end)
    except exceptions.Conflict as exc:
        raise explained(session, exc, lease_id, start, end,
                        reservation_id) or exc


def explained(session, exc, lease_id, start, end, reservation_id=None):
    """:func:`refusal` for a ledger Conflict ``exc`` on a server's
    provider (the server held over ``[start, end)``), else None: a
    refused move or extension of a pre-created reservation then says
    which server is held, not that hosts are full."""
    server_id = server_of(exc.kwargs.get('provider'))
    if server_id is None:
        return None
    return refusal(session, server_id, start, end, lease_id,
                   reservation_id)
