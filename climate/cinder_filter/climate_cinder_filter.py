"""ClimateCinderFilter: keeps Cinder's scheduler inside Climate's volume
reservations.

This module runs in **cinder-scheduler**, not in Climate: it imports only
the standard library, oslo.config, oslo.log and Cinder.  Cinder finds
scheduler filters only through the entry points ``cinder.scheduler.filters``
of installed distributions; the directory that holds this file also holds
``climate_cinder_filter.dist-info`` declaring that entry point, so putting
that directory on cinder-scheduler's ``PYTHONPATH`` (in an installed
Climate: ``<site-packages>/climate/cinder_filter``; or copy the file and the
dist-info anywhere) is enough, with, in cinder.conf::

    [DEFAULT]
    scheduler_default_filters = CapacityFilter,...,ClimateCinderFilter

How Cinder knows the reservations, without calling Climate
---------------------------------------------------------

At the start of a ``virtual:volume`` reservation ``<id>`` Climate creates a
**private volume type** ``reservation:<id>``, accessible to the lease's
project only, and deletes it at the end.  Its extra specs are the
reservation as this filter reads it:

``climate:reservation``  the reservation id;
``climate:owner``        the project that may use it;
``climate:pool``         the pool its capacity is booked on
                         (``host@backend#pool``, as ``get_pools`` names it);
``climate:reserved_gb``  the gigabytes booked there;
``climate:max_volumes``  the most volumes it may hold (absent: no limit);
``climate:start``, ``climate:end``  the lease window (ISO 8601, UTC);
plus ``volume_backend_name`` and the extra specs of the volume type the
reservation asked for, so that the capabilities filter agrees.

The filter lists those types once per scheduling request (one query on
Cinder's database, keyed on the extra spec ``climate:reservation``) and
sums, in one more query, the sizes of the existing volumes of each type:
that is what each reservation has used.  The volume being scheduled is
already in the database; it is left out of the sum, as are volumes the
scheduler refused (``error`` without a host).

Rules
-----

A request names a reservation by its volume type (extra spec
``climate:reservation``) and/or by the scheduler hint
``reservation=<id>``.  Such a request passes on a pool only when:

* the type and the hint (when both are given) name the same reservation,
  and the request's volume type *is* the reservation's type (a hint on
  another type is refused: Cinder keeps no trace of hints, so a volume of
  another type could not be counted against the reservation);
* the reservation's type exists and now is inside its window;
* the request's project is ``climate:owner``;
* the pool is ``climate:pool``;
* the gigabytes of the reservation's other volumes plus the request's
  (the size, or the new size of an extend) do not exceed
  ``climate:reserved_gb``;
* a new volume (not an extend) does not make more volumes than
  ``climate:max_volumes``.

A request naming no reservation passes on a pool holding reservations
only when Cinder's own ``CapacityFilter`` would accept a request larger by
the gigabytes those reservations booked and have not used yet (the
pool's capacity arithmetic -- reserved percentage, thin provisioning,
over-subscription -- stays Cinder's).  Pools without reservations, and
all pools when ``[climate] protect_reserved_capacity`` is false, pass.
"""

import datetime

from oslo_config import cfg
from oslo_log import log as logging

from cinder import context as cinder_context
from cinder import db as cinder_db
from cinder.scheduler import filters
from cinder.scheduler.filters import capacity_filter

LOG = logging.getLogger(__name__)

HINT = 'reservation'
RESERVATION_KEY = 'climate:reservation'
OWNER_KEY = 'climate:owner'
POOL_KEY = 'climate:pool'
RESERVED_GB_KEY = 'climate:reserved_gb'
MAX_VOLUMES_KEY = 'climate:max_volumes'
START_KEY = 'climate:start'
END_KEY = 'climate:end'

climate_group = cfg.OptGroup('climate', title="Climate's scheduler filter")

climate_opts = [
    cfg.BoolOpt('protect_reserved_capacity', default=True,
                help='Whether volumes created without a reservation are '
                     'kept off the capacity Climate reserved on a pool and '
                     'that its reservations have not used yet.'),
]


def register_opts(conf):
    group = cfg.OptGroup(climate_group.name, title=climate_group.title)
    conf.register_group(group)
    conf.register_opts(climate_opts, group=group)


# cinder's CONF is oslo.config's global CONF: registering here makes the
# [climate] section of cinder.conf readable.
register_opts(cfg.CONF)


def _now():
    return datetime.datetime.now(datetime.timezone.utc)


def _when(value):
    """An ISO 8601 date as an aware UTC datetime; None when absent or
    unreadable."""
    if not value:
        return None
    try:
        when = datetime.datetime.fromisoformat(
            str(value).strip().replace('Z', '+00:00').replace(' ', 'T'))
    except ValueError:
        return None
    if when.utcoffset() is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return when


def _get(obj, key, default=None):
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _hint(filter_properties):
    """The ``reservation`` hint as a string, None when absent (a list of
    several names no single reservation and is returned as it is)."""
    hints = filter_properties.get('scheduler_hints') or {}
    value = hints.get(HINT)
    if isinstance(value, (list, tuple)) and len(value) == 1:
        value = value[0]
    if value in (None, '', [], ()):
        return None
    return value


def _volume_type(filter_properties):
    return filter_properties.get('volume_type') or {}


def _type_reservation(filter_properties):
    specs = _get(_volume_type(filter_properties), 'extra_specs') or {}
    value = specs.get(RESERVATION_KEY)
    return value if value not in (None, '') else None


_CONFLICT = object()


def _requested(filter_properties):
    """The reservation a request names (hint or type), None when none,
    ``_CONFLICT`` when the two name different ones."""
    hint = _hint(filter_properties)
    typed = _type_reservation(filter_properties)
    if hint is None:
        return typed
    if typed is not None and typed != hint:
        return _CONFLICT
    return hint


def _project(filter_properties):
    spec = filter_properties.get('request_spec') or {}
    props = spec.get('volume_properties') or {}
    project = props.get('project_id')
    if project:
        return project
    ctxt = filter_properties.get('context')
    return getattr(ctxt, 'project_id', None)


def _volume_id(filter_properties):
    spec = filter_properties.get('request_spec') or {}
    return spec.get('volume_id')


def _amount(filter_properties):
    """The gigabytes the request's volume will have: the new size of an
    extend, else its size (the volume itself is left out of what its
    reservation uses)."""
    new_size = filter_properties.get('new_size')
    if new_size:
        return int(new_size)
    return int(filter_properties.get('size') or 0)


def _int(value):
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return 0


class Reservation:
    """A reservation as its volume type publishes it."""

    def __init__(self, vtype):
        specs = _get(vtype, 'extra_specs') or {}
        self.type_id = _get(vtype, 'id')
        self.id = specs.get(RESERVATION_KEY)
        self.owner = specs.get(OWNER_KEY)
        self.pool = specs.get(POOL_KEY)
        self.reserved_gb = _int(specs.get(RESERVED_GB_KEY))
        self.max_volumes = _int(specs.get(MAX_VOLUMES_KEY)) or None
        self.start = _when(specs.get(START_KEY))
        self.end = _when(specs.get(END_KEY))
        self.used_gb = 0
        self.used_volumes = 0

    def active(self, now):
        return ((self.start is None or self.start <= now)
                and (self.end is None or now < self.end))

    @property
    def unused_gb(self):
        return max(0, self.reserved_gb - self.used_gb)


def _pool_of(backend_state):
    """Every name a backend state may go by (``host@backend#pool`` or the
    cluster's)."""
    names = {getattr(backend_state, 'backend_id', None),
             getattr(backend_state, 'host', None),
             getattr(backend_state, 'cluster_name', None)}
    names.discard(None)
    return names


def load_reservations(ctxt, exclude_volume=None, now=None):
    """The active reservations published in Cinder, each with the
    gigabytes its volumes use (``exclude_volume`` left out): two queries
    of Cinder's database as an admin."""
    now = now or _now()
    admin = ctxt.elevated() if ctxt is not None else \
        cinder_context.get_admin_context()
    types = cinder_db.volume_type_get_all(admin, inactive=False,
                                          list_result=True)
    found = [Reservation(t) for t in types
             if RESERVATION_KEY in (_get(t, 'extra_specs') or {})]
    active = {r.type_id: r for r in found if r.id and r.active(now)}
    if active:
        volumes = cinder_db.volume_get_all(
            admin, filters={'volume_type_id': sorted(active)})
        for volume in volumes:
            if exclude_volume and _get(volume, 'id') == exclude_volume:
                continue
            if _get(volume, 'status') == 'error' and not _get(volume, 'host'):
                # refused by the scheduler: it holds nothing (a create being
                # scheduled has no host yet either, but counts)
                continue
            reservation = active.get(_get(volume, 'volume_type_id'))
            if reservation is not None:
                reservation.used_gb += _int(_get(volume, 'size'))
                reservation.used_volumes += 1
    return list(active.values())


class ClimateCinderFilter(filters.BaseBackendFilter):
    """Reserved pool capacity goes to its reservations only (see module)."""

    def __init__(self, conf=None):
        super().__init__()
        self.conf = conf if conf is not None else cfg.CONF
        self._capacity = capacity_filter.CapacityFilter()

    def filter_all(self, filter_obj_list, filter_properties):
        """Read the reservations once per request, then filter."""
        wanted = _requested(filter_properties)
        if wanted is None and not self.conf.climate.protect_reserved_capacity:
            return list(filter_obj_list)
        reservations = load_reservations(
            filter_properties.get('context'),
            exclude_volume=_volume_id(filter_properties))
        return [backend for backend in filter_obj_list
                if self._passes(backend, filter_properties, wanted,
                                reservations)]

    def backend_passes(self, backend_state, filter_properties):
        """One backend (Cinder calls :meth:`filter_all`; kept for
        callers that test one backend at a time)."""
        return bool(self.filter_all([backend_state], filter_properties))

    def _passes(self, backend, filter_properties, wanted, reservations):
        if wanted is _CONFLICT:
            LOG.info('the reservation hint and the volume type name '
                     'different reservations: refused')
            return False
        pools = _pool_of(backend)
        if wanted is not None:
            return self._reserved_passes(backend, pools, filter_properties,
                                         wanted, reservations)
        if not self.conf.climate.protect_reserved_capacity:
            return True
        unused = sum(r.unused_gb for r in reservations if r.pool in pools)
        if unused <= 0:
            return True
        bigger = dict(filter_properties)
        if filter_properties.get('new_size'):
            bigger['new_size'] = int(filter_properties['new_size']) + unused
        else:
            bigger['size'] = int(filter_properties.get('size') or 0) + unused
        if self._capacity.backend_passes(backend, bigger):
            return True
        LOG.debug('%s: %s GB are reserved and unused; no room for an '
                  'unreserved request of %s GB', backend, unused,
                  filter_properties.get('size'))
        return False

    def _reserved_passes(self, backend, pools, filter_properties, wanted,
                         reservations):
        reservation = next((r for r in reservations if r.id == wanted), None)
        if reservation is None:
            LOG.info('reservation %s is not active in Cinder (unknown, '
                     'not started or ended): refused', wanted)
            return False
        if _project(filter_properties) != reservation.owner:
            LOG.info('reservation %s belongs to another project: refused',
                     wanted)
            return False
        if _type_reservation(filter_properties) != wanted:
            LOG.info('reservation %s: create the volume with its volume '
                     'type reservation:%s: refused', wanted, wanted)
            return False
        if reservation.pool not in pools:
            return False
        amount = _amount(filter_properties)
        if reservation.used_gb + amount > reservation.reserved_gb:
            LOG.info('reservation %s: %s GB used of %s, %s GB more do not '
                     'fit: refused', wanted, reservation.used_gb,
                     reservation.reserved_gb, amount)
            return False
        if (reservation.max_volumes is not None and
                not filter_properties.get('new_size') and
                reservation.used_volumes >= reservation.max_volumes):
            LOG.info('reservation %s holds %s volume(s) of %s: refused',
                     wanted, reservation.used_volumes,
                     reservation.max_volumes)
            return False
        return True
