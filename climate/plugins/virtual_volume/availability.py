"""When does a volume reservation fit (microversion 1.6)?

``POST /v1/volumes/availability`` asks with a ``virtual:volume``
reservation's fields (``size_gb``, the gigabytes in all; ``count``, the
most volumes, optional; ``volume_type``; ``resource_properties``) and
either a ``duration`` (with optional ``earliest_start`` and
``latest_end``) or a fixed window (``start_date`` and ``end_date``):
``climate.plugins.availability``.  The answer is the earliest windows in
which the reservation fits on one matching pool, one after the other,
each with ``gb_free``, the most gigabytes free on one matching pool over
it; with a fixed window, also ``gb_free`` over that window and whether
the reservation fits.  Counts and times only: never a pool, a lease or a
project, so any project may ask.

The search is the booking's own arithmetic: the reservation is one unit
of ``plugin.shape_of`` on the pools ``plugin.matching`` finds, placed
with affinity (all on one pool); an ``Outlook`` of
``climate.db.ledger.availability`` over those pools finds the windows and
its ``free_capacity`` the gigabytes free over each.
"""

from climate import dates
from climate.db import api as db_api
from climate.db.ledger import availability as ledger_availability
from climate.db.ledger import inventory
from climate.plugins import availability
from climate.plugins.virtual_volume import plugin as volume_plugin

#: The reservation's fields a search takes.
REQUEST_FIELDS = ('size_gb', 'count', 'volume_type', 'resource_properties')


def search(plugin, ctx, query):
    """The availability answer (see the module's docstring)."""
    query = availability.parse(query, REQUEST_FIELDS, plugin.validate)
    params = query.request
    shape = volume_plugin.shape_of(params)
    pools = plugin.matching_pools(ctx, params)
    providers = [provider for provider, _usable in pools]
    most_free = plugin.most_free
    answer = {
        'size_gb': params['size_gb'], 'count': params['count'],
        'volume_type': params['volume_type'],
        'matching_pools': len(providers),
    }
    times, until = availability.frame(query)
    answer.update(times)
    with db_api.reader(ctx) as session:
        outlook = ledger_availability.Outlook(session, shape, providers,
                                              inventory.VOLUME_POOL)
        if query.fixed:
            end = query.earliest + query.duration
            answer['requested'] = {
                'start': dates.format(query.earliest),
                'end': dates.format(end),
                'gb_free': most_free(session, pools, query.earliest, end),
                'fits': outlook.units(query.earliest, end, True) >= 1}
        answer['windows'] = [
            {'start': dates.format(start), 'end': dates.format(end),
             'gb_free': most_free(session, pools, start, end)}
            for start, end, _units in availability.windows(
                outlook, 1, query, until, True)]
    return answer
