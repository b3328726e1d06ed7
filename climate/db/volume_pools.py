"""SQL of the volume pools ``virtual:volume`` books on.

A pool is a row of ``volume_pools`` and a provider of the capacity ledger
(decision 7 of the design): ``provider_id`` ``volume_pool:<id>`` (a
prefix keeps it apart from the compute hosts' bare ids), kind
``volume_pool``, with two classes written by the registration itself, in
its transaction:

* ``VOLUME_GB``: ``floor(total_capacity_gb * (1 - reserved_percentage /
  100) * max_over_subscription_ratio)`` (what Cinder's capacity filter
  lets be provisioned);
* ``VOLUME``: the number of volumes, ``max_volumes`` of the capabilities
  or :data:`MAX_VOLUMES`.

A change that would leave bookings not yet over without room is refused
(Conflict, 409, nothing changed:
``climate.db.ledger.inventory.set_inventory``); so is the removal of a
pool that a booking not yet over holds.

Every change of the pools (create, update, delete, hence sync) bumps the
``volume_pool`` row of ``inventory_versions`` in its transaction
(:func:`inventory_version`): the plugin caches the pools a filter matches
per version.
"""

import json
import math

from oslo_db import exception as db_exc
import sqlalchemy as sa

from climate import dates
from climate.db import api as db_api
from climate.db import inventory_versions
from climate.db.ledger import inventory
from climate.db import models
from climate import exceptions

Pool = models.VolumePool
Book = models.LedgerBooking

VOLUME_GB = 'VOLUME_GB'
VOLUME = 'VOLUME'
CLASSES = (VOLUME_GB, VOLUME)
#: The count of volumes of a pool that states no ``max_volumes``.
MAX_VOLUMES = 2 ** 31 - 1
#: The columns a registration gives (``capabilities`` a dict).
FIELDS = ('name', 'backend', 'reservable', 'total_capacity_gb',
          'reserved_percentage', 'max_over_subscription_ratio',
          'capabilities')
PREFIX = inventory.VOLUME_POOL + ':'


def provider(pool_id):
    """The ledger provider id of pool ``pool_id``."""
    return '%s%d' % (PREFIX, int(pool_id))


def pool_of(provider_id):
    """The pool id of a ledger provider id (None when not a pool's)."""
    if not str(provider_id).startswith(PREFIX):
        return None
    return int(str(provider_id)[len(PREFIX):])


def usable_gb(total_capacity_gb, reserved_percentage,
              max_over_subscription_ratio):
    """The GB a pool lets be reserved (floor, never below 0)."""
    return max(0, int(math.floor(
        total_capacity_gb * (1 - reserved_percentage / 100.0) *
        max_over_subscription_ratio + 1e-9)))


def capabilities_of(row):
    try:
        caps = json.loads(row.capabilities or '{}')
    except ValueError:
        caps = {}
    return caps if isinstance(caps, dict) else {}


def max_volumes(caps):
    """The count of volumes a pool of capabilities ``caps`` holds:
    ``max_volumes``, else :data:`MAX_VOLUMES`."""
    count = caps.get('max_volumes')
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        count = MAX_VOLUMES
    return count


def inventories(row):
    """The ledger inventory of a pool row: ``{class: {'total': n}}``."""
    return {VOLUME_GB: {'total': usable_gb(
                row.total_capacity_gb, row.reserved_percentage,
                row.max_over_subscription_ratio)},
            VOLUME: {'total': max_volumes(capabilities_of(row))}}


def usable(pool):
    """``{class: usable capacity}`` of a pool (:func:`pool_dict`): what
    its ledger inventory (:func:`inventories`, neither reserved nor
    over-committed) lets be booked."""
    return {VOLUME_GB: pool['capacity_gb'],
            VOLUME: max_volumes(pool['capabilities'])}


def pool_dict(row):
    """A pool as the API and the plugin see it."""
    return {
        'id': row.id, 'name': row.name, 'backend': row.backend,
        'reservable': bool(row.reservable),
        'total_capacity_gb': row.total_capacity_gb,
        'reserved_percentage': row.reserved_percentage,
        'max_over_subscription_ratio': row.max_over_subscription_ratio,
        'capabilities': capabilities_of(row),
        'capacity_gb': usable_gb(row.total_capacity_gb,
                                 row.reserved_percentage,
                                 row.max_over_subscription_ratio),
        'created_at': dates.format_timestamp(row.created_at),
        'updated_at': dates.format_timestamp(row.updated_at),
    }


def pool_not_found(pool_id):
    return exceptions.NotFound(
        message='Volume pool %s could not be found. No pool of the '
                'inventory has this id.' % pool_id, kind='Volume pool',
        id=pool_id)


def _row(session, pool_id, for_update=False):
    try:
        pool_id = int(str(pool_id))
    except ValueError:
        raise pool_not_found(pool_id)
    query = sa.select(Pool).where(Pool.id == pool_id)
    if for_update:
        query = query.with_for_update()
    row = session.execute(query).scalar_one_or_none()
    if row is None:
        raise pool_not_found(pool_id)
    return row


def _write_inventory(session, row):
    inventory.set_inventory(session, provider(row.id), inventory.VOLUME_POOL,
                            inventories(row))
    inventory_versions.bump(session, inventory.VOLUME_POOL)


def inventory_version(ctx):
    """The change counter of the pools (bumped in the transaction of
    every create, update, delete and sync): what the plugin's cache of
    matching pools is keyed on."""
    return inventory_versions.version(ctx, inventory.VOLUME_POOL)


@db_api.retry_on_deadlock
def pool_create(ctx, values):
    """Register a pool and its ledger inventory (one transaction).
    Conflict (409) when a pool of that name exists."""
    values = dict(values)
    values['capabilities'] = json.dumps(values.get('capabilities') or {},
                                        sort_keys=True)
    with db_api.writer(ctx) as session:
        row = Pool(**{k: v for k, v in values.items() if k in FIELDS})
        session.add(row)
        try:
            session.flush()
        except db_exc.DBDuplicateEntry:
            raise exceptions.Conflict(
                reason='a volume pool named %s exists already' %
                values.get('name'))
        _write_inventory(session, row)
        return pool_dict(row)


def pool_get(ctx, pool_id):
    with db_api.reader(ctx) as session:
        return pool_dict(_row(session, pool_id))


def pool_list(ctx):
    with db_api.reader(ctx) as session:
        return [pool_dict(r) for r in session.execute(
            sa.select(Pool).order_by(Pool.id)).scalars()]


@db_api.retry_on_deadlock
def pool_update(ctx, pool_id, values):
    """Change a pool (``capabilities`` replaced when given); its ledger
    inventory follows in the same transaction, refused (Conflict, nothing
    changed) when bookings not yet over would no longer fit."""
    with db_api.writer(ctx) as session:
        row = _row(session, pool_id, for_update=True)
        for key, value in values.items():
            if key == 'capabilities':
                value = json.dumps(value or {}, sort_keys=True)
            elif key not in FIELDS:
                raise ValueError(key)
            setattr(row, key, value)
        row.updated_at = models.now()
        session.flush()
        _write_inventory(session, row)
        return pool_dict(row)


@db_api.retry_on_deadlock
def pool_delete(ctx, pool_id):
    """Remove a pool and its inventory; Conflict (409) while a booking
    not yet over holds it."""
    with db_api.writer(ctx) as session:
        row = _row(session, pool_id, for_update=True)
        try:
            inventory.delete_provider(session, provider(row.id))
        except exceptions.Conflict as exc:
            raise exceptions.Conflict(
                reason="Can't delete volume pool %s (%s): %s; it can leave "
                       'the inventory once they are over.' % (
                           row.id, row.name, exc.kwargs.get('reason')))
        session.execute(sa.delete(Book).where(
            Book.provider_id == provider(row.id)))
        session.delete(row)
        session.flush()
        inventory_versions.bump(session, inventory.VOLUME_POOL)


def pool_sync(ctx, pools):
    """Make the inventory what a backend reports (``pools``: dicts of
    :data:`FIELDS` but ``reservable``): new pools are added (reservable),
    known ones updated, pools no longer reported marked unreservable.
    Returns ``{'added', 'updated', 'gone'}`` names and ``errors``
    (``[(name, exception)]``): a pool whose new capacity the bookings do
    not fit keeps its old one."""
    seen = {p['name'] for p in pools}
    done = {'added': [], 'updated': [], 'gone': [], 'errors': []}
    with db_api.reader(ctx) as session:
        known = {r.name: r.id for r in session.execute(
            sa.select(Pool)).scalars()}
    for pool in pools:
        values = {k: v for k, v in pool.items()
                  if k in FIELDS and k != 'reservable'}
        try:
            if pool['name'] in known:
                pool_update(ctx, known[pool['name']], values)
                done['updated'].append(pool['name'])
            else:
                pool_create(ctx, dict(values, reservable=True))
                done['added'].append(pool['name'])
        except exceptions.ClimateException as exc:
            done['errors'].append((pool['name'], exc))
    for name, pool_id in sorted(known.items()):
        if name not in seen:
            pool_update(ctx, pool_id, {'reservable': False})
            done['gone'].append(name)
    return done


def reservable_pools(ctx):
    """Every reservable pool, as :func:`pool_dict`, by id."""
    with db_api.reader(ctx) as session:
        return [pool_dict(r) for r in session.execute(
            sa.select(Pool).where(Pool.reservable.is_(True)).order_by(
                Pool.id)).scalars()]


def pools_by_ids(ctx, pool_ids):
    with db_api.reader(ctx) as session:
        return [pool_dict(r) for r in session.execute(
            sa.select(Pool).where(Pool.id.in_(sorted(pool_ids)))).scalars()]
