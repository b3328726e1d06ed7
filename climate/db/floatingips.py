"""SQL of the floating IP addresses ``virtual:floatingip`` books.

An address is a row of ``floatingips`` (Blazar's table: network, address,
subnet, reservable) and a provider of the capacity ledger (decision 7 of
the design): ``provider_id`` ``floatingip:<id>``, kind ``floatingip``,
one class ``FLOATING_IP`` of total 1, written by the registration itself,
in its transaction.  So an address is booked by at most one reservation
at any instant: the ledger's lock and re-check guarantee it.

The removal of an address that a booking not yet over holds is refused
(409, Blazar's sentence first); its past bookings go with it.

Every registration and removal bumps the ``floatingip`` inventory
version (``climate.db.inventory_versions``) in its transaction, so the
plugin may keep what it read of a network's addresses while the version
stays the same.
"""

import collections
import ipaddress

from oslo_db import exception as db_exc
import sqlalchemy as sa

from climate import dates
from climate.db import api as db_api
from climate.db import inventory_versions
from climate.db.ledger import inventory
from climate.db import models
from climate.db import row_providers
from climate import exceptions

FloatingIP = models.FloatingIP
Book = models.LedgerBooking

FLOATING_IP = 'FLOATING_IP'
KIND = inventory.FLOATINGIP
_ROWS = row_providers.RowProviders(KIND, FloatingIP)
PREFIX = _ROWS.prefix
#: The ledger provider id of a row id.
provider = _ROWS.provider
#: The row id of a ledger provider id (None when not one's).
fip_of = _ROWS.row_id_of
#: ``{provider id: row}`` of the rows behind provider ids.
by_providers = _ROWS.by_providers
#: ``{provider id: row}`` of the rows a reservation books.
held_by = _ROWS.held_by
#: What the plugin reads of a registered address (:func:`on_network`).
Address = collections.namedtuple('Address', 'id floating_ip_address '
                                 'reservable provider')
#: The columns a registration gives.
FIELDS = ('floating_network_id', 'floating_ip_address', 'subnet_id',
          'reservable')






def canonical(address):
    """The canonical text of an IPv4 or IPv6 address, or None when
    ``address`` is not one."""
    if not isinstance(address, str) or not address.isascii():
        return None
    try:
        return str(ipaddress.ip_address(address.strip()))
    except ValueError:
        return None


def address_key(address):
    """A sort key putting addresses in numeric order (IPv4 first)."""
    ip = ipaddress.ip_address(address)
    return ip.version, int(ip)


def fip_dict(row):
    """An address as the API shows it (Blazar's fields)."""
    return {
        'id': row.id,
        'floating_network_id': row.floating_network_id,
        'floating_ip_address': row.floating_ip_address,
        'subnet_id': row.subnet_id,
        'reservable': bool(row.reservable),
        'created_at': dates.format_timestamp(row.created_at),
        'updated_at': dates.format_timestamp(row.updated_at),
    }


def _row(session, fip_id, for_update=False):
    if not isinstance(fip_id, str) or len(fip_id) > 36:
        raise exceptions.FloatingIPNotFound(floatingip=fip_id)
    query = sa.select(FloatingIP).where(FloatingIP.id == fip_id)
    if for_update:
        query = query.with_for_update()
    row = session.execute(query).scalar_one_or_none()
    if row is None:
        raise exceptions.FloatingIPNotFound(floatingip=fip_id)
    return row


@db_api.retry_on_deadlock
def fip_create(ctx, values):
    """Register an address and its ledger inventory (one transaction).
    Conflict (409) when the network has it already."""
    try:
        with db_api.writer(ctx) as session:
            row = FloatingIP(**{k: v for k, v in values.items()
                                if k in FIELDS})
            session.add(row)
            session.flush()
            inventory.set_inventory(session, provider(row.id), KIND,
                                    {FLOATING_IP: {'total': 1}})
            inventory_versions.bump(session, KIND)
            return fip_dict(row)
    except db_exc.DBDuplicateEntry:
        # named once the failed transaction is over
        raise _duplicate(ctx, values)


def _duplicate(ctx, values):
    network = values.get('floating_network_id')
    address = values.get('floating_ip_address')
    with db_api.reader(ctx) as session:
        found = session.execute(sa.select(FloatingIP.id).where(
            FloatingIP.floating_network_id == network,
            FloatingIP.floating_ip_address == address)).scalar()
    return exceptions.FloatingIPAlreadyExists(address=address,
                                              network=network, id=found)


def fip_get(ctx, fip_id):
    with db_api.reader(ctx) as session:
        return fip_dict(_row(session, fip_id))


def fip_list(ctx):
    """Every address, by network then address."""
    with db_api.reader(ctx) as session:
        rows = session.execute(sa.select(FloatingIP)).scalars().all()
    return [fip_dict(r) for r in sorted(rows, key=lambda r: (
        r.floating_network_id, address_key(r.floating_ip_address)))]


@db_api.retry_on_deadlock
def fip_delete(ctx, fip_id):
    """Remove an address and its inventory; CantDeleteFloatingIP (409)
    while a booking not yet over holds it."""
    with db_api.writer(ctx) as session:
        row = _row(session, fip_id, for_update=True)
        try:
            inventory.delete_provider(session, provider(row.id))
        except exceptions.Conflict as exc:
            # the ledger's "provider <id> is booked until ..., by ..."
            booked = str(exc.kwargs.get('reason')).replace(
                'provider %s ' % provider(row.id), '', 1)
            raise exceptions.CantDeleteFloatingIP(
                floatingip=row.id,
                reason='Address %s of network %s %s; it can leave the '
                       'inventory once they are over.' % (
                           row.floating_ip_address, row.floating_network_id,
                           booked))
        session.execute(sa.delete(Book).where(
            Book.provider_id == provider(row.id)))
        session.delete(row)
        session.flush()
        inventory_versions.bump(session, KIND)


# -- what the plugin reads, in its transaction ------------------------------

def inventory_version(session):
    """The change counter of the addresses (bumped by every registration
    and removal), read in ``session``, the caller's transaction; 0 before
    the first change."""
    return inventory_versions.version_in(session, KIND)


def on_network(session, network_id):
    """Every address registered on ``network_id``: ``{address:
    Address}`` (one indexed query of three columns)."""
    return {r.floating_ip_address: Address(r.id, r.floating_ip_address,
                                           bool(r.reservable), provider(r.id))
            for r in session.execute(sa.select(
                FloatingIP.id, FloatingIP.floating_ip_address,
                FloatingIP.reservable).where(
                FloatingIP.floating_network_id == network_id))}
