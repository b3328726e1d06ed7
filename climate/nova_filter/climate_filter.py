"""ClimateFilter: keeps Nova's scheduler inside Climate's reservations.

This module runs in **nova-scheduler**, not in Climate: it imports only the
standard library, oslo.config and Nova.  Load it by putting the directory
that holds this file on nova-scheduler's ``PYTHONPATH`` (in an installed
Climate: ``<site-packages>/climate/nova_filter``; or copy the file anywhere)
and, in nova.conf::

    [filter_scheduler]
    available_filters = nova.scheduler.filters.all_filters
    available_filters = climate_filter.ClimateFilter
    enabled_filters = ComputeFilter,...,ClimateFilter

    [climate]
    # may servers booted without a reservation hint land on freepool hosts?
    freepool_accepts_unreserved = true
    aggregate_freepool_name = freepool

Climate puts every reservable host in the freepool aggregate (metadata
``climate:freepool=true``) and, while a reservation is active, moves its
hosts into an aggregate named after the reservation id with metadata
``climate:reservation=<reservation id>`` and ``climate:owner=<project id>``;
the aggregate exists from the lease start to its end, so "active" needs no
call to Climate here.  An instance reservation (``virtual:instance``)
has such an aggregate too, holding the hosts its slots are booked on; those
hosts stay in the freepool, and a host may be in the aggregates of several
instance reservations at once.  Its servers are booted with the
reservation's private flavor, whose extra spec
``aggregate_instance_extra_specs:reservation`` is the reservation id.

A request names a reservation by the scheduler hint ``reservation=<id>``
(``openstack server create --hint reservation=<id>``: host reservations)
or by its flavor's ``aggregate_instance_extra_specs:reservation`` extra
spec (instance reservations).  Such a request:

* passes only on hosts with an aggregate whose ``climate:reservation`` is
  ``<id>``, and only when the request's project is that aggregate's
  ``climate:owner`` (every aggregate of the host is looked at);
* passes nowhere when the hint and the flavor name different reservations.

A request naming no reservation:

* it passes on a host inside the aggregate of a *pre-created* instance
  reservation (metadata ``climate:server=<server uuid>``) when it moves
  that very server (Climate unshelving it onto the reserved host at the
  lease's start) and the server's project is the aggregate's owner;
* otherwise it never passes on a host inside a reservation aggregate;
* on a freepool host it passes when ``[climate]
  freepool_accepts_unreserved`` is true (the default);
* any other host (not managed by Climate) passes.
"""

from oslo_config import cfg
from oslo_log import log as logging

from nova.scheduler import filters

LOG = logging.getLogger(__name__)

HINT = 'reservation'
#: The flavor extra spec of an instance reservation's private flavor.
FLAVOR_SPEC = 'aggregate_instance_extra_specs:reservation'
RESERVATION_KEY = 'climate:reservation'
OWNER_KEY = 'climate:owner'
FREEPOOL_KEY = 'climate:freepool'
#: The one server a pre-created instance reservation lets onto its host.
SERVER_KEY = 'climate:server'

climate_group = cfg.OptGroup('climate', title="Climate's scheduler filter")

climate_opts = [
    cfg.BoolOpt('freepool_accepts_unreserved', default=True,
                help='Whether servers booted without a "reservation" '
                     'scheduler hint may land on hosts of the freepool '
                     'aggregate (reservable hosts not reserved right now). '
                     "Keep it equal to Climate's [hosts] "
                     'freepool_accepts_unreserved.'),
    cfg.StrOpt('aggregate_freepool_name', default='freepool',
               help="Name of Climate's freepool aggregate (its hosts are "
                    'also recognised by the metadata climate:freepool=true).'),
]


def register_opts(conf):
    # a group of its own per ConfigOpts: oslo.config copies a registered
    # group shallowly, so one shared OptGroup would share its overrides
    group = cfg.OptGroup(climate_group.name, title=climate_group.title)
    conf.register_group(group)
    conf.register_opts(climate_opts, group=group)


# nova.conf.CONF is oslo.config's global CONF: registering here makes the
# [climate] section of nova.conf readable once Nova has parsed its files.
register_opts(cfg.CONF)


def _hint(spec_obj):
    """The ``reservation`` hint as a string, None when absent.

    Nova keeps hints as lists; ``--hint reservation=a --hint reservation=b``
    gives a list of two, which names no single reservation: returned as is,
    it matches no aggregate and the request goes nowhere reserved.
    """
    getter = getattr(spec_obj, 'get_scheduler_hint', None)
    if getter is not None:
        value = getter(HINT)
    else:
        hints = getattr(spec_obj, 'scheduler_hints', None) or {}
        value = hints.get(HINT)
        if isinstance(value, list) and len(value) == 1:
            value = value[0]
    if value in (None, '', []):
        return None
    return value


def _flavor_reservation(spec_obj):
    """The reservation the request's flavor is pinned to, None if none."""
    flavor = getattr(spec_obj, 'flavor', None)
    try:
        specs = getattr(flavor, 'extra_specs', None) or {}
    except NotImplementedError:
        # a Nova object whose field was never loaded
        specs = {}
    value = specs.get(FLAVOR_SPEC)
    return value if value not in (None, '') else None


_CONFLICT = object()


def _requested(spec_obj):
    """The reservation a request names (hint or flavor), None when it
    names none, ``_CONFLICT`` when the two name different ones."""
    hint = _hint(spec_obj)
    flavored = _flavor_reservation(spec_obj)
    if hint is None:
        return flavored
    if flavored is not None and flavored != hint:
        return _CONFLICT
    return hint


class ClimateFilter(filters.BaseHostFilter):
    """Reserved hosts take only their reservations' servers (see module)."""

    # aggregates, project and hints are the same for every instance of one
    # request
    run_filter_once_per_request = True
    # a rebuild stays on its host: it was placed by these rules already
    RUN_ON_REBUILD = False

    def __init__(self, conf=None):
        super().__init__()
        self.conf = conf if conf is not None else cfg.CONF

    def _is_freepool(self, aggregate):
        metadata = aggregate.metadata or {}
        return (str(metadata.get(FREEPOOL_KEY, '')).lower() == 'true'
                or aggregate.name == self.conf.climate.aggregate_freepool_name)

    def host_passes(self, host_state, spec_obj):
        wanted = _requested(spec_obj)
        aggregates = list(getattr(host_state, 'aggregates', None) or [])
        reserved = [a for a in aggregates
                    if RESERVATION_KEY in (a.metadata or {})]

        if wanted is _CONFLICT:
            LOG.debug('the hint and the flavor name different reservations: '
                      '%s refused', host_state)
            return False
        if wanted is not None:
            for aggregate in reserved:
                if (aggregate.metadata[RESERVATION_KEY] == wanted
                        and aggregate.metadata.get(OWNER_KEY)
                        == spec_obj.project_id):
                    return True
            LOG.debug('%s is not a host of reservation %s for project %s',
                      host_state, wanted, spec_obj.project_id)
            return False

        instance = getattr(spec_obj, 'instance_uuid', None)
        for aggregate in reserved:
            metadata = aggregate.metadata
            if (instance and metadata.get(SERVER_KEY) == instance
                    and metadata.get(OWNER_KEY) == spec_obj.project_id):
                return True
        if reserved:
            LOG.debug('%s is reserved (%s): no server without its hint',
                      host_state, ', '.join(sorted(
                          a.metadata[RESERVATION_KEY] for a in reserved)))
            return False
        if any(self._is_freepool(a) for a in aggregates):
            return self.conf.climate.freepool_accepts_unreserved
        return True
