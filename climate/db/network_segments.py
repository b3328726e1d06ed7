"""SQL of the network segments ``network`` reservations book.

A segment is a row of ``network_segments`` (``network_type``,
``physical_network``, ``segment_id``, ``reservable``, extra
``capabilities``) and a provider of the capacity ledger (decision 7 of
the design): ``provider_id`` ``network_segment:<id>``, kind
``network_segment``, one class ``NETWORK_SEGMENT`` of total 1, written
by the registration itself, in its transaction.  So a segment is booked
by at most one reservation at any instant: the ledger's lock and
re-check guarantee it.

The removal of a segment that a booking not yet over holds is refused
(409); its past bookings go with it.
"""

import json

from oslo_db import exception as db_exc
import sqlalchemy as sa

from climate import dates
from climate.db import api as db_api
from climate.db import inventory_versions
from climate.db.ledger import inventory
from climate.db import models
from climate.db import row_providers
from climate import exceptions

Segment = models.NetworkSegment
Book = models.LedgerBooking

NETWORK_SEGMENT = 'NETWORK_SEGMENT'
KIND = inventory.NETWORK_SEGMENT
_ROWS = row_providers.RowProviders(KIND, Segment)
PREFIX = _ROWS.prefix
#: The ledger provider id of a row id.
provider = _ROWS.provider
#: The row id of a ledger provider id (None when not one's).
segment_of = _ROWS.row_id_of
#: ``{provider id: row}`` of the rows behind provider ids.
by_providers = _ROWS.by_providers
#: ``{provider id: row}`` of the rows a reservation books.
held_by = _ROWS.held_by
#: The fields of a segment itself (the rest of a registration's body are
#: extra capabilities).
FIELDS = ('network_type', 'physical_network', 'segment_id')






def capabilities_of(row):
    try:
        caps = json.loads(row.capabilities or '{}')
    except ValueError:
        return {}
    return caps if isinstance(caps, dict) else {}


def properties(row):
    """What a filter (``resource_properties``) reads of a segment: its
    fields and its extra capabilities."""
    props = dict(capabilities_of(row))
    props.update(network_type=row.network_type,
                 physical_network=row.physical_network or None,
                 segment_id=row.segment_id)
    return props


def segment_dict(row):
    """A segment as the API shows it (Blazar's: the extra capabilities
    beside the fields)."""
    out = dict(capabilities_of(row))
    out.update({
        'id': row.id,
        'network_type': row.network_type,
        'physical_network': row.physical_network or None,
        'segment_id': row.segment_id,
        'reservable': bool(row.reservable),
        'created_at': dates.format_timestamp(row.created_at),
        'updated_at': dates.format_timestamp(row.updated_at),
    })
    return out


def _row(session, segment_id, for_update=False):
    if not isinstance(segment_id, str) or len(segment_id) > 36:
        raise exceptions.NetworkNotFound(network=segment_id)
    query = sa.select(Segment).where(Segment.id == segment_id)
    if for_update:
        query = query.with_for_update()
    row = session.execute(query).scalar_one_or_none()
    if row is None:
        raise exceptions.NetworkNotFound(network=segment_id)
    return row


@db_api.retry_on_deadlock
def segment_create(ctx, values):
    """Register a segment and its ledger inventory (one transaction).
    Conflict (409) when it is registered already."""
    try:
        with db_api.writer(ctx) as session:
            row = Segment(
                network_type=values['network_type'],
                physical_network=values.get('physical_network') or '',
                segment_id=values['segment_id'],
                reservable=values.get('reservable', True),
                capabilities=json.dumps(values.get('capabilities') or {},
                                        sort_keys=True))
            session.add(row)
            session.flush()
            inventory.set_inventory(session, provider(row.id), KIND,
                                    {NETWORK_SEGMENT: {'total': 1}})
            inventory_versions.bump(session, KIND)
            return segment_dict(row)
    except db_exc.DBDuplicateEntry:
        raise exceptions.NetworkSegmentAlreadyExists(
            network_type=values['network_type'],
            physical_network=values.get('physical_network') or '-',
            segment_id=values['segment_id'])


def segment_get(ctx, segment_id):
    with db_api.reader(ctx) as session:
        return segment_dict(_row(session, segment_id))


def segment_list(ctx):
    """Every segment, by type, physical network and segment id."""
    with db_api.reader(ctx) as session:
        rows = session.execute(sa.select(Segment).order_by(
            Segment.network_type, Segment.physical_network,
            Segment.segment_id)).scalars().all()
    return [segment_dict(r) for r in rows]


@db_api.retry_on_deadlock
def segment_update(ctx, segment_id, capabilities=None, reservable=None,
                   check=None):
    """Set (None: remove) extra capabilities and/or ``reservable``, the
    row locked; ``check(session, row, capabilities)`` may refuse first."""
    with db_api.writer(ctx) as session:
        row = _row(session, segment_id, for_update=True)
        if check is not None:
            check(session, row, capabilities or {})
        if capabilities:
            caps = capabilities_of(row)
            for key, value in capabilities.items():
                if value is None:
                    caps.pop(key, None)
                else:
                    caps[key] = value
            row.capabilities = json.dumps(caps, sort_keys=True)
        if reservable is not None:
            row.reservable = reservable
        session.flush()
        inventory_versions.bump(session, KIND)
        return segment_dict(row)


@db_api.retry_on_deadlock
def segment_delete(ctx, segment_id):
    """Remove a segment and its inventory; CantDeleteNetwork (409) while
    a booking not yet over holds it."""
    with db_api.writer(ctx) as session:
        row = _row(session, segment_id, for_update=True)
        try:
            inventory.delete_provider(session, provider(row.id))
        except exceptions.Conflict as exc:
            booked = str(exc.kwargs.get('reason')).replace(
                'provider %s ' % provider(row.id), '', 1)
            raise exceptions.CantDeleteNetwork(
                network=row.id,
                msg='Segment %s %s; it can leave the inventory once they '
                    'are over.' % (describe(row), booked))
        session.execute(sa.delete(Book).where(
            Book.provider_id == provider(row.id)))
        session.delete(row)
        session.flush()
        inventory_versions.bump(session, KIND)


def describe(row):
    """``vlan physnet1 1001`` (``vxlan 5000``)."""
    return ' '.join(str(p) for p in (row.network_type, row.physical_network,
                                     row.segment_id) if p not in ('', None))


# -- what the plugin reads, in its transaction ------------------------------

def inventory_version(session):
    """The change counter of the segments (bumped in the transaction of
    every create, update and delete): what the plugin's cache of
    matching segments is keyed on.  Read in ``session``, the caller's
    transaction (a primary-key read), so that the segments it then
    reads agree with it; 0 before the first change."""
    return inventory_versions.version_in(session, KIND)


def reservable_segments(session):
    """``(id, network_type, physical_network, segment_id, capabilities)``
    rows of the reservable segments, by id (one query of columns, not
    ORM objects: :func:`properties` reads them as it reads a row)."""
    return session.execute(sa.select(
        Segment.id, Segment.network_type, Segment.physical_network,
        Segment.segment_id, Segment.capabilities).where(
            Segment.reservable == sa.true()).order_by(Segment.id)).all()


def segment_count(session):
    """How many segments are registered, reservable or not."""
    return session.execute(sa.select(sa.func.count(Segment.id))).scalar()






def holders(session, segment_row_id, after):
    """The reservation ids holding the segment with a booking ending
    after ``after``."""
    return sorted(set(session.execute(sa.select(Book.reservation_id).where(
        Book.provider_id == provider(segment_row_id),
        Book.end_date > after)).scalars()))
