"""Hosts as the plugins that place on them see them: a reservation's two
host filters, a host's facts, and which hosts a filter matches."""

import json

from climate.db import hosts as db_hosts
from climate import exceptions
from climate.plugins import caches
from climate.plugins import common
from climate.scheduling import filters

#: Filters whose matching hosts a manager keeps (MatchCache).
MATCH_CACHE_SIZE = 256


def _unstorable_in(value):
    """True when some text inside the JSON ``value`` is not storable, or
    some number is beyond a float's range."""
    if not common.finite(value):
        return True
    if isinstance(value, str):
        return not common.storable(value)
    if isinstance(value, list):
        return any(_unstorable_in(v) for v in value)
    if isinstance(value, dict):
        return any(_unstorable_in(k) or _unstorable_in(v)
                   for k, v in value.items())
    return False


def parse_filters(params):
    """The two filter trees of a reservation's (validated) parameters.

    :raises InvalidInput: a filter is malformed, or holds text that SQL
        cannot compare (a NUL character, an unpaired surrogate).
    """
    for key in ('hypervisor_properties', 'resource_properties'):
        value = params.get(key)
        try:
            if isinstance(value, str):
                try:
                    value = json.loads(value)
                except ValueError:
                    continue  # filters.parse says where
            unstorable = _unstorable_in(value)
        except RecursionError:
            raise exceptions.InvalidInput(
                reason='%s is nested too deeply' % key)
        if unstorable:
            raise exceptions.InvalidInput(
                reason='%s holds a NUL character, an unpaired surrogate or '
                       'a number too large' % key)
    return (filters.parse(params.get('hypervisor_properties'),
                          'hypervisor_properties', db_hosts.FACTS),
            filters.parse(params.get('resource_properties'),
                          'resource_properties'))


def host_facts(row):
    """A host row as the backends see it."""
    return {'id': row.id, 'hypervisor_hostname': row.hypervisor_hostname,
            'service_name': row.service_name, 'vcpus': row.vcpus,
            'memory_mb': row.memory_mb, 'local_gb': row.local_gb,
            'cpu_info': row.cpu_info, 'hypervisor_type': row.hypervisor_type,
            'hypervisor_version': row.hypervisor_version,
            'cpu_allocation_ratio': row.cpu_allocation_ratio,
            'ram_allocation_ratio': row.ram_allocation_ratio,
            'disk_allocation_ratio': row.disk_allocation_ratio}


class MatchCache:
    """Which hosts a filter matches, per inventory version.

    Matching a filter against the capability table costs a few
    milliseconds per thousand hosts; the answer changes only when the
    inventory does (a host added, removed, re-tagged, down or up), which
    bumps ``computehost_inventory_version`` in the same transaction.  A
    lookup reads that counter (a primary-key read) and reuses the ids
    found at the same version, in this manager process; an LRU of
    :data:`MATCH_CACHE_SIZE` filters.  The read is in the caller's
    transaction, so the ids agree with what it sees of the inventory.
    """

    def __init__(self, size=None):
        self._cache = caches.InventoryVersionCache(size or MATCH_CACHE_SIZE)

    def get(self, ctx, params):
        key = (params.get('hypervisor_properties') or '',
               params.get('resource_properties') or '')
        return self._cache.get(ctx, key, lambda: tuple(
            db_hosts.matching_host_ids(ctx, db_hosts.host_filter(
                ctx, *parse_filters(params)))))
