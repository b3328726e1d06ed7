"""The ``virtual:volume`` resource plugin.

A reservation asks for ``count`` volumes of ``size_gb`` each (or the
pre-created volumes ``volumes`` lists: Climate creates them at the start
as the user, through the lease's trust) of ``volume_type``, on a pool
whose capabilities match ``resource_properties`` (the hosts' filter
language, over ``$name``, ``$backend`` and the pool's capabilities).

**Booking.**  All the volumes are on one pool: ``ledger.place`` with
affinity True over the matching reservable pools, shape ``{VOLUME_GB:
size_gb, VOLUME: 1}``, ``count`` units, in the lease's transaction (kind
``volume_pool``; see ``climate.db.volume_pools`` for the inventories).
So concurrent reservations of any number of managers never overbook a
pool.

**In the cloud** the backend of ``[volumes] inventory`` acts
(``backends``): at the start it creates the pre-created volumes, at the
end it applies ``on_end`` (``delete``, ``snapshot`` then delete,
``retain``) to what it made; the static backend only records.

**Parameters stored**: ``size_gb``, ``count``, ``volume_type`` (null:
the default type), ``resource_properties``, ``on_end``, ``volumes``
(null or the list of specs), and, set by Climate, ``pool`` (the pool's
name, from the booking on), ``volume_ids`` and ``snapshot_ids``.
"""

from oslo_config import cfg
from oslo_log import log as logging
import sqlalchemy as sa

from climate import dates
from climate.db import api as db_api
from climate.db import lease_json
from climate.db import ledger
from climate.db import models
from climate.db import volume_pools as db_pools
from climate import exceptions
from climate.plugins import base
from climate.plugins.physical_host import plugin as host_plugin
from climate.plugins.virtual_instance import plugin as instance_plugin
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
OUTPUT_FIELDS = ('pool', 'volume_ids', 'snapshot_ids')
ON_END = ('delete', 'snapshot', 'retain')
SPEC_FIELDS = ('name', 'size_gb', 'volume_type', 'image_id', 'snapshot_id')
DB_MAX_INT = instance_plugin.DB_MAX_INT
#: How many pre-created volumes one reservation may list.
MAX_VOLUMES = 1000
_fmt = instance_plugin._fmt
_short = instance_plugin._short


def integer(value, name, low=1):
    """A whole number from ``low`` to :data:`DB_MAX_INT` (booleans
    refused), else MalformedParameter naming ``name``."""
    if isinstance(value, bool):
        raise exceptions.MalformedParameter(
            param=name, reason='%s is a whole number from %d to %d, not %s.'
            % (name, low, DB_MAX_INT, _short(value)))
    return instance_plugin.integer(value, name, low)


def shape_of(params):
    """The ledger shape of one volume."""
    return {db_pools.VOLUME_GB: params['size_gb'], db_pools.VOLUME: 1}


def _string(value, name, required=False):
    if value is None or value == '':
        if required:
            raise exceptions.MissingParameter(
                message='Missing parameter %s.' % name, param=name)
        return None
    if not isinstance(value, str) or len(value) > 255 or \
            not host_plugin.storable(value):
        raise exceptions.MalformedParameter(
            param=name, reason='%s is a string of at most 255 characters, '
                               'not %s.' % (name, _short(value)))
    return value


def reservation_params(view):
    """The stored parameters of a reservation's view."""
    return {k: view.get(k) for k in REQUEST_FIELDS + OUTPUT_FIELDS}


def pool_props(pool):
    """What ``resource_properties`` reads of a pool: its capabilities,
    ``name`` and ``backend``."""
    props = {k: v for k, v in (pool.get('capabilities') or {}).items()
             if not isinstance(v, (dict, list))}
    props.update(name=pool['name'], backend=pool['backend'])
    return props


class VirtualVolumePlugin(base.ResourcePlugin):
    resource_type = RESOURCE_TYPE
    description = ('Volume capacity (size_gb, count, volume_type) on one '
                   'storage pool; optionally volumes created at the start.')

    def __init__(self, owner=None):
        super().__init__(owner)
        self._backend = None

    @property
    def backend(self):
        """The volume backend of ``[volumes] inventory``, made on first
        use so that loading the plugin never calls a cloud."""
        if self._backend is None:
            self._backend = backends.load(CONF)
        return self._backend

    @property
    def acts_in_cloud(self):
        return self.backend.acts_in_cloud

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
                                                     _short(value)))
        specs = []
        for i, spec in enumerate(value):
            where = 'volumes[%d]' % i
            if not isinstance(spec, dict):
                raise exceptions.MalformedParameter(
                    param=where, reason='%s is an object ({"name", '
                                        '"size_gb", ...}), not %s.' % (
                                            where, _short(spec)))
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
        unknown = sorted(set(params) - set(REQUEST_FIELDS) -
                         set(OUTPUT_FIELDS))
        if unknown:
            raise exceptions.InvalidInput(
                reason='%s: not a virtual:volume parameter; accepted: %s'
                % (', '.join(unknown), ', '.join(REQUEST_FIELDS)))
        for key in OUTPUT_FIELDS:
            if params.get(key) not in (None, []):
                raise exceptions.MalformedParameter(
                    param=key, reason='%s is set by Climate; leave it out.'
                    % key)
        out = {}
        specs = params.get('volumes')
        if specs is not None:
            specs = self._specs(specs)
            largest = max(s['size_gb'] for s in specs)
            if params.get('size_gb') not in (None, '') and integer(
                    params['size_gb'], 'size_gb') != largest:
                raise exceptions.MalformedParameter(
                    param='size_gb',
                    reason='With volumes, size_gb is the largest of their '
                           'sizes (%d); leave it out.' % largest)
            if params.get('count') not in (None, '') and integer(
                    params['count'], 'count') != len(specs):
                raise exceptions.MalformedParameter(
                    param='count',
                    reason='With volumes, count is how many they are (%d); '
                           'leave it out.' % len(specs))
            out.update(size_gb=largest, count=len(specs))
        else:
            if params.get('size_gb') in (None, ''):
                raise exceptions.MissingParameter(
                    message='Missing parameter size_gb. A virtual:volume '
                            'reservation needs size_gb (the size of each '
                            'volume, in GB).', param='size_gb')
            out['size_gb'] = integer(params['size_gb'], 'size_gb')
            count = params.get('count')
            out['count'] = 1 if count in (None, '') else integer(
                count, 'count')
        on_end = params.get('on_end')
        if on_end in (None, ''):
            on_end = 'delete'
        if on_end not in ON_END:
            raise exceptions.MalformedParameter(
                param='on_end', reason='on_end is one of %s, not %s.' % (
                    ', '.join(ON_END), _short(on_end)))
        out['on_end'] = on_end
        out['volume_type'] = self._volume_type(params.get('volume_type'),
                                               'volume_type')
        out['resource_properties'] = instance_plugin.filter_of(
            params.get('resource_properties'))
        out['volumes'] = specs
        out.update(pool=None, volume_ids=[], snapshot_ids=[])
        return out

    def validate_change(self, current, changes):
        """What the client sends back unchanged of what Climate set is
        ignored; the rest is checked as a request."""
        changes = dict(changes)
        for key in OUTPUT_FIELDS:
            if key in changes:
                if changes[key] == current.get(key):
                    del changes[key]
                else:
                    raise exceptions.CantUpdateParameter(
                        message='%s cannot be updated. Climate sets it.'
                        % key, param=key)
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
        pool lists the types it serves)."""
        tree = filters.parse(params.get('resource_properties'),
                             'resource_properties')
        wanted = params.get('volume_type')
        found = []
        for pool in db_pools.reservable_pools(ctx):
            served = (pool.get('capabilities') or {}).get('volume_types')
            if wanted and isinstance(served, list) and wanted not in served:
                continue
            if filters.evaluate(tree, pool_props(pool)):
                found.append(db_pools.provider(pool['id']))
        return found

    def _not_enough(self, session, params, count, providers, start, end,
                    exc, what=None):
        """NotEnoughCapacity: how many fit, and from when all would."""
        shape = shape_of(params)
        available = exc.kwargs.get('available', 0)
        when = None
        if not providers:
            later = ('No reservable volume pool matches resource_properties'
                     '%s.' % (' and volume_type %s' % params['volume_type']
                              if params.get('volume_type') else ''))
        else:
            fits = {}
            for provider, held in ledger.inventories_of(
                    session, providers, ledger.VOLUME_POOL).items():
                usable = {c: capacity.usable(i) for c, i in held.items()}
                fits[provider] = capacity.units_fit(held, usable, shape)
            if capacity.total_fit(fits, True) < count:
                later = ('All %d never fit on one matching pool, even with '
                         'nothing else booked.' % count)
            else:
                until = instance_plugin.horizon_end(start, end - start)
                when = ledger.earliest_start(
                    session, shape, count, end - start, start,
                    latest_end=until, affinity=True, provider_ids=providers,
                    kind=ledger.VOLUME_POOL)
                if when is not None:
                    later = 'All %d would fit for as long from %s UTC.' % (
                        count, _fmt(when))
                else:
                    later = ('All %d do not fit for as long before %s UTC.'
                             % (count, _fmt(until)))
        return exceptions.NotEnoughCapacity(
            reason='%s%d volume(s) of %d GB fit on one pool from %s to %s '
                   'UTC among the %d reservable pool(s) matching; %d asked '
                   '(%d GB). %s' % (
                       (what + ': ') if what else '', available,
                       params['size_gb'], _fmt(start), _fmt(end),
                       len(providers), count, count * params['size_gb'],
                       later),
            available=available, earliest_start=_fmt(when))

    def _place(self, ctx, session, res_id, lease_id, params, start, end,
               count=None, providers=None, what=None):
        """Book ``count`` (default ``count``) volumes on one pool; the
        pool's name (NotEnoughCapacity when they do not fit)."""
        count = params['count'] if count is None else count
        if providers is None:
            providers = self.matching(ctx, params)
        try:
            placed = ledger.place(session, res_id, lease_id,
                                  shape_of(params), count, start, end,
                                  affinity=True, providers=providers,
                                  kind=ledger.VOLUME_POOL)
        except exceptions.Conflict as exc:
            raise self._not_enough(session, params, count, providers, start,
                                   end, exc, what)
        pool_id = db_pools.pool_of(next(iter(placed)))
        row = session.get(models.VolumePool, pool_id)
        return row.name if row is not None else None

    @staticmethod
    def _set(session, res_id, **values):
        """Store ``values`` in the reservation's parameters (the lease's
        body is rendered again at commit)."""
        row = session.get(models.Reservation, res_id)
        if row is None:
            return False
        params = dict(row.params or {})
        if all(params.get(k) == v for k, v in values.items()):
            return False
        row.params = dict(params, **values)
        session.flush()
        return True

    def reserve(self, ctx, lease, reservation):
        """Book the volumes over the lease's window on one pool
        (NotEnoughCapacity, 409, when no pool holds them)."""
        start = host_plugin.parse_view_date(lease['start_date'])
        end = host_plugin.parse_view_date(lease['end_date'])
        with db_api.writer(ctx) as session:
            pool = self._place(ctx, session, reservation['id'], lease['id'],
                               reservation, start, end)
            # part of the create (the rows are the create's core inserts):
            # updated_at stays null; the listing's body is rendered again
            session.execute(sa.update(models.Reservation).where(
                models.Reservation.id == reservation['id']).values(
                params=dict(reservation_params(reservation), pool=pool),
                updated_at=models.Reservation.updated_at))
            lease_json.changed(session, (lease['id'],))
        return reservation['id']

    def update(self, ctx, old_lease, lease, reservation, new_params):
        """Pending: the booking moves with the dates (same pool when it
        stays free), or is placed again for a new size, count, type or
        filter.  Active: the lease may be extended and ``count`` grow
        (on the same pool); nothing else changes."""
        params = dict(new_params)
        res_id = reservation['id']
        start = host_plugin.parse_view_date(lease['start_date'])
        end = host_plugin.parse_view_date(lease['end_date'])
        old_start = host_plugin.parse_view_date(old_lease['start_date'])
        old_end = host_plugin.parse_view_date(old_lease['end_date'])
        same = all(params.get(k) == reservation.get(k) for k in (
            'size_gb', 'volume_type', 'resource_properties'))
        status = reservation['status']
        if status == states.RES_ERROR:
            raise exceptions.InvalidStateUpdate(
                id=res_id, status=status,
                reason='Reservation %s is in error; delete its lease and '
                       'make a new one.' % res_id)
        with db_api.writer(ctx) as session:
            if status == states.RES_ACTIVE:
                return self._update_active(ctx, session, lease, reservation,
                                           params, same, old_end, end)
            same = same and params['count'] == reservation['count']
            if same:
                if (start, end) == (old_start, old_end):
                    return params
                try:
                    ledger.move(session, res_id, start, end)
                    return params
                except exceptions.Conflict:
                    pass
            ledger.release(session, res_id)
            params['pool'] = self._place(
                ctx, session, res_id, lease['id'], params, start, end,
                what='cannot %s reservation %s' % (
                    'move' if same else 'change', res_id))
        return params

    def _update_active(self, ctx, session, lease, reservation, params,
                       same, old_end, end):
        res_id = reservation['id']
        if not same or params.get('volumes') != reservation.get('volumes'):
            raise exceptions.InvalidStateUpdate(
                id=res_id, status=reservation['status'],
                reason='An active volume reservation only accepts to '
                       'extend its lease and grow count. Reservation %s is '
                       'active: its size_gb, volume_type, '
                       'resource_properties and volumes are in use.' %
                       res_id)
        old_count, count = reservation['count'], params['count']
        if count < old_count:
            raise exceptions.CantUpdateParameter(
                message='count cannot be updated. Reservation %s is active '
                        'and holds %d volume(s): count may grow, not drop '
                        'to %d; shorten the lease (end_date) to give them '
                        'back earlier.' % (res_id, old_count, count),
                param='count')
        now = dates.utcnow()
        if end != old_end:
            instance_plugin.extend(session, res_id, lease['id'], now, end,
                                   'its pool')
        if count > old_count:
            held = sorted({r[0] for r in ledger.bookings_of(session, res_id)
                           if r[4] > now})
            self._place(ctx, session, res_id, lease['id'], params, now, end,
                        count=count - old_count, providers=held,
                        what='cannot grow reservation %s' % res_id)
        return params

    def delete(self, ctx, lease, reservation):
        """Release the reservation's capacity."""
        with db_api.writer(ctx) as session:
            ledger.release(session, reservation['id'])

    # -- events ---------------------------------------------------------------

    def _pool(self, ctx, session, res_id):
        """The pool (dict) the reservation holds, or None."""
        ids = {db_pools.pool_of(r[0])
               for r in ledger.bookings_of(session, res_id)}
        ids.discard(None)
        pools = db_pools.pools_by_ids(ctx, ids) if ids else []
        return pools[0] if pools else None

    def on_start(self, ctx, lease, reservation, event):
        """Hand the volumes over (backend ``start``) and store their
        ids."""
        with db_api.writer(ctx) as session:
            pool = self._pool(ctx, session, reservation['id'])
            answer = self.backend.start(
                reservation, lease['project_id'], pool,
                lambda: self.user_session(lease)) or {}
            values = {'volume_ids': list(answer.get('volume_ids') or [])}
            if pool is not None:
                values['pool'] = pool['name']
            self._set(session, reservation['id'], **values)

    def on_end(self, ctx, lease, reservation, event=None):
        """Apply ``on_end`` to what the start made (backend ``end``) and
        free the capacity."""
        with db_api.writer(ctx) as session:
            answer = self.backend.end(reservation,
                                      reservation.get('on_end') or 'delete')
            snapshots = list((answer or {}).get('snapshot_ids') or [])
            if snapshots:
                self._set(session, reservation['id'], snapshot_ids=snapshots)
            ledger.release(session, reservation['id'])
