"""The host inventory and availability behind ``/v1/os-hosts``.

Called by the manager's RPC endpoint (``climate.manager.hosts``); bodies
and answers are Blazar's:

* a host is shown with its facts and its extra capabilities flattened as
  top-level keys (``{"id": "1", "hypervisor_hostname": ..., "gpu":
  "True"}``);
* create takes ``name`` (the hypervisor name) and extra capabilities as
  top-level keys; with the ``static`` backend the fact keys
  (:data:`STATIC_FACTS`) set the host's facts instead, and the
  allocation ratios (:data:`RATIOS`, Climate's own) its overcommit in
  the capacity ledger;
* update takes extra capabilities, top-level or under ``values``; a null
  value removes one.

Mistakes are refused as Blazar refuses them, with Blazar's sentence first
(``doc/source/blazar-compatibility-hosts.rst`` lists each one).
"""

import datetime
import math

from climate import dates
from climate.db import api as db_api
from climate.db import hosts as db_hosts
from climate import exceptions
from climate.plugins import capabilities as extra_caps
from climate.plugins import common
from climate.plugins import host_filters
from climate.plugins.physical_host.backends import base as backend_base
from climate.plugins.physical_host import plugin as host_plugin
from climate.scheduling import filters as sched_filters
from climate.scheduling import hosts as sched

#: Facts the operator gives with the static backend (Nova reports them).
STATIC_FACTS = ('service_name', 'vcpus', 'memory_mb', 'local_gb',
                'cpu_info', 'hypervisor_type', 'hypervisor_version')
#: Overcommit a static host's registration may state, Climate's own keys
#: (Nova's names; the nova inventory reads them from Placement).
RATIOS = db_hosts.RATIOS
#: The largest allocation ratio taken.
MAX_RATIO = 1e6
#: The largest value of each whole-number fact (its column's range).
_INT_FACTS = {'vcpus': 2 ** 31 - 1, 'memory_mb': 2 ** 31 - 1,
              'local_gb': 2 ** 31 - 1, 'hypervisor_version': 2 ** 53}
#: Keys a host view shows itself: never extra capabilities (Blazar
#: would store one and show it in place of the host's own field).
RESERVED_KEYS = ('id', 'name', 'hypervisor_hostname', 'trust_id',
                 'reservable', 'disabled', 'created_at', 'updated_at',
                 'values', 'status', 'availability_zone') + STATIC_FACTS + \
    RATIOS
#: Keys of the facts Nova reports: a create with the ``nova`` backend
#: ignores them, as Blazar does (the facts come from Nova).
NOVA_FACT_KEYS = STATIC_FACTS + ('hypervisor_hostname', 'availability_zone') \
    + RATIOS
#: Longest extra capability name a create takes (Blazar's limit).
MAX_NEW_KEY = 64
MAX_WINDOWS = 20
MAX_TIMELINE = datetime.timedelta(days=366)


def host_view(row, capabilities):
    """A host as Blazar shows it: every field of Blazar's host, plus
    Climate's ``disabled``, with the extra capabilities as top-level keys.

    ``status`` is always null (Blazar's api-ref: "This is null
    currently") and ``availability_zone`` is empty, what Blazar stores
    when it does not track zones: Climate does not place hosts by zone.
    Blazar's columns are never null: a fact the backend did not report
    shows as Blazar's type's empty value (``""``, ``0``), and so does the
    trust Climate does not hold (it manages hosts with its own service
    credentials).
    """
    body = dict(capabilities)
    body.update({
        'id': str(row.id),
        'status': None,
        'availability_zone': '',
        'hypervisor_hostname': row.hypervisor_hostname,
        'service_name': row.service_name,
        'vcpus': row.vcpus or 0,
        'memory_mb': row.memory_mb or 0,
        'local_gb': row.local_gb or 0,
        'cpu_info': row.cpu_info or '',
        'hypervisor_type': row.hypervisor_type or '',
        'hypervisor_version': row.hypervisor_version or 0,
        'trust_id': row.trust_id or '',
        'reservable': row.reservable,
        'disabled': row.disabled,
        # Blazar's host_get and host_list return their models' to_dict(),
        # which prints these two as '2017-12-27 10:00:00' (a property's,
        # sent through RPC as a model, keeps the microseconds)
        'created_at': dates.format_timestamp(row.created_at),
        'updated_at': dates.format_timestamp(row.updated_at),
    })
    # Climate's own, after Blazar's fields: a static registration's
    # overcommit (null: 1.0, or Placement's with the nova inventory)
    for key in RATIOS:
        body[key] = getattr(row, key)
    return body


def _static_facts(body):
    facts = {}
    for key in STATIC_FACTS:
        if key not in body:
            continue
        value = body.pop(key)
        if key in _INT_FACTS:
            text = str(value).strip() if isinstance(value, (int, str)) \
                and not isinstance(value, bool) else ''
            if not text.isascii() or not text.isdigit() or len(text) > 20:
                raise exceptions.InvalidInput(
                    reason='%s must be a whole number, not %r' % (key, value))
            value = int(text)
            if value > _INT_FACTS[key]:
                raise exceptions.InvalidInput(
                    reason='%s is too large (at most %d)' % (
                        key, _INT_FACTS[key]))
        elif value is not None:
            common.check_text(value, key)
            if not isinstance(value, str) or len(value) > extra_caps.MAX_VALUE:
                raise exceptions.InvalidInput(
                    reason='%s must be a string of at most %d characters' % (
                        key, extra_caps.MAX_VALUE))
        facts[key] = value
    return facts


def _ratios(body, allow_null=False):
    """The allocation ratios of a static registration, popped from
    ``body``: positive numbers (or their text; with ``allow_null``, an
    update's null: back to not stated, 1.0), else InvalidInput naming the
    field."""
    found = {}
    for key in RATIOS:
        if key not in body:
            continue
        value = body.pop(key)
        if value is None and allow_null:
            found[key] = None
            continue
        number = None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value) if abs(value) < 2 ** 1000 else None
        elif isinstance(value, str) and len(value) < 64:
            number = sched_filters.as_number(value.strip())
        if number is None or not math.isfinite(number) or \
                not 0 < number <= MAX_RATIO:
            raise exceptions.InvalidInput(
                reason='%s must be a positive number (at most %g), not %r' %
                (key, MAX_RATIO, value))
        found[key] = number
    return found


def _ratio_text(value):
    return 'null (1.0)' if value is None else '%g' % value


#: The one entry of :meth:`Inventory.pool_summary`.
POOL_SUMMARY = {'id': 'reservable-hosts',
                'hypervisor_hostname': 'reservable-hosts',
                'reservable': True,
                'description': 'This cloud has reservable hosts; their list '
                               'is shown to administrators only.'}


class Inventory:
    """Domain operations on hosts; ``plugin`` is the loaded
    :class:`~climate.plugins.physical_host.plugin.PhysicalHostPlugin`."""

    def __init__(self, plugin):
        self.plugin = plugin

    @property
    def backend(self):
        return self.plugin.backend

    # -- hosts ----------------------------------------------------------------

    def list(self, ctx):
        """Every host, capabilities flattened."""
        return [host_view(h, caps) for h, caps in db_hosts.host_list(ctx)]

    @staticmethod
    def pool_summary(ctx):
        """The host list as a caller who may not see the inventory gets
        it: one entry standing for the pool of reservable hosts when it
        has any, else none.  Heat's ``OS::Blazar::Lease`` validates a
        lease by asking that the host list be non-empty, with the user's
        token: this lets a project user's template through without
        naming, counting or describing a single host."""
        if not db_hosts.any_reservable(ctx):
            return []
        return [dict(POOL_SUMMARY)]

    def get(self, ctx, host_id):
        return host_view(*db_hosts.host_get(ctx, host_id))

    @db_api.retry_on_deadlock
    def create(self, ctx, body):
        """Add a host the cloud knows and that runs no server.

        The host is named by ``name`` (or, as in Blazar, ``id``); with the
        ``nova`` backend, keys that are facts Nova reports are ignored, as
        Blazar ignores them; ``trust_id`` is ignored (Blazar replaces it
        with its own trust).

        :raises InvalidHost: no ``name`` (403, Blazar's status).
        :raises HostNotInCloud: unknown to the backend (404).
        :raises MultipleHostsFound: the name matches several (409).
        :raises HostHasServers: servers run on it (409).
        :raises ExtraCapabilityTooLong: a name over 64 characters (400).
        :raises HostAlreadyExists: already in the inventory (409).
        """
        body = dict(body)
        ref_id = body.pop('id', None)
        name = body.pop('name', None)
        body.pop('trust_id', None)
        ref = ref_id or name
        if ref is None:
            raise exceptions.InvalidHost(host=_python_repr(body))
        common.check_text(ref, 'name')
        if not isinstance(ref, str) or len(ref) > extra_caps.MAX_KEY:
            raise exceptions.InvalidInput(
                reason='name (the hypervisor host name) must be a string of '
                       'at most %d characters' % extra_caps.MAX_KEY)
        name = ref.strip()
        if not name:
            raise exceptions.HostNameEmpty(host=ref)
        if self.backend.name == 'static':
            given = _static_facts(body)
            given.update(_ratios(body))
        else:
            given = {}
            for key in NOVA_FACT_KEYS:
                body.pop(key, None)
        # Blazar's order: the cloud's answers, then the capability names
        facts = dict(self.backend.describe_host(name))
        facts.update(given)
        self._refuse_servers(facts)
        for key in body:
            if isinstance(key, str) and len(key) > MAX_NEW_KEY:
                raise exceptions.ExtraCapabilityTooLong(max=MAX_NEW_KEY,
                                                        key=key)
        capabilities = extra_caps.stored(body, allow_null=False,
                                         owner='host', reserved=RESERVED_KEYS)
        with db_api.writer(ctx):
            host_id = db_hosts.host_create(ctx, facts, capabilities)
            # its capacity in the ledger, in the same transaction: a host
            # is never reservable without it
            db_hosts.host_set_capacity(
                ctx, host_id, self.backend.capacity(dict(facts, id=host_id)))
            # last: a failed enroll rolls the row back, and a retried
            # create finds the host enrolled already (idempotent)
            self.backend.enroll(dict(facts, id=host_id))
        return self.get(ctx, host_id)

    def _refuse_servers(self, facts):
        servers = self.backend.host_servers(facts)
        if servers:
            raise exceptions.HostHasServers(
                servers=_python_repr(servers),
                host=facts.get('service_name') or
                facts['hypervisor_hostname'])

    def update(self, ctx, host_id, body):
        """Set or (with null) remove extra capabilities; with the
        ``static`` backend, also set (null: unset, 1.0) the allocation
        ratios, rewriting the host's ledger inventory in the same
        transaction.

        :raises HostNotFound: no host has this id (404).
        :raises NoDataToUpdate: an empty body (400).
        :raises CantAddExtraCapability: a capability that a reservation
            holding the host selects by would change (409).
        :raises Conflict: a lower ratio would leave bookings not yet over
            beyond the host's capacity (409).
        """
        host = db_hosts.host_row(ctx, host_id)
        values = body.get('values') if set(body) == {'values'} else body
        if not isinstance(values, dict):
            raise exceptions.InvalidInput(reason='values must be an object')
        if not values:
            raise exceptions.NoDataToUpdate()
        # the nova inventory reads its ratios from Placement
        facts = STATIC_FACTS + (RATIOS if self.backend.name != 'static'
                                else ())
        for key in values:
            if key in facts or key in ('name', 'hypervisor_hostname'):
                raise exceptions.InvalidInput(
                    reason='%s is a fact of the host; it cannot be changed' %
                    key)
        values = dict(values)
        ratios = _ratios(values, allow_null=True)
        capabilities = extra_caps.stored(values, allow_null=True,
                                         owner='host', reserved=RESERVED_KEYS)
        with db_api.writer(ctx):
            # locked first: a lease allocating the host meanwhile waits
            db_hosts.host_row(ctx, host.id, for_update=True)
            self._refuse_held_capabilities(ctx, host, capabilities)
            if capabilities:
                db_hosts.host_update_capabilities(ctx, host.id, capabilities)
            if ratios:
                self._set_ratios(ctx, host, ratios)
        return self.get(ctx, host.id)

    def _set_ratios(self, ctx, host, ratios):
        """Store ``ratios`` and rewrite the host's ledger inventory from
        them (``climate.db.ledger.inventory.set_inventory``, in the caller's
        transaction): refused, nothing changed, when the bookings not yet
        over on the host would no longer fit."""
        row = db_hosts.host_set_ratios(ctx, host.id, ratios)
        facts = host_filters.host_facts(row)
        try:
            db_hosts.host_set_capacity(ctx, host.id,
                                       self.backend.capacity(facts))
        except exceptions.Conflict as exc:
            cls = exc.kwargs.get('resource_class')
            keys = [key for c, _fact, key in backend_base.CAPACITY_FACTS
                    if c == cls and key in ratios] or sorted(ratios)
            raise exceptions.Conflict(
                reason='host %s (%s) cannot take %s: %s. Reservations not '
                       'yet over count on the capacity it has; lower the '
                       'ratio once they are over.' % (
                           host.hypervisor_hostname, host.id,
                           ', '.join('%s %s' % (k, _ratio_text(ratios[k]))
                                     for k in keys),
                           exc.kwargs.get('reason', exc.message)),
                provider=exc.kwargs.get('provider'), resource_class=cls,
                at=exc.kwargs.get('at'))

    @staticmethod
    def _refuse_held_capabilities(ctx, host, capabilities):
        """Blazar's rule: an extra capability that the resource_properties
        of a reservation holding the host (now or later) names cannot
        change while it holds it, else the host would stop matching."""
        current = db_hosts.host_get(ctx, host.id)[1]
        changing = {k for k, v in capabilities.items()
                    if k in current and current[k] != v}
        if not changing:
            return
        used = set()
        for _alloc, reservation, _lease in db_hosts.allocations_on_hosts(
                ctx, [host.id], dates.utcnow()):
            params = reservation.params or {}
            tree = host_filters.parse_filters(params)[1]
            used |= sched_filters.names_in(tree)
        held = sorted(changing & used)
        if held:
            raise exceptions.CantAddExtraCapability(
                keys=_python_repr(held), host=host.id,
                reason='Reservations holding the host select hosts by '
                       '%s; change it once they are over.' % ', '.join(held))

    @db_api.retry_on_deadlock
    def delete(self, ctx, host_id):
        """Remove a host no reservation holds (else HostAllocated, 409) and
        that runs no server (else HostHasServers, 409), with its ledger
        inventory (``climate.db.hosts.host_delete``)."""
        with db_api.writer(ctx):
            row = db_hosts.host_delete(ctx, host_id)
            facts = host_filters.host_facts(row)
            self._refuse_servers(facts)
            self.backend.withdraw(facts)

    # -- allocations ----------------------------------------------------------

    @staticmethod
    def _allocation_view(host_id, rows):
        return {'resource_id': str(host_id), 'reservations': [
            {'id': res_id, 'lease_id': lease_id,
             'start_date': dates.format(start),
             'end_date': dates.format(end)}
            for _h, res_id, lease_id, start, end in rows]}

    def allocations(self, ctx, lease_id=None, reservation_id=None):
        """Every host with the reservations holding it now or later
        (Blazar's shape: a host no reservation holds has an empty list)."""
        common.check_text(lease_id, 'lease_id')
        common.check_text(reservation_id, 'reservation_id')
        by_host = {h.id: [] for h in db_hosts.all_hosts(ctx)}
        for row in db_hosts.allocations_list(
                ctx, lease_id=lease_id, reservation_id=reservation_id,
                time_from=dates.utcnow()):
            by_host.setdefault(row[0], []).append(row)
        return [self._allocation_view(h, rows)
                for h, rows in sorted(by_host.items())]

    def allocation(self, ctx, host_id, lease_id=None, reservation_id=None):
        """The reservations holding one host now or later."""
        common.check_text(lease_id, 'lease_id')
        common.check_text(reservation_id, 'reservation_id')
        host = db_hosts.host_row(ctx, host_id)
        return self._allocation_view(host.id, db_hosts.allocations_list(
            ctx, host_id=host.id, lease_id=lease_id,
            reservation_id=reservation_id, time_from=dates.utcnow()))

    # -- properties -----------------------------------------------------------

    def properties(self, ctx, detail=False, include_private=False):
        """The properties hosts carry now (as Blazar, a property no host
        carries any more is not listed)."""
        out = []
        for prop, values in db_hosts.property_list(ctx, include_private):
            if not values:
                continue
            item = {'property': prop.property_name}
            if detail:
                item.update({'private': prop.private, 'values': values})
            out.append(item)
        return out

    def set_property(self, ctx, name, body):
        """Make a property private or public again.

        :raises HostPropertyNotFound: no such property (404; Blazar: 500).
        """
        if not isinstance(name, str) or not name or \
                not common.storable(name):
            raise exceptions.HostPropertyNotFound(property=name)
        unknown = set(body) - {'private'}
        if unknown or not isinstance(body.get('private'), bool):
            raise exceptions.InvalidInput(
                reason='send {"private": true} or {"private": false}')
        prop = db_hosts.property_set_private(ctx, name, body['private'])
        return {'id': str(prop.id), 'resource_type': prop.resource_type,
                'property_name': prop.property_name,
                'private': prop.private,
                'created_at': dates.format(prop.created_at),
                'updated_at': dates.format(prop.updated_at)}

    # -- availability ---------------------------------------------------------

    @staticmethod
    def _query_filters(query):
        params = {k: query.get(k) or '' for k in ('hypervisor_properties',
                                                  'resource_properties')}
        for key, value in params.items():
            if not isinstance(value, str):
                raise exceptions.InvalidInput(
                    reason='%s must be a JSON filter in a string' % key)
        host_filters.parse_filters(params)
        return params

    def availability(self, ctx, query):
        """The earliest windows where ``count`` matching hosts are free for
        ``duration``, between ``earliest_start`` and ``latest_end``.

        Answers counts and times only, never hosts or leases: any project
        may ask.
        """
        allowed = {'count', 'duration', 'earliest_start', 'latest_end',
                   'hypervisor_properties', 'resource_properties', 'limit'}
        _refuse_unknown(query, allowed)
        now = dates.utcnow()
        count = host_plugin.count_of(query.get('count', 1), 'count')
        if query.get('duration') is None:
            raise exceptions.InvalidInput(reason='duration is required '
                                                 '(e.g. "4h")')
        duration = dates.parse_duration(query['duration'], 'duration')
        if duration <= datetime.timedelta(0):
            raise exceptions.InvalidInput(reason='duration must be positive')
        earliest = max(now, dates.parse(query.get('earliest_start') or 'now',
                                        'earliest_start', now))
        latest = None
        if query.get('latest_end') is not None:
            latest = dates.parse(query['latest_end'], 'latest_end', now)
            if latest < earliest + duration:
                raise exceptions.InvalidInput(
                    reason='latest_end leaves no room for duration after '
                           'earliest_start')
        limit = query.get('limit', 5)
        if isinstance(limit, bool) or not isinstance(limit, int) or \
                not 1 <= limit <= MAX_WINDOWS:
            raise exceptions.InvalidInput(
                reason='limit must be a whole number from 1 to %d' %
                MAX_WINDOWS)
        try:
            earliest + duration
        except OverflowError:
            raise exceptions.InvalidInput(
                reason='duration reaches beyond the calendar')
        matching = self.plugin.matching(ctx, self._query_filters(query))
        windows, searched_until = host_plugin.search_windows(
            ctx, matching, count, duration, earliest, latest, limit)
        return {'count': count,
                'duration': int(duration.total_seconds()),
                'earliest_start': dates.format(earliest),
                'latest_end': dates.format(latest),
                'matching_hosts': len(matching),
                'searched_until': dates.format(searched_until),
                'windows': [{'start': dates.format(w['start']),
                             'end': dates.format(w['end']),
                             'latest_start': dates.format(w['latest_start']),
                             'hosts_free': w['hosts_free']}
                            for w in windows]}

    def timeline(self, ctx, query):
        """Free matching hosts over ``[time_from, time_to)``, as segments
        of constant count."""
        allowed = {'time_from', 'time_to', 'hypervisor_properties',
                   'resource_properties'}
        _refuse_unknown(query, allowed)
        now = dates.utcnow()
        for key in ('time_from', 'time_to'):
            if query.get(key) is None:
                raise exceptions.InvalidInput(reason='%s is required' % key)
        time_from = dates.parse(query['time_from'], 'time_from', now)
        time_to = dates.parse(query['time_to'], 'time_to', now)
        if time_to <= time_from:
            raise exceptions.InvalidInput(
                reason='time_to must be later than time_from')
        if time_to - time_from > MAX_TIMELINE:
            raise exceptions.InvalidInput(
                reason='a timeline covers at most %d days' %
                MAX_TIMELINE.days)
        matching = self.plugin.matching(ctx, self._query_filters(query))
        busy = db_hosts.busy_intervals(ctx, matching, time_from, time_to)
        return {'time_from': dates.format(time_from),
                'time_to': dates.format(time_to),
                'matching_hosts': len(matching),
                'segments': [{'start': dates.format(s['start']),
                              'end': dates.format(s['end']),
                              'free': s['free']}
                             for s in sched.timeline(matching, busy,
                                                     time_from, time_to)]}


def _python_repr(value):
    """``value`` as Blazar's messages print it (Python's repr)."""
    return repr(value)


def _refuse_unknown(query, allowed):
    unknown = set(query) - allowed
    if unknown:
        raise exceptions.InvalidInput(
            reason='unknown field(s) %s; accepted: %s' % (
                ', '.join(sorted(unknown)), ', '.join(sorted(allowed))))
