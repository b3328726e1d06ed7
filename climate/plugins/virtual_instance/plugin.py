"""The ``virtual:instance`` resource plugin, capacity mode (Blazar's).

A reservation asks for ``amount`` instances of a shape -- ``vcpus``,
``memory_mb``, ``disk_gb``, or the shape of an existing flavor given as
``flavor_id`` (Blazar's ``flavor:instance``) -- on hosts whose extra
capabilities match ``resource_properties``, all on one host (``affinity:
true``), each on a different one (``false``) or anywhere (``null``).

**Booking.**  The slots are amounts of the hosts' ``VCPU``,
``MEMORY_MB`` and ``DISK_GB`` in the capacity ledger
(``climate.db.ledger``, decision 7 of the design), placed by
``slot_search.place`` in the lease's transaction: it locks what it takes and
re-checks it, so instance slots and whole-host reservations of any
number of managers never overbook a host.  The hosts a reservation may
use are the reservable hosts matching its filter (the ``physical:host``
plugin's :class:`MatchCache` and filter language).

**In the cloud** the backend of ``[hosts] inventory`` acts
(``backends``): at the start it makes what lets the project boot on the
reserved capacity with the flavor whose id is the reservation's (Nova),
or only records (static); at the end it takes everything back.

**Parameters stored** (the reservation's view): Blazar's ``amount``,
``vcpus``, ``memory_mb``, ``disk_gb``, ``affinity``,
``resource_properties``, ``flavor_id`` (the reservation's own flavor id
from the create on, as in Blazar), ``server_group_id`` and
``aggregate_id`` (null until the start), and ``source_flavor`` (the
flavor a reservation was given as: id, resources, traits; else null).
"""

import collections
import datetime

from oslo_config import cfg
from oslo_log import log as logging
from oslo_utils import strutils

from climate import dates
from climate.db import api as db_api
from climate.db import hosts as db_hosts
from climate.db.ledger import availability
from climate.db.ledger import booking
from climate.db.ledger import inventory
from climate.db.ledger import slot_search
from climate.db import models
from climate.db import servers as db_servers
from climate import exceptions
from climate.plugins import backend_loader
from climate.plugins import base
from climate.plugins import common
from climate.plugins import host_filters
from climate.plugins import params as plugin_params
from climate.plugins import rebooking
from climate.plugins import values as plugin_values
from climate.plugins.virtual_instance import backends
from climate.plugins.virtual_instance import precreated
from climate.scheduling import capacity
from climate import states

LOG = logging.getLogger(__name__)
CONF = cfg.CONF

RESOURCE_TYPE = 'virtual:instance'
#: The shape's fields: (field, ledger class, smallest value -- Nova's
#: flavor bounds), in the order a unit is counted by.
SHAPE_FIELDS = (('vcpus', 'VCPU', 1), ('memory_mb', 'MEMORY_MB', 1),
                ('disk_gb', 'DISK_GB', 0))
SHAPE_CLASSES = tuple(cls for _f, cls, _m in SHAPE_FIELDS)
#: What a request may give (Blazar's fields, and flavor_id).
REQUEST_FIELDS = ('amount', 'vcpus', 'memory_mb', 'disk_gb', 'affinity',
                  'resource_properties', 'flavor_id')
#: Set by Climate at the start; a client may send them back as it read
#: them (null before the start).
OUTPUT_FIELDS = ('server_group_id', 'aggregate_id')
#: What the backend's start/resize answer is stored as.
CLOUD_IDS = ('flavor_id',) + OUTPUT_FIELDS
#: Blazar's spellings of "no affinity".
NONE_VALUES = ('None', 'none', None)
_WHAT = {
    'amount': 'how many instances of the shape to reserve',
    'vcpus': 'the VCPUs of one instance',
    'memory_mb': 'the memory of one instance, in MB',
    'disk_gb': 'the local disk of one instance, in GB',
}




def slots_held(session, res_id):
    """Whether the slots of reservation ``res_id`` are held by servers
    Climate places itself: it is the instance part of an ``on_start:
    wake`` stack, whose servers are woken onto its slots with their
    template flavor (``virtual_stack``).  Its flavor's Placement
    inventory is then kept closed, so that the project cannot boot
    ``amount`` more servers with it beside them."""
    row = session.get(models.Reservation, res_id)
    owner = session.get(models.Reservation, row.part_of) \
        if row is not None and row.part_of is not None else None
    return owner is not None and \
        (owner.params or {}).get('on_start') == 'wake'


def affinity_of(value):
    """Blazar's ``affinity``: true, false or None, as booleans, Blazar's
    boolean strings (``'True'``, ``'no'``, ``'1'``...) or ``'None'``."""
    if value in NONE_VALUES:
        return None
    if strutils.is_valid_boolstr(value):
        return strutils.bool_from_string(value)
    raise exceptions.MalformedParameter(
        message='Malformed parameter affinity (must be a bool value or '
                'None). affinity is true (all instances on one host), false '
                '(each on a different host) or null (anywhere), not %s.' %
                common.short(value), param='affinity')


def _integer(value, name, low):
    """``climate.plugins.params.integer``, saying what the instance field
    ``name`` is."""
    return plugin_params.integer(value, name, low, _WHAT.get(name))


def shape_of(params):
    """The ledger shape of one instance: ``{class: amount}`` of the
    positive classes; a source flavor's Placement ``resources`` override
    its VCPU/MEMORY_MB/DISK_GB."""
    shape = {cls: params[field] for field, cls, _m in SHAPE_FIELDS}
    source = params.get('source_flavor') or {}
    for cls, amount in (source.get('resources') or {}).items():
        if cls in shape:
            shape[cls] = amount
    return {cls: amount for cls, amount in shape.items() if amount > 0}


def shape_text(shape):
    """A shape in Blazar's field names: ``vcpus=1, memory_mb=512,
    disk_gb=1``."""
    return ', '.join('%s=%d' % (field, shape.get(cls, 0))
                     for field, cls, _m in SHAPE_FIELDS)


def most_slots(session, providers, shape, affinity):
    """How many slots of ``shape`` ``providers`` could hold with nothing
    booked (one statement): more are never possible."""
    fits = {}
    for provider, held in inventory.inventories_of(
            session, providers, inventory.COMPUTE_HOST).items():
        usable = {cls: capacity.usable(inv) for cls, inv in held.items()}
        fits[provider] = capacity.units_fit(held, usable, shape)
    return capacity.total_fit(fits, affinity)


def _server_of(params):
    """The server a pre-created reservation holds on the ledger
    (``climate.db.servers``); None for a capacity reservation and for a
    boot request not booted yet."""
    if not precreated.is_precreated(params):
        return None
    return params.get('server_id') or None


def _unit_class(shape):
    """The class a unit is counted by, and its amount per unit."""
    cls = next(c for c in SHAPE_CLASSES if shape.get(c))
    return cls, shape[cls]


def booked_hosts(ctx, session, res_id, params, at):
    """``[(host facts, slots)]`` of instance reservation ``res_id`` (its
    stored ``params``) at ``at``, by host id: what its start hands over,
    and where a stack's woken servers go."""
    units = VirtualInstancePlugin._units(session, res_id, shape_of(params),
                                         at)
    rows = db_hosts.hosts_by_ids(ctx, sorted(int(p) for p in units))
    return [(host_filters.host_facts(row), units[str(row.id)])
            for row in sorted(rows, key=lambda r: r.id)]


class VirtualInstancePlugin(backend_loader.BackendOwner,
                            base.ResourcePlugin):
    resource_type = RESOURCE_TYPE
    description = ('Instance slots of a shape (vcpus, memory_mb, disk_gb or '
                   'a flavor), handed over as a private flavor.')

    backends = backends

    def __init__(self, owner=None):
        super().__init__(owner)
        self._matches = host_filters.MatchCache()

    @property
    def heal_interval(self):
        """Seconds between two :meth:`heal` runs, as for hosts (0 with
        the static inventory, which never reports a host down)."""
        if CONF.hosts.inventory == 'static':
            return 0
        return CONF.hosts.healing_interval

    # -- parameters ----------------------------------------------------------

    def _source_flavor(self, flavor_id):
        """The shape of an existing flavor (``backend.flavor``)."""
        if not isinstance(flavor_id, str) or not 0 < len(flavor_id) <= 255 \
                or not common.storable(flavor_id):
            raise exceptions.MalformedParameter(
                param='flavor_id',
                reason='flavor_id is the id of an existing flavor (a string '
                       'of at most 255 characters), not %s.' %
                       common.short(flavor_id))
        flavor = self.backend.flavor(flavor_id)
        resources = {str(k): int(v)
                     for k, v in (flavor.get('resources') or {}).items()}
        others = sorted(cls for cls, amount in resources.items()
                        if amount > 0 and cls not in SHAPE_CLASSES)
        if others:
            raise exceptions.MalformedParameter(
                param='flavor_id',
                reason='Flavor %s asks for %s, which Climate does not book '
                       '(it books %s); give vcpus, memory_mb and disk_gb '
                       'instead.' % (flavor_id, ', '.join(others),
                                     ', '.join(SHAPE_CLASSES)))
        traits = flavor.get('traits') or {}
        return {
            'vcpus': flavor['vcpus'], 'memory_mb': flavor['memory_mb'],
            'disk_gb': flavor['disk_gb'],
            'source_flavor': {
                'id': str(flavor.get('id') or flavor_id),
                'resources': resources,
                'traits': {'required': list(traits.get('required') or []),
                           'forbidden': list(traits.get('forbidden') or [])},
            }}

    def validate(self, params):
        """Check a request as Blazar does, with its sentences first.

        ``amount`` and either the shape (``vcpus``, ``memory_mb``,
        ``disk_gb``) or ``flavor_id``; ``affinity`` and
        ``resource_properties`` are optional.  Each malformed field is a
        400 naming it.

        A request naming ``server_id`` or ``server`` is of the
        pre-created mode (``precreated``), checked there.

        :returns: every stored parameter (see the module's docstring),
            ``flavor_id`` None until :meth:`params_with_id`.
        """
        if precreated.is_precreated(params):
            return precreated.validate(params, self.backend,
                                      plugin_params.filter_of)
        unknown = sorted(set(params) - set(REQUEST_FIELDS) -
                         set(OUTPUT_FIELDS))
        if unknown:
            raise exceptions.InvalidInput(
                reason='%s: not a virtual:instance parameter; accepted: %s'
                % (', '.join(unknown), ', '.join(REQUEST_FIELDS)))
        for key in OUTPUT_FIELDS:
            if params.get(key) is not None:
                raise exceptions.MalformedParameter(
                    param=key, reason='%s is set by Climate when the lease '
                                      'starts; leave it out.' % key)
        flavor_id = params.get('flavor_id')
        by_flavor = flavor_id not in (None, '')
        shape_given = [f for f, _c, _m in SHAPE_FIELDS
                       if params.get(f) not in (None, '')]
        if by_flavor and shape_given:
            raise exceptions.MalformedParameter(
                param='flavor_id',
                reason='Give either flavor_id or vcpus, memory_mb and '
                       'disk_gb, not both (%s given with flavor_id).' %
                       ', '.join(shape_given))
        required = ['amount'] + ([] if by_flavor else
                                 [f for f, _c, _m in SHAPE_FIELDS])
        missing = [k for k in required if params.get(k) in (None, '')]
        if missing:
            raise exceptions.MissingParameter(
                message='Missing parameter %s. A virtual:instance '
                        'reservation needs amount and either vcpus, '
                        'memory_mb and disk_gb or flavor_id.' %
                        ','.join(missing), param=','.join(missing))
        out = {'amount': _integer(params['amount'], 'amount', 1)}
        if by_flavor:
            out.update(self._source_flavor(flavor_id))
        else:
            for field, _cls, low in SHAPE_FIELDS:
                out[field] = _integer(params[field], field, low)
            out['source_flavor'] = None
        if not shape_of(out):
            raise exceptions.MalformedParameter(
                param='flavor_id', reason='Flavor %s asks for nothing '
                                          'Climate books.' % flavor_id)
        out['affinity'] = affinity_of(params.get('affinity'))
        out['resource_properties'] = plugin_params.filter_of(
            params.get('resource_properties'))
        out.update(flavor_id=None, server_group_id=None, aggregate_id=None)
        return out

    def params_with_id(self, params, reservation_id):
        """``flavor_id`` is the reservation's id from the create on (as
        Blazar names the reservation's flavor), so templates can use it
        before the start.  A pre-created reservation shows its server's
        flavor."""
        if precreated.is_precreated(params):
            return params
        return dict(params, flavor_id=reservation_id)

    def validate_change(self, current, changes):
        """Check an update: what the client sends back unchanged
        (``flavor_id``, ``server_group_id``, ``aggregate_id``) is ignored;
        a new ``flavor_id`` replaces the shape, a new shape the source
        flavor; the cloud ids stay."""
        if precreated.is_precreated(current):
            return precreated.validate_change(current, changes,
                                             plugin_params.filter_of)
        changes = dict(changes)
        for key in CLOUD_IDS + ('source_flavor',):
            if key in changes and changes[key] == current.get(key):
                del changes[key]
        for key in OUTPUT_FIELDS:
            if key in changes:
                raise exceptions.CantUpdateParameter(
                    message='%s cannot be updated. Climate sets it when the '
                            'lease starts.' % key, param=key)
        merged = {k: v for k, v in current.items()
                  if k in REQUEST_FIELDS and k != 'flavor_id'}
        reshaped = 'flavor_id' in changes or any(
            f in changes for f, _c, _m in SHAPE_FIELDS)
        if 'flavor_id' in changes:
            for field, _cls, _low in SHAPE_FIELDS:
                merged.pop(field, None)
        merged.update(changes)
        out = self.validate(merged)
        if not reshaped:
            out['source_flavor'] = current.get('source_flavor')
        for key in CLOUD_IDS:
            out[key] = current.get(key)
        return out

    # -- allocation -----------------------------------------------------------

    def matching(self, ctx, params):
        """Ids (as ledger provider ids) of the reservable hosts matching
        ``resource_properties`` (cached per inventory version)."""
        return [str(i) for i in self._matches.get(
            ctx, {'resource_properties': params.get('resource_properties')
                  or ''})]

    def _not_enough(self, session, shape, count, affinity, providers, start,
                    end, exc, what=None):
        """NotEnoughCapacity: how many fit, and from when all would."""
        available = exc.kwargs.get('available', 0)
        when = None
        if not providers:
            later = 'No reservable host matches resource_properties.'
        elif most_slots(session, providers, shape, affinity) < count:
            later = ('All %d never fit on the matching hosts, even with '
                     'nothing else booked.' % count)
        else:
            until = rebooking.horizon_end(start, end - start)
            when = availability.earliest_start(
                session, shape, count, end - start, start, latest_end=until,
                affinity=affinity, provider_ids=providers,
                kind=inventory.COMPUTE_HOST)
            if when is not None and when <= start:
                # refused over this very window: the ledger's rounds were
                # spent on hosts concurrent requests took under the lock
                later = 'Concurrent requests took them meanwhile; try again.'
            elif when is not None:
                later = 'All %d would fit for as long from %s UTC.' % (
                    count, common.fmt(when))
            else:
                later = ('All %d do not fit for as long before %s UTC.' %
                         (count, common.fmt(until)))
        placement = {True: ' on one host', False: ' on distinct hosts',
                     None: ''}[affinity]
        return exceptions.NotEnoughCapacity(
            reason='%s%d instance(s) of %s fit%s from %s to %s UTC on the %d '
                   'reservable host(s) matching resource_properties; %d '
                   'asked. %s' % (
                       (what + ': ') if what else '', available,
                       shape_text(shape), placement, common.fmt(start),
                       common.fmt(end), len(providers), count, later),
            available=available, earliest_start=common.fmt(when))

    def _place(self, ctx, session, res_id, lease_id, params, start, end,
               count=None, providers=None, what=None):
        """Book ``count`` (default ``amount``) slots of the shape over
        ``[start, end)`` on ``providers`` (default: the matching hosts);
        NotEnoughCapacity when they do not fit."""
        shape = shape_of(params)
        count = params['amount'] if count is None else count
        if providers is None:
            providers = self.matching(ctx, params)
        try:
            return slot_search.place(session, res_id, lease_id, shape, count,
                                     start, end, affinity=params['affinity'],
                                     providers=providers,
                                     kind=inventory.COMPUTE_HOST)
        except exceptions.Conflict as exc:
            raise self._not_enough(session, shape, count, params['affinity'],
                                   providers, start, end, exc, what)

    def reserve(self, ctx, lease, reservation):
        """Book the slots over the lease's window (NotEnoughCapacity, 409,
        when they do not fit); the reservation's resource id is its
        own."""
        owner = reservation.params.get('server_project_id')
        if owner is not None and owner != lease.project_id:
            raise exceptions.MalformedParameter(
                param='server_id',
                reason='Server %s is not a server of project %s, the '
                       "lease's." % (reservation.params['server_id'],
                                     lease.project_id))
        start = lease.start_date
        end = lease.end_date
        server_id = _server_of(reservation.params)
        with db_api.writer(ctx) as session:
            if server_id is not None:
                # its ledger row first, before the hosts' locks
                db_servers.ensure(session, server_id)
            placed = self._place_server(ctx, session, reservation.id,
                                        lease.id, reservation.params, start,
                                        end)
        LOG.debug('Reservation %s holds slots %s', reservation.id, placed)
        return reservation.id

    def _place_server(self, ctx, session, res_id, lease_id, params, start,
                      end, what=None):
        """:meth:`_place` the slots, then, for a pre-created reservation
        naming its server, hold the server over the same window in the
        same transaction (``climate.db.servers``: one lease at a time).
        The 409 says the server is held when it is, even when the hosts
        are full too."""
        server_id = _server_of(params)
        try:
            placed = self._place(ctx, session, res_id, lease_id, params,
                                 start, end, what=what)
        except exceptions.NotEnoughCapacity:
            held = server_id and db_servers.refusal(
                session, server_id, start, end, lease_id, res_id)
            if held:
                raise held
            raise
        if server_id is not None:
            db_servers.hold(session, res_id, lease_id, server_id, start,
                            end)
        return placed

    def update(self, ctx, old_lease, lease, reservation, new_params):
        """Move, resize or reshape a reservation (its lease's transaction
        rolls back on any refusal).

        Pending: the slots move with the dates (same hosts when they stay
        free), or are placed again for a new shape, amount, affinity or
        filter.  Active (Blazar's rule): only the amount may change, and
        only grow; the lease may be extended while the hosts' capacity
        stays free, and new slots are added from now on.
        """
        params = dict(new_params)
        res_id = reservation.id
        start = lease.start_date
        end = lease.end_date
        old_start = old_lease.start_date
        old_end = old_lease.end_date
        same_slots = (
            shape_of(params) == shape_of(reservation.params) and
            params['affinity'] == reservation.params.get('affinity') and
            params['resource_properties'] ==
            reservation.params.get('resource_properties', ''))
        status = reservation.status
        if status == states.RES_ERROR:
            raise exceptions.InvalidStateUpdate(
                id=res_id, status=status,
                reason="An error reservation doesn't accept an updating "
                       "request. Reservation %s is in error; delete its "
                       "lease and make a new one." % res_id)
        with db_api.writer(ctx) as session:
            if status == states.RES_ACTIVE:
                return self._update_active(ctx, session, lease, reservation,
                                           params, same_slots, old_end, end)
            moved = (start, end) != (old_start, old_end)
            same_slots = same_slots and \
                params['amount'] == reservation.params['amount']
            if same_slots:
                if not moved:
                    return params
                try:
                    # the same hosts when they stay free: refused before
                    # it writes anything; a pre-created reservation's
                    # server moves with its slot
                    booking.move(session, res_id, start, end)
                    return params
                except exceptions.Conflict as exc:
                    held = db_servers.explained(session, exc, lease.id,
                                                start, end, res_id)
                    if held:
                        raise held
            booking.release(session, res_id)
            self._place_server(ctx, session, res_id, lease.id, params,
                               start, end, what='cannot %s reservation %s' % (
                                   'move' if same_slots else 'change',
                                   res_id))
        return params

    def _update_active(self, ctx, session, lease, reservation, params,
                       same_slots, old_end, end):
        res_id = reservation.id
        if not same_slots:
            raise exceptions.InvalidStateUpdate(
                id=res_id, status=reservation.status,
                reason='An active reservation only accepts to update '
                       'amount. Reservation %s is active: its shape, '
                       'affinity and resource_properties are in use by its '
                       'flavor. Its amount may grow and its lease may be '
                       'extended; reserve another shape in a new lease.' %
                       res_id)
        old_amount, amount = reservation.params['amount'], params['amount']
        if amount < old_amount:
            raise exceptions.CantUpdateParameter(
                message="Instance reservation doesn't allow to "
                        "reduce/replace reserved instance slots when the "
                        "reservation is in active status. Reservation %s "
                        "holds %d slot(s), which servers may use: amount may "
                        "grow, not drop to %d; shorten the lease (end_date) "
                        "to give them all back earlier." % (
                            res_id, old_amount, amount), param='amount')
        now = dates.utcnow()
        if end != old_end:
            rebooking.extend(session, res_id, lease.id, now, end, 'its hosts')
        if amount > old_amount:
            held = self._units(session, res_id, shape_of(params), now)
            matching = self.matching(ctx, params)
            if params['affinity'] is True:
                providers = sorted(held)
            elif params['affinity'] is False:
                providers = [p for p in matching if p not in held]
            else:
                providers = matching
            self._place(ctx, session, res_id, lease.id, params, now, end,
                        count=amount - old_amount, providers=providers,
                        what='cannot grow reservation %s' % res_id)
            params.update(self._cloud_ids(self.backend.resize(
                self._backend_view(reservation, session, params),
                lease.project_id,
                self._hosts(ctx, session, res_id, params, now),
                self._user_session_of(lease))))
        return params

    def delete(self, ctx, lease, reservation):
        """Release the reservation's slots; what :meth:`prepare` made for
        a reservation that never started goes too."""
        if reservation.status == states.RES_PENDING and \
                self.backend.acts_in_cloud:
            if not precreated.is_precreated(reservation.params):
                self.backend.end(self._backend_view(reservation), [])
            elif reservation.params.get('server') and \
                    reservation.params.get('server_id'):
                # a server Climate booted for the lease goes with it; the
                # user's own server stays (shelved) in the project
                self.backend.discard(reservation.as_dict())
        with db_api.writer(ctx) as session:
            booking.release(session, reservation.id)

    @db_api.retry_on_deadlock
    def prepare(self, ctx, lease, reservation):
        """Make the reservation's flavor (and server group) before the
        start, as Blazar does at create: a Heat stack boots its servers
        with the reservation's flavor right after ``OS::Blazar::Lease``
        is created.  Run after the create (or a pending change) has
        committed; a failure is logged, the start makes what is
        missing."""
        if not self.backend.acts_in_cloud or \
                reservation.status != states.RES_PENDING:
            return
        try:
            if precreated.is_precreated(reservation.params):
                # the periodic pass's reservations are dicts
                self._hold(ctx, lease, reservation.as_dict())
                return
            ids = self._cloud_ids(self.backend.prepare(
                self._backend_view(reservation), lease.project_id,
                self._user_session_of(lease)))
        except Exception:
            LOG.exception('Reservation %s: could not prepare it before the '
                          'start; the start (or the periodic pass) will',
                          reservation.id)
            return
        with db_api.writer(ctx):
            # the lease lock orders this with its events and updates
            locked = db_api.lease_get(ctx, lease.id, for_update=True)
            if any(r.id == reservation.id for r in locked.reservations):
                self._store_ids(ctx, reservation.id, ids)

    def _hold(self, ctx, lease, reservation):
        """Boot a pre-created reservation's server when it was given as a
        boot request, and shelve it until the start.  Returns whether the
        reservation changed."""
        view = dict(reservation)
        if view.get('server_id') is None:
            view['server_id'] = self._boot_once(ctx, lease, view)
            if view['server_id'] is None:
                return False  # the reservation is gone
        return self._shelve_while_pending(ctx, lease.id, view)

    @db_api.retry_on_deadlock
    def _shelve_while_pending(self, ctx, lease_id, view):
        """Shelve the server and store what Nova said under the lease's
        lock, and only while the reservation is still pending: the start
        wakes the server holding that lock, so a hold read before the
        start can neither shelve the woken server nor write its stale
        status over the wake's."""
        with db_api.writer(ctx) as session:
            db_api.lease_get(ctx, lease_id, for_update=True)
            row = session.get(models.Reservation, view['id'])
            if row is None or row.status != states.RES_PENDING:
                return False
            return self._store_ids(ctx, view['id'], self.backend.hold(view))

    @db_api.retry_on_deadlock
    def _boot_once(self, ctx, lease, reservation):
        """Boot the server under the lease's lock and store its id in the
        same transaction: the boot after the create and the periodic pass
        (of any manager) never both boot.  The server is held on the
        ledger over the lease's window in that transaction too
        (``climate.db.servers``), so no other lease can name it for an
        overlapping window once its id is known.  A server booted for the
        reservation that another lease named meanwhile (the boot found it
        again by its metadata, its id stored by no one) stays that
        lease's: the reservation shows why (``server_error``, missing
        resources) and holds no server; each periodic pass tries again."""
        with db_api.writer(ctx) as session:
            locked = db_api.lease_get(ctx, lease.id, for_update=True)
            row = session.get(models.Reservation, reservation['id'])
            if row is None:
                return None
            server_id = (row.params or {}).get('server_id')
            if server_id is None:
                server_id = self.backend.boot(
                    reservation, lease.project_id,
                    self._user_session_of(lease))
                try:
                    db_servers.hold(session, row.id, locked.id, server_id,
                                    locked.start_date, locked.end_date)
                except exceptions.Conflict as exc:
                    error = 'Reservation %s holds no server: %s' % (
                        row.id, exc.kwargs.get('reason', exc))
                    if (row.params or {}).get('server_error') != error:
                        row.params = dict(row.params, server_error=error)
                        row.missing_resources = True
                        locked.degraded = True
                        session.flush()
                        LOG.warning('%s', error)
                    return None
                row.params = dict(row.params, server_id=server_id)
                session.flush()
            return server_id

    def _hold_pending(self, ctx):
        """Keep the servers of pending pre-created reservations shelved
        (booted, when the boot after the create failed; shelved again
        when their user started them).  Returns the ids changed."""
        changed = []
        for lease, res in db_api.pending_reservations(ctx, RESOURCE_TYPE):
            if not precreated.is_precreated(res):
                continue
            try:
                if self._hold(ctx, lease, res):
                    changed.append(res['id'])
            except Exception:
                LOG.exception('Reservation %s: could not keep its server '
                              'shelved', res['id'])
        return changed

    # -- events ---------------------------------------------------------------

    @staticmethod
    def _units(session, res_id, shape, at):
        """``{provider: slots}`` the reservation holds at ``at`` (its
        bookings of the shape's unit class; the last instant of its
        window when ``at`` is past it, the first when before)."""
        rows = booking.bookings_of(session, res_id)
        if not rows:
            return {}
        first = min(r[3] for r in rows)
        last = max(r[4] for r in rows)
        at = max(at, first)
        if at >= last:
            at = last - datetime.timedelta(seconds=1)
        cls, per = _unit_class(shape)
        units = collections.Counter()
        for provider, rclass, amount, start, end in rows:
            if rclass == cls and start <= at < end:
                units[provider] += amount // per
        return {p: n for p, n in units.items() if n}

    def _hosts(self, ctx, session, res_id, params, at):
        return booked_hosts(ctx, session, res_id, params, at)

    @staticmethod
    def _backend_view(reservation, session=None, params=None):
        """The reservation (a ``Reservation``, with ``params`` instead of
        its own when given) as the backend sees it, a dict:
        ``flavor_id`` is the source flavor (None when given as a shape);
        given ``session``, ``slots_held`` (:func:`slots_held`)."""
        view = dict(reservation.as_dict(), **(params or {}))
        view['flavor_id'] = (view.get('source_flavor') or {}).get('id')
        if session is not None:
            view['slots_held'] = slots_held(session, reservation.id)
        return view

    def _user_session_of(self, lease):
        return lambda: self.user_session(lease)

    @staticmethod
    def _cloud_ids(answer):
        """The ids a backend answered, to store (the reservation's flavor
        id is never lost to a None)."""
        ids = {k: (answer or {}).get(k) for k in CLOUD_IDS}
        if ids['flavor_id'] is None:
            del ids['flavor_id']
        return ids

    @staticmethod
    def _store_ids(ctx, res_id, ids):
        """Store the cloud ids on the reservation, in the caller's
        transaction (the lease's body is rendered again at commit).  A
        ``server_error`` flags the reservation (and its lease) as missing
        resources.  Returns whether anything changed."""
        with db_api.writer(ctx) as session:
            row = session.get(models.Reservation, res_id)
            if row is None:
                return False
            params = dict(row.params or {})
            changed = any(params.get(k) != v for k, v in ids.items())
            if changed:
                row.params = dict(params, **ids)
            if ids.get('server_error') and not row.missing_resources:
                row.missing_resources = True
                row.lease.degraded = True
                changed = True
            if changed:
                session.flush()
            return changed

    def on_start(self, ctx, lease, reservation, event):
        """Hand the slots over (backend ``start``) and store what it
        made."""
        now = dates.utcnow()
        with db_api.writer(ctx) as session:
            hosts = self._hosts(ctx, session, reservation.id,
                                reservation.params, now)
            if precreated.is_precreated(reservation.params):
                self._store_ids(ctx, reservation.id, self._wake(
                    lease, reservation, hosts))
                return
            ids = self._cloud_ids(self.backend.start(
                self._backend_view(reservation, session),
                lease.project_id, hosts,
                self._user_session_of(lease)))
            self._store_ids(ctx, reservation.id, ids)

    def _wake(self, lease, reservation, hosts):
        """Unshelve a pre-created reservation's server onto its host."""
        if not reservation.params.get('server_id'):
            # its boot never succeeded: nothing runs, and the lease says so
            return {'server_status': None, 'server_error': (
                'The server of reservation %s was never booted: %s' % (
                    reservation.id, reservation.params.get('server_error') or
                    'Nova refused it or could not be reached.'))}
        if not self.backend.acts_in_cloud:
            return {'server_status': 'ACTIVE', 'server_error': None}
        facts = hosts[0][0] if hosts else None
        if facts is None:
            return {'server_error': 'Reservation %s holds no host now.' %
                    reservation.id}
        return self.backend.wake(reservation.as_dict(), lease.project_id,
                                 facts, self._user_session_of(lease))

    def on_end(self, ctx, lease, reservation, event=None):
        """Take everything back (backend ``end``; a pre-created
        reservation's ``on_end`` action on its server) and free the
        slots."""
        with db_api.writer(ctx) as session:
            if precreated.is_precreated(reservation.params):
                if self.backend.acts_in_cloud:
                    self._store_ids(ctx, reservation.id,
                                    self.backend.release(
                                        reservation.as_dict()))
            else:
                hosts = self._hosts(ctx, session, reservation.id,
                                    reservation.params, dates.utcnow())
                self.backend.end(self._backend_view(reservation), hosts)
            booking.release(session, reservation.id)

    # -- healing --------------------------------------------------------------

    def heal(self, ctx):
        """Re-place the slots that hosts gone down (unreservable: the
        host inventory's healing marks them) carry from now on, on free
        matching capacity; flag the reservations that cannot be healed
        (``missing_resources``, their lease ``degraded``), and clear the
        flag of those left on no down host.  Returns the ids of the
        reservations it changed."""
        now = dates.utcnow()
        down = {str(h.id) for h in db_hosts.unreservable_hosts(ctx)}
        changed = set()
        if down:
            with db_api.reader(ctx) as session:
                held = booking.holders(session, down, now)
            lost = collections.defaultdict(set)
            for res_id, lease_id, provider in held:
                lost[res_id, lease_id].add(provider)
            for (res_id, lease_id), providers in sorted(lost.items()):
                try:
                    if self._heal_reservation(ctx, res_id, lease_id,
                                              providers, down, now):
                        changed.add(res_id)
                except Exception:
                    LOG.exception('Could not heal reservation %s (hosts %s)',
                                  res_id, ', '.join(sorted(providers)))
        changed |= self._clear_flags(ctx, down, now)
        if self.backend.acts_in_cloud:
            changed.update(self._hold_pending(ctx))
        return sorted(changed)

    @db_api.retry_on_deadlock
    def _heal_reservation(self, ctx, res_id, lease_id, lost, down, now):
        with db_api.writer(ctx) as session:
            # the lease lock orders healing with this lease's events
            lease = db_api.lease_get(ctx, lease_id, for_update=True)
            if lease.status not in states.LEASE_HOLDING:
                return False
            res = next((r for r in lease.reservations if r.id == res_id),
                       None)
            if res is None or res.resource_type != RESOURCE_TYPE or \
                    res.status not in (states.RES_PENDING, states.RES_ACTIVE):
                return False
            params = dict(res.params)
            shape = shape_of(params)
            cls, per = _unit_class(shape)
            rows = [r for r in booking.bookings_of(session, res_id)
                    if r[4] > now]
            gone = [r for r in rows if r[0] in lost and r[1] == cls]
            count = sum(r[2] for r in gone) // per
            if not count:
                return False
            kept = {r[0] for r in rows if r[0] not in lost}
            matching = [p for p in self.matching(ctx, params)
                        if p not in down]
            if params['affinity'] is False:
                matching = [p for p in matching if p not in kept]
            since = max(now, min(r[3] for r in gone))
            until = max(r[4] for r in gone)
            try:
                if precreated.is_precreated(params) and \
                        res.status == states.RES_ACTIVE:
                    # a running server is not moved by Climate: flagged
                    raise exceptions.Conflict(reason='server runs')
                slot_search.place(session, res_id, lease_id, shape, count,
                                  since, until, affinity=params['affinity'],
                                  providers=matching,
                                  kind=inventory.COMPUTE_HOST)
            except exceptions.Conflict:
                if res.missing_resources:
                    return False
                res.missing_resources = True
                lease.degraded = True
                LOG.warning('Reservation %s lost hosts %s and its %d slot(s) '
                            'fit nowhere else: missing resources', res_id,
                            ', '.join(sorted(lost)), count)
                return True
            booking.release(session, res_id, provider_ids=sorted(lost))
            res.resources_changed = True
            if res.status == states.RES_ACTIVE:
                answer = self.backend.resize(
                    self._backend_view(plugin_values.Reservation.of(res),
                                       session, params),
                    lease.project_id,
                    self._hosts(ctx, session, res_id, params, now),
                    self._user_session_of(plugin_values.Lease.of(lease)))
                res.params = dict(params, **self._cloud_ids(answer))
            LOG.info('Reservation %s: %d slot(s) on hosts %s placed again',
                     res_id, count, ', '.join(sorted(lost)))
            db_api.flush(ctx)
            return True

    def _clear_flags(self, ctx, down, now):
        """Clear missing_resources where no booking is on a down host
        (not where a pre-created server is in error)."""
        cleared = set()
        for res_id, lease_id in db_api.reservations_flagged(ctx,
                                                            RESOURCE_TYPE):
            with db_api.reader(ctx) as session:
                hosts = {r[0] for r in booking.bookings_of(session, res_id)
                         if r[4] > now}
            if hosts & down:
                continue
            with db_api.writer(ctx):
                locked = db_api.lease_get(ctx, lease_id, for_update=True)
                for r in locked.reservations:
                    # a pre-created server that is gone stays flagged
                    if r.id == res_id and r.missing_resources and \
                            not (r.params or {}).get('server_error'):
                        r.missing_resources = False
                        cleared.add(res_id)
                locked.degraded = any(r.missing_resources
                                      for r in locked.reservations)
        return cleared
