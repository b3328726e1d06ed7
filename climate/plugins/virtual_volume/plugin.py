"""The ``virtual:volume`` resource plugin.

A reservation asks for ``size_gb`` gigabytes in all (at most ``count``
volumes when given; or the pre-created volumes ``volumes`` lists: Climate
creates them at the start as the user, through the lease's trust) of
``volume_type``, on a pool whose capabilities match
``resource_properties`` (the hosts' filter language, over ``$name``,
``$backend`` and the pool's capabilities).

**Booking.**  The reservation is one unit on one pool: ``slot_search.place``
over the matching reservable pools, shape ``{VOLUME_GB: size_gb, VOLUME:
count}`` (no ``count``: ``size_gb`` volumes, the most that many gigabytes
can hold, since a volume has at least 1 GB), in the lease's transaction
(kind ``volume_pool``; see ``climate.db.volume_pools`` for the
inventories).  So concurrent reservations of any number of managers never
overbook a pool.

**In the cloud** the backend of ``[volumes] inventory`` acts
(``backends``): at the start it publishes the reservation to the cloud's
scheduler and creates the pre-created volumes, at the end it applies
``on_end`` (``delete``, ``snapshot`` then delete, ``retain``) to the
reservation's volumes; the static backend only records.

**Parameters stored**: ``size_gb``, ``count`` (null: no limit),
``volume_type`` (null: the default type), ``resource_properties``,
``on_end``, ``volumes`` (null or the list of specs), and, set by Climate,
``pool`` (the pool's name, from the booking on), ``volume_ids`` and
``image_ids``.
"""

from oslo_config import cfg
from oslo_log import log as logging

from climate import dates
from climate.db import api as db_api
from climate.db.ledger import availability
from climate.db.ledger import booking
from climate.db.ledger import inventory
from climate.db.ledger import slot_search
from climate.db import models
from climate.db import volume_pools as db_pools
from climate import exceptions
from climate.plugins import backend_loader
from climate.plugins import base
from climate.plugins import caches
from climate.plugins import common
from climate.plugins import params as plugin_params
from climate.plugins import rebooking
from climate.plugins.virtual_volume import backends
from climate.scheduling import capacity
from climate.scheduling import filters
from climate import states

LOG = logging.getLogger(__name__)
CONF = cfg.CONF

RESOURCE_TYPE = 'virtual:volume'
REQUEST_FIELDS = ('size_gb', 'count', 'volume_type', 'resource_properties',
                  'on_end', 'volumes')
#: Set by Climate; a client may send them back as it read them.
OUTPUT_FIELDS = ('pool', 'volume_ids', 'image_ids')
ON_END = ('delete', 'snapshot', 'retain')
SPEC_FIELDS = ('name', 'size_gb', 'volume_type', 'image_id', 'snapshot_id')
#: How many pre-created volumes one reservation may list.
MAX_VOLUMES = 1000
#: Filters whose matching pools a manager keeps (per pool inventory
#: version: ``VirtualVolumePlugin.matching``).
MATCH_CACHE_SIZE = 256
#: Pools whose bookings one read of the "most free" search takes (the
#: largest first: ``VirtualVolumePlugin.most_free``).
MOST_FREE_CHUNK = 64


def integer(value, name, low=1):
    """A whole number from ``low`` to
    :data:`climate.plugins.params.DB_MAX_INT` (booleans refused), else
    MalformedParameter naming ``name``."""
    if isinstance(value, bool):
        raise exceptions.MalformedParameter(
            param=name, reason='%s is a whole number from %d to %d, not %s.'
            % (name, low, plugin_params.DB_MAX_INT, common.short(value)))
    return plugin_params.integer(value, name, low)


def volume_count(params):
    """The most volumes a reservation may hold: ``count``, else
    ``size_gb`` (each volume has at least 1 GB)."""
    return params.get('count') or params['size_gb']


def most_free_gb(free, shape=None):
    """The most gigabytes free on one pool of a ``availability.free_capacity``
    view (0 when it holds no pool); with ``shape``, on one pool where
    the shape's other classes (its volumes) fit too: the booking takes
    the whole shape on one pool, and a pool without room for the volumes
    offers none of its gigabytes."""
    others = {cls: amount for cls, amount in (shape or {}).items()
              if cls != db_pools.VOLUME_GB and amount > 0}
    return max((held.get(db_pools.VOLUME_GB, {}).get('free', 0)
                for held in free.values()
                if all(held.get(cls, {}).get('free', 0) >= amount
                       for cls, amount in others.items())), default=0)


def holding(pools, shape):
    """The providers of ``pools`` (``(provider, {class: usable})``) that
    hold ``shape`` when nothing else is booked on them."""
    return [provider for provider, usable in pools
            if all(usable.get(cls, 0) >= amount
                   for cls, amount in shape.items() if amount > 0)]


def shape_of(params):
    """The ledger shape of a reservation (booked as one unit)."""
    return {db_pools.VOLUME_GB: params['size_gb'],
            db_pools.VOLUME: volume_count(params)}


def _string(value, name, required=False):
    if value is None or value == '':
        if required:
            raise exceptions.MissingParameter(
                message='Missing parameter %s.' % name, param=name)
        return None
    if not isinstance(value, str) or len(value) > 255 or \
            not common.storable(value):
        raise exceptions.MalformedParameter(
            param=name, reason='%s is a string of at most 255 characters, '
                               'not %s.' % (name, common.short(value)))
    return value


def reservation_params(params):
    """A reservation's ``params`` with every field (None where unset),
    as stored at its create."""
    return {k: params.get(k) for k in REQUEST_FIELDS + OUTPUT_FIELDS}


def pool_props(pool):
    """What ``resource_properties`` reads of a pool: its capabilities,
    ``name`` and ``backend``."""
    props = {k: v for k, v in (pool.get('capabilities') or {}).items()
             if not isinstance(v, (dict, list))}
    props.update(name=pool['name'], backend=pool['backend'])
    return props


class VirtualVolumePlugin(backend_loader.BackendOwner, base.ResourcePlugin):
    resource_type = RESOURCE_TYPE
    description = ('Volume capacity (size_gb in at most count volumes, '
                   'volume_type) on one storage pool; optionally volumes '
                   'created at the start.')
    backends = backends
    # Cinder places volumes without a reservation on the same pools
    capacity_guaranteed = False

    def __init__(self, owner=None):
        super().__init__(owner)
        self._matches = caches.InventoryVersionCache(
            MATCH_CACHE_SIZE, db_pools.inventory_version)

    @property
    def heal_interval(self):
        """Seconds between two refreshes of the pools from the backend
        (:meth:`heal`): ``[volumes] sync_interval``, 0 with the static
        inventory, whose pools are the operator's."""
        if CONF.volumes.inventory == 'static':
            return 0
        return CONF.volumes.sync_interval

    def heal(self, ctx):
        """Make the pool inventory what the backend reports
        (``climate.db.volume_pools.pool_sync``); changes no
        reservation."""
        if CONF.volumes.inventory == 'static':
            return []
        done = db_pools.pool_sync(ctx, self.backend.pools())
        for name, exc in done['errors']:
            LOG.warning('Volume pool %s keeps its inventory: %s', name, exc)
        if done['added'] or done['gone']:
            LOG.info('Volume pools added: %s; gone: %s',
                     ', '.join(done['added']) or 'none',
                     ', '.join(done['gone']) or 'none')
        return []

    # -- parameters ----------------------------------------------------------

    def _volume_type(self, value, name):
        value = _string(value, name)
        if value is None:
            return None
        try:
            found = self.backend.volume_type(value)
        except exceptions.MalformedParameter:
            raise
        except exceptions.InvalidInput as exc:
            raise exceptions.MalformedParameter(
                param=name, reason=exc.kwargs.get('reason') or exc.message)
        return (found or {}).get('name') or value

    def _specs(self, value):
        if not isinstance(value, list) or not 0 < len(value) <= MAX_VOLUMES:
            raise exceptions.MalformedParameter(
                param='volumes',
                reason='volumes is a list of 1 to %d volume specs '
                       '({"name", "size_gb", "volume_type", "image_id", '
                       '"snapshot_id"}), not %s.' % (MAX_VOLUMES,
                                                     common.short(value)))
        specs = []
        for i, spec in enumerate(value):
            where = 'volumes[%d]' % i
            if not isinstance(spec, dict):
                raise exceptions.MalformedParameter(
                    param=where, reason='%s is an object ({"name", '
                                        '"size_gb", ...}), not %s.' % (
                                            where, common.short(spec)))
            unknown = sorted(set(spec) - set(SPEC_FIELDS))
            if unknown:
                raise exceptions.MalformedParameter(
                    param='%s.%s' % (where, unknown[0]),
                    reason='%s: not a field of a volume spec; accepted: %s.'
                    % (', '.join('%s.%s' % (where, k) for k in unknown),
                       ', '.join(SPEC_FIELDS)))
            out = {
                'name': _string(spec.get('name'), where + '.name', True),
                'size_gb': integer(spec.get('size_gb'), where + '.size_gb')
                if spec.get('size_gb') not in (None, '') else None,
                'volume_type': self._volume_type(spec.get('volume_type'),
                                                 where + '.volume_type'),
                'image_id': _string(spec.get('image_id'),
                                    where + '.image_id'),
                'snapshot_id': _string(spec.get('snapshot_id'),
                                       where + '.snapshot_id'),
            }
            if out['size_gb'] is None:
                raise exceptions.MissingParameter(
                    message='Missing parameter %s.size_gb.' % where,
                    param=where + '.size_gb')
            if out['image_id'] and out['snapshot_id']:
                raise exceptions.MalformedParameter(
                    param=where + '.snapshot_id',
                    reason='A volume is made from an image or a snapshot, '
                           'not both.')
            specs.append(out)
        return specs

    def validate(self, params):
        """Check a request; each malformed field is a 400 naming it.

        :returns: every stored parameter (see the module's docstring).
        """
        plugin_params.check_fields(params, RESOURCE_TYPE, REQUEST_FIELDS,
                                   OUTPUT_FIELDS)
        out = {}
        specs = params.get('volumes')
        if specs is not None:
            specs = self._specs(specs)
            total = sum(s['size_gb'] for s in specs)
            if total > plugin_params.DB_MAX_INT:
                raise exceptions.MalformedParameter(
                    param='volumes', reason='The volumes add up to %d GB; '
                    'at most %d.' % (total, plugin_params.DB_MAX_INT))
            if params.get('size_gb') not in (None, '') and integer(
                    params['size_gb'], 'size_gb') != total:
                raise exceptions.MalformedParameter(
                    param='size_gb',
                    reason='With volumes, size_gb is the sum of their '
                           'sizes (%d); leave it out.' % total)
            if params.get('count') not in (None, '') and integer(
                    params['count'], 'count') != len(specs):
                raise exceptions.MalformedParameter(
                    param='count',
                    reason='With volumes, count is how many they are (%d); '
                           'leave it out.' % len(specs))
            out.update(size_gb=total, count=len(specs))
        else:
            if params.get('size_gb') in (None, ''):
                raise exceptions.MissingParameter(
                    message='Missing parameter size_gb. A virtual:volume '
                            'reservation needs size_gb (the gigabytes '
                            'reserved in all).', param='size_gb')
            out['size_gb'] = integer(params['size_gb'], 'size_gb')
            count = params.get('count')
            out['count'] = None if count in (None, '') else integer(
                count, 'count')
            if out['count'] is not None and out['count'] > out['size_gb']:
                raise exceptions.MalformedParameter(
                    param='count',
                    reason='count is %d volumes but size_gb is %d GB: a '
                           'volume has at least 1 GB.' % (
                               out['count'], out['size_gb']))
        on_end = params.get('on_end')
        if on_end in (None, ''):
            on_end = 'delete'
        if on_end not in ON_END:
            raise exceptions.MalformedParameter(
                param='on_end', reason='on_end is one of %s, not %s.' % (
                    ', '.join(ON_END), common.short(on_end)))
        out['on_end'] = on_end
        out['volume_type'] = self._volume_type(params.get('volume_type'),
                                               'volume_type')
        out['resource_properties'] = plugin_params.filter_of(
            params.get('resource_properties'))
        out['volumes'] = specs
        out.update(pool=None, volume_ids=[], image_ids=[])
        return out

    def validate_change(self, current, changes):
        """What the client sends back unchanged of what Climate set is
        ignored; the rest is checked as a request."""
        changes = plugin_params.without_output(current, changes,
                                               OUTPUT_FIELDS)
        merged = {k: v for k, v in current.items() if k in REQUEST_FIELDS}
        if 'volumes' in changes:
            merged.pop('size_gb', None)
            merged.pop('count', None)
        elif current.get('volumes') is not None and (
                'size_gb' in changes or 'count' in changes):
            raise exceptions.MalformedParameter(
                param='size_gb' if 'size_gb' in changes else 'count',
                reason='This reservation lists its volumes: change volumes '
                       'instead.')
        merged.update(changes)
        out = self.validate(merged)
        for key in OUTPUT_FIELDS:
            out[key] = current.get(key, out[key])
        return out

    # -- allocation -----------------------------------------------------------

    def matching(self, ctx, params):
        """Provider ids of the reservable pools matching
        ``resource_properties`` (and serving ``volume_type`` when the
        pool lists the types it serves), by pool id (cached per pool
        inventory version: see :meth:`matching_pools`)."""
        return [provider for provider, _usable in
                self.matching_pools(ctx, params)]

    def matching_pools(self, ctx, params):
        """``((provider id, {class: usable}), ...)`` of the pools
        :meth:`matching` finds, with their ledger capacities.

        Reading and filtering the pools costs milliseconds per thousand;
        the answer changes only with the pool inventory, whose every
        change (``climate.db.volume_pools``: create, update, delete,
        sync) bumps ``inventory_versions`` in its transaction: a lookup
        reads that counter (a primary-key read) and reuses the answer
        found at the same version, in this manager process (an LRU of
        :data:`MATCH_CACHE_SIZE` filters)."""
        key = (params.get('resource_properties') or '',
               params.get('volume_type') or '')
        return self._matches.get(ctx, key, lambda: self._match(ctx, params))

    @staticmethod
    def _match(ctx, params):
        tree = filters.parse(params.get('resource_properties'),
                             'resource_properties')
        wanted = params.get('volume_type')
        found = []
        for pool in db_pools.reservable_pools(ctx):
            served = (pool.get('capabilities') or {}).get('volume_types')
            if wanted and isinstance(served, list) and wanted not in served:
                continue
            if filters.evaluate(tree, pool_props(pool)):
                found.append((db_pools.provider(pool['id']),
                              db_pools.usable(pool)))
        return tuple(found)

    @staticmethod
    def _refuse_unknown_pool(ctx, params):
        """MalformedParameter (400) when ``resource_properties`` names a
        pool no pool of the inventory is (reservable or not): a mistake,
        not a lack of capacity."""
        if not params.get('resource_properties'):
            return
        tree = filters.parse(params['resource_properties'],
                             'resource_properties')
        if not any(filters.evaluate(tree, pool_props(pool))
                   for pool in db_pools.pool_list(ctx)):
            raise exceptions.MalformedParameter(
                param='resource_properties',
                reason='No volume pool of this cloud matches '
                       'resource_properties %s.' % common.short(
                           params['resource_properties']))

    @staticmethod
    def _asked(shape):
        return '%d GB in at most %d volume(s)' % (
            shape[db_pools.VOLUME_GB], shape[db_pools.VOLUME])

    @staticmethod
    def most_free(session, pools, start, end, shape=None, taken=()):
        """The most gigabytes free over ``[start, end)`` on one of
        ``pools`` (``(provider, {class: usable})``): the bookings of the
        largest pools first, :data:`MOST_FREE_CHUNK` pools (then eight
        times as many) a read, until no pool left can have more free
        than found (a pool never has more free than its capacity).

        With ``shape``, only on pools where its volumes fit too
        (:func:`most_free_gb`); the pools ``taken`` (lost under the lock
        to concurrent bookers) offer none: a refusal's figure is then the
        decision's."""
        order = sorted(((usable.get(db_pools.VOLUME_GB, 0), provider)
                        for provider, usable in pools
                        if provider not in taken), reverse=True)
        most, done, size = 0, 0, MOST_FREE_CHUNK
        while done < len(order) and order[done][0] > most:
            chunk = [provider for _gb, provider in order[done:done + size]]
            most = max(most, most_free_gb(availability.free_capacity(
                session, chunk, start, end, inventory.VOLUME_POOL), shape))
            done += size
            size *= 8
        return most

    def _not_enough(self, session, params, shape, providers, start, end,
                    what=None, pools=None, taken=()):
        """NotEnoughVolumeCapacity: the most gigabytes free on one matching
        pool with room for the volumes over the window (as the decision
        counts: the whole shape on one pool, none on the pools ``taken``
        under the lock by concurrent bookers), and from when the request
        would fit.

        :param pools: ``(provider, {class: usable})`` of ``providers``
            when the caller has them (:meth:`matching_pools`); else read
            from their ledger inventories.
        """
        when = None
        most = 0
        if not providers:
            later = ('No reservable volume pool matches resource_properties'
                     '%s.' % (' and volume_type %s' % params['volume_type']
                              if params.get('volume_type') else ''))
        else:
            if pools is None:
                pools = [(provider, {cls: capacity.usable(inv)
                                     for cls, inv in held.items()})
                         for provider, held in inventory.inventories_of(
                             session, providers,
                             inventory.VOLUME_POOL).items()]
            candidates = holding(pools, shape)
            most = self.most_free(session, pools, start, end, shape, taken)
            if not candidates:
                later = ('It never fits on one matching pool, even with '
                         'nothing else booked.')
            else:
                until = rebooking.horizon_end(start, end - start)
                when = availability.earliest_start(
                    session, shape, 1, end - start, start,
                    latest_end=until, affinity=True,
                    provider_ids=candidates, kind=inventory.VOLUME_POOL)
                if when is not None and when <= start:
                    # refused over this very window: free when read,
                    # taken under the lock by concurrent requests
                    later = ('Concurrent requests took it meanwhile; try '
                             'again.')
                elif when is not None:
                    later = 'It would fit for as long from %s UTC.' % (
                        common.fmt(when))
                else:
                    later = ('It does not fit for as long before %s UTC.'
                             % common.fmt(until))
        return exceptions.NotEnoughVolumeCapacity(
            reason='%s%s asked on one pool from %s to %s UTC; at most %d GB '
                   'free on one of the %d reservable pool(s) matching%s. %s'
                   % ((what + ': ') if what else '', self._asked(shape),
                      common.fmt(start), common.fmt(end), most, len(providers),
                      ' (of those with room for %d more volume(s))' %
                      shape[db_pools.VOLUME] if shape.get(db_pools.VOLUME)
                      else '', later),
            available=0, earliest_start=common.fmt(when))

    def _place(self, ctx, session, res_id, lease_id, params, start, end,
               shape=None, providers=None, what=None):
        """Book ``shape`` (default the reservation's) on one pool; the
        pool's name (NotEnoughCapacity when it does not fit)."""
        shape = shape_of(params) if shape is None else shape
        pools = None
        candidates = providers
        if providers is None:
            # the pools too small for the shape even with nothing booked
            # are left out of the search: when none is left, the refusal
            # reads no booking to find it
            pools = self.matching_pools(ctx, params)
            if not pools:
                self._refuse_unknown_pool(ctx, params)
            providers = [provider for provider, _usable in pools]
            candidates = holding(pools, shape)
        try:
            if not candidates:
                raise exceptions.Conflict(reason='no pool holds the shape')
            placed = slot_search.place(session, res_id, lease_id, shape, 1,
                                       start, end, affinity=True,
                                       providers=candidates,
                                       kind=inventory.VOLUME_POOL)
        except exceptions.Conflict as exc:
            raise self._not_enough(session, params, shape, providers,
                                   start, end, what, pools,
                                   exc.kwargs.get('taken', ()))
        pool_id = db_pools.pool_of(next(iter(placed)))
        row = session.get(models.VolumePool, pool_id)
        return row.name if row is not None else None

    _set = staticmethod(plugin_params.set_params)

    def reserve(self, ctx, lease, reservation):
        """Book the volumes over the lease's window on one pool
        (NotEnoughCapacity, 409, when no pool holds them)."""
        start = lease.start_date
        end = lease.end_date
        with db_api.writer(ctx) as session:
            pool = self._place(ctx, session, reservation.id, lease.id,
                               reservation.params, start, end)
            plugin_params.store_at_create(
                session, lease.id, reservation.id,
                dict(reservation_params(reservation.params), pool=pool))
        return reservation.id

    def update(self, ctx, old_lease, lease, reservation, new_params):
        """Pending: the booking moves with the dates (same pool when it
        stays free), or is placed again for a new size, count, type or
        filter.  Active: the lease may be extended and ``size_gb`` and
        ``count`` grow (on the same pool); nothing else changes."""
        params = dict(new_params)
        res_id = reservation.id
        start = lease.start_date
        end = lease.end_date
        old_start = old_lease.start_date
        old_end = old_lease.end_date
        same = all(params.get(k) == reservation.params.get(k) for k in (
            'volume_type', 'resource_properties'))
        status = reservation.status
        plugin_params.refuse_if_error(reservation)
        with db_api.writer(ctx) as session:
            if status == states.RES_ACTIVE:
                return self._update_active(ctx, session, lease, reservation,
                                           params, same, old_end, end)
            same = same and shape_of(params) == shape_of(reservation.params)
            if same:
                if (start, end) == (old_start, old_end):
                    return params
                try:
                    booking.move(session, res_id, start, end)
                    return params
                except exceptions.Conflict:
                    pass
            booking.release(session, res_id)
            params['pool'] = self._place(
                ctx, session, res_id, lease.id, params, start, end,
                what='cannot %s reservation %s' % (
                    'move' if same else 'change', res_id))
        return params

    def _update_active(self, ctx, session, lease, reservation, params,
                       same, old_end, end):
        res_id = reservation.id
        if not same or \
                params.get('volumes') != reservation.params.get('volumes'):
            raise exceptions.InvalidStateUpdate(
                id=res_id, status=reservation.status,
                reason='An active volume reservation only accepts to '
                       'extend its lease and grow size_gb and count. '
                       'Reservation %s is active: its volume_type, '
                       'resource_properties and volumes are in use.' %
                       res_id)
        old, new = shape_of(reservation.params), shape_of(params)
        for cls, field in ((db_pools.VOLUME_GB, 'size_gb'),
                           (db_pools.VOLUME, 'count')):
            if new[cls] < old[cls]:
                raise exceptions.CantUpdateParameter(
                    message='%s cannot be updated. Reservation %s is active '
                            'and holds %s: %s may grow, not shrink; shorten '
                            'the lease (end_date) to give the capacity back '
                            'earlier.' % (field, res_id, self._asked(old),
                                          field),
                    param=field)
        now = dates.utcnow()
        if end != old_end:
            rebooking.extend(session, res_id, lease.id, now, end,
                                   'its pool')
        grow = {cls: new[cls] - old[cls] for cls in new}
        if any(grow.values()):
            held = sorted({r[0] for r in booking.bookings_of(session, res_id)
                           if r[4] > now})
            self._place(ctx, session, res_id, lease.id, params, now, end,
                        shape=grow, providers=held,
                        what='cannot grow reservation %s' % res_id)
        if end > old_end or any(grow.values()):
            # before the commit: when the cloud cannot be told, the change
            # is refused whole rather than saved with the cloud's scheduler
            # still enforcing the old end and size (an earlier end needs no
            # telling: the end event removes the type)
            self.backend.publish(
                self._backend_view(lease, reservation, params),
                lease.project_id, self._pool(ctx, session, res_id))
        return params

    def delete(self, ctx, lease, reservation):
        """Release the reservation's capacity."""
        with db_api.writer(ctx) as session:
            booking.release(session, reservation.id)

    # -- events ---------------------------------------------------------------

    def _pool(self, ctx, session, res_id):
        """The pool (dict) the reservation holds, or None."""
        ids = {db_pools.pool_of(r[0])
               for r in booking.bookings_of(session, res_id)}
        ids.discard(None)
        pools = db_pools.pools_by_ids(ctx, ids) if ids else []
        return pools[0] if pools else None

    @staticmethod
    def _backend_view(lease, reservation, params=None):
        """The reservation (a ``Reservation``, with ``params`` instead of
        its own when given) as the backend reads it: a dict, with the
        lease's window (Cinder's private type carries it, and the
        scheduler filter refuses the type outside it)."""
        return dict(reservation.as_dict(), **(params or {}),
                    lease_start=lease.start_date,
                    lease_end=lease.end_date)

    # The cloud is called outside the plugin's own transactions (a write
    # transaction open across Cinder's answers, or its timeouts, would hold
    # row locks that long); what it answers is stored in a short one.

    def on_start(self, ctx, lease, reservation, event):
        """Hand the volumes over (backend ``start``) and store their
        ids."""
        with db_api.reader(ctx) as session:
            pool = self._pool(ctx, session, reservation.id)
        answer = self.backend.start(
            self._backend_view(lease, reservation), lease.project_id,
            pool, lambda: self.user_session(lease)) or {}
        values = {'volume_ids': list(answer.get('volume_ids') or [])}
        if pool is not None:
            values['pool'] = pool['name']
        with db_api.writer(ctx) as session:
            self._set(session, reservation.id, **values)

    def on_end(self, ctx, lease, reservation, event=None):
        """Apply ``on_end`` to the reservation's volumes (backend
        ``end``), store the images ``snapshot`` made, free the
        capacity."""
        answer = self.backend.end(
            self._backend_view(lease, reservation),
            reservation.params.get('on_end') or 'delete')
        images = list((answer or {}).get('image_ids') or [])
        with db_api.writer(ctx) as session:
            if images:
                self._set(session, reservation.id, image_ids=images)
            booking.release(session, reservation.id)
