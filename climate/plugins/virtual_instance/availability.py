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

One ``climate.db.ledger.availability.Outlook`` answers every question of a
request: the hosts' inventories come from a :class:`ProfileCache` (a few rows,
read again only when the host inventory changes), the bookings are read from
the earliest start on, first just the requested window, then as far as the
windows found need (a horizon four times as long each time when the slots do
not fit), and only the hosts holding a booking in what was read are worked out
one by one (``climate.scheduling.capacity.sweep``).
"""

import threading
import weakref

from climate import dates
from climate.db import api as db_api
from climate.db.ledger import availability as ledger_availability
from climate.db.ledger import inventory
from climate.plugins import availability
from climate.plugins import caches
from climate.plugins.virtual_instance import plugin as instance_plugin


class ProfileCache:
    """The compute hosts' ledger inventories
    (``climate.db.ledger.availability.inventory_profiles`` of every compute
    host), per inventory version.

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
        self._cache = caches.InventoryVersionCache(self.SIZE)

    def get(self, ctx, classes):
        key = tuple(sorted(classes))

        def read():
            with db_api.reader(ctx) as session:
                return ledger_availability.inventory_profiles(
                    session, key, inventory.COMPUTE_HOST)

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


def slots_free(session, providers, shape, start, end, affinity):
    """How many slots of ``shape`` fit over ``[start, end)`` on
    ``providers`` under ``affinity`` (a ledger ``Outlook`` of its own: a
    few statements)."""
    return ledger_availability.Outlook(
        session, shape, providers, inventory.COMPUTE_HOST).units(
        start, end, affinity)


def search(plugin, ctx, query):
    """The availability answer (see the module's docstring)."""
    query = availability.parse(query, instance_plugin.REQUEST_FIELDS,
                               plugin.validate, {'amount': 1})
    params = query.request
    shape = instance_plugin.shape_of(params)
    amount, affinity = params['amount'], params['affinity']
    providers = plugin.matching(ctx, params)
    answer = {
        'amount': amount, 'vcpus': params['vcpus'],
        'memory_mb': params['memory_mb'], 'disk_gb': params['disk_gb'],
        'affinity': affinity, 'matching_hosts': len(providers),
    }
    times, until = availability.frame(query)
    answer.update(times)
    profiles = profile_cache(plugin).get(ctx, shape)
    with db_api.reader(ctx) as session:
        # the bookings from the earliest start on, read as far as the
        # windows need, for every question of this request
        outlook = ledger_availability.Outlook(
            session, shape, providers, inventory.COMPUTE_HOST,
            profiles=profiles)
        if query.fixed:
            end = query.earliest + query.duration
            free = outlook.units(query.earliest, end, affinity)
            answer['requested'] = {
                'start': dates.format(query.earliest),
                'end': dates.format(end),
                'slots_free': free, 'fits': free >= amount}
        answer['windows'] = [
            {'start': dates.format(start), 'end': dates.format(end),
             'slots_free': free}
            for start, end, free in availability.windows(
                outlook, amount, query, until, affinity)]
    return answer
