"""When can a project get N instance slots of a shape (microversion 1.3)?

``POST /v1/instances/availability`` asks with a reservation's fields
(``amount``, ``vcpus``/``memory_mb``/``disk_gb`` or ``flavor_id``,
``affinity``, ``resource_properties``) and either a ``duration`` (with
optional ``earliest_start`` and ``latest_end``) or a fixed window
(``start_date`` and ``end_date``).  The answer is the earliest windows
in which all the slots fit, one after the other, each with how many
slots are free over it; with a fixed window, also how many are free over
that window.  Counts and times only: never a host, a lease or a project,
so any project may ask.

One ``climate.db.ledger.Outlook`` answers every question of a request:
the hosts' inventories come from a :class:`ProfileCache` (a few rows, read
again only when the host inventory changes), the bookings are read from
the earliest start on, first just the requested window, then as far as
the windows found need (a horizon four times as long each time when the
slots do not fit), and only the hosts holding a booking in what was read
are worked out one by one (``climate.scheduling.capacity.sweep``).
"""

import datetime
import threading
import weakref

from climate import dates
from climate.db import api as db_api
from climate.db import ledger
from climate import exceptions
from climate.plugins.physical_host import plugin as host_plugin
from climate.plugins.virtual_instance import plugin as instance_plugin

#: Most windows one answer lists.
MAX_WINDOWS = 20
DEFAULT_WINDOWS = 3
_WINDOW_FIELDS = ('duration', 'earliest_start', 'latest_end', 'start_date',
                  'end_date', 'limit')


class ProfileCache:
    """The compute hosts' ledger inventories (``ledger.inventory_profiles``
    of every compute host), per inventory version.

    Reading them costs a grouped statement over every inventory row (tens
    of milliseconds at 10,000 hosts); they change only with the host
    inventory, which bumps ``computehost_inventory_version`` in the same
    transaction (a host enrolled, its ratios changed, or removed), as the
    host filter's cache (``physical_host.plugin.MatchCache``) relies on.
    The version is read before the inventories, so an entry is never older
    than its version; an LRU of :data:`SIZE` shapes' classes.
    """

    SIZE = 16

    def __init__(self):
        self._cache = host_plugin.InventoryVersionCache(self.SIZE)

    def get(self, ctx, classes):
        key = tuple(sorted(classes))

        def read():
            with db_api.reader(ctx) as session:
                return ledger.inventory_profiles(session, key,
                                                 ledger.COMPUTE_HOST)

        return self._cache.get(ctx, key, read)


#: One cache per plugin (as its host filter's cache is): its lifetime and
#: database are the plugin's.
_CACHES = weakref.WeakKeyDictionary()
_CACHES_LOCK = threading.Lock()


def profile_cache(plugin):
    """The :class:`ProfileCache` of ``plugin``."""
    with _CACHES_LOCK:
        cache = _CACHES.get(plugin)
        if cache is None:
            cache = _CACHES[plugin] = ProfileCache()
        return cache


def _refuse_unknown(query):
    allowed = set(instance_plugin.REQUEST_FIELDS) | set(_WINDOW_FIELDS)
    unknown = sorted(str(k) for k in set(query) - allowed)
    if unknown:
        raise exceptions.InvalidInput(
            reason='unknown field(s) %s; accepted: %s' % (
                ', '.join(unknown), ', '.join(sorted(allowed))))


def _later(when, duration, field):
    try:
        end = when + duration
    except OverflowError:
        end = None
    if end is None or end > dates.MAX_DATE:
        raise exceptions.InvalidInput(
            reason='%s reaches beyond the calendar' % field)
    return end


def _window(query, now):
    """``(earliest, duration, latest_end, fixed)`` of the query."""
    fixed = 'start_date' in query or 'end_date' in query
    if fixed:
        for key in ('start_date', 'end_date'):
            if query.get(key) is None:
                raise exceptions.InvalidInput(
                    reason='%s is required with %s' % (
                        key, ({'start_date', 'end_date'} - {key}).pop()))
        for key in ('duration', 'earliest_start', 'latest_end'):
            if key in query:
                raise exceptions.InvalidInput(
                    reason='give either start_date and end_date, or '
                           'duration (with earliest_start, latest_end); '
                           'not %s with them' % key)
        start = dates.parse(query['start_date'], 'start_date', now)
        end = dates.parse(query['end_date'], 'end_date', now)
        if end <= start:
            raise exceptions.InvalidInput(
                reason='end_date must be later than start_date')
        if end <= now:
            raise exceptions.InvalidInput(reason='end_date is in the past')
        start = max(start, now)
        return start, end - start, None, True
    if query.get('duration') is None:
        raise exceptions.InvalidInput(
            reason="duration is required (e.g. '4h'), or start_date and "
                   "end_date")
    duration = dates.parse_duration(query['duration'], 'duration')
    if duration <= datetime.timedelta(0):
        raise exceptions.InvalidInput(reason='duration must be positive')
    earliest = max(now, dates.parse(query.get('earliest_start') or 'now',
                                    'earliest_start', now))
    _later(earliest, duration, 'duration')
    latest = None
    if query.get('latest_end') is not None:
        latest = dates.parse(query['latest_end'], 'latest_end', now)
        if latest < earliest + duration:
            raise exceptions.InvalidInput(
                reason='latest_end leaves no room for duration after '
                       'earliest_start')
    return earliest, duration, latest, False


def _limit(query):
    limit = query.get('limit', DEFAULT_WINDOWS)
    if isinstance(limit, bool) or not isinstance(limit, int) or \
            not 1 <= limit <= MAX_WINDOWS:
        raise exceptions.InvalidInput(
            reason='limit must be a whole number from 1 to %d' % MAX_WINDOWS)
    return limit


def slots_free(session, providers, shape, start, end, affinity):
    """How many slots of ``shape`` fit over ``[start, end)`` on
    ``providers`` under ``affinity`` (a :class:`ledger.Outlook` of its
    own: a few statements)."""
    return ledger.Outlook(session, shape, providers,
                          ledger.COMPUTE_HOST).units(start, end, affinity)


def search(plugin, ctx, query):
    """The availability answer (see the module's docstring)."""
    if not isinstance(query, dict):
        raise exceptions.InvalidInput(reason='the body must be a JSON object')
    _refuse_unknown(query)
    now = dates.utcnow()
    request = {k: query[k] for k in instance_plugin.REQUEST_FIELDS
               if k in query}
    request.setdefault('amount', 1)
    params = plugin.validate(request)
    earliest, duration, latest, fixed = _window(query, now)
    limit = _limit(query)
    shape = instance_plugin.shape_of(params)
    amount, affinity = params['amount'], params['affinity']
    providers = plugin.matching(ctx, params)
    answer = {
        'amount': amount, 'vcpus': params['vcpus'],
        'memory_mb': params['memory_mb'], 'disk_gb': params['disk_gb'],
        'affinity': affinity,
        'duration': int(duration.total_seconds()),
        'earliest_start': dates.format(earliest),
        'latest_end': dates.format(latest),
        'matching_hosts': len(providers),
    }
    # without latest_end the search is bounded (each booking's end is a
    # start to try); the answer says how far it looked
    until = latest
    if until is None:
        until = instance_plugin.horizon_end(earliest, duration)
        answer['searched_until'] = dates.format(until)
    profiles = profile_cache(plugin).get(ctx, shape)
    with db_api.reader(ctx) as session:
        # the bookings from the earliest start on, read as far as the
        # windows need, for every question of this request
        outlook = ledger.Outlook(
            session, shape, providers, ledger.COMPUTE_HOST,
            profiles=profiles)
        if fixed:
            free = outlook.units(earliest, earliest + duration, affinity)
            answer['requested'] = {
                'start': dates.format(earliest),
                'end': dates.format(earliest + duration),
                'slots_free': free, 'fits': free >= amount}
        windows = []
        cursor = earliest
        while outlook.most(affinity) >= amount and len(windows) < limit:
            if cursor > until - duration:
                break
            found = outlook.earliest(amount, duration, cursor, until,
                                     affinity)
            if found is None:
                break
            when, free = found
            try:
                end = _later(when, duration, 'duration')
            except exceptions.InvalidInput:
                break
            windows.append({
                'start': dates.format(when), 'end': dates.format(end),
                'slots_free': free})
            # the next window: the earliest after this one
            cursor = end
    answer['windows'] = windows
    return answer
