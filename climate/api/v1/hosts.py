"""/v1/os-hosts: Blazar's host inventory, plus availability (1.2).

Routes (admin only unless said otherwise; see doc/source/hosts.rst):

* ``GET|POST /v1/os-hosts``, ``GET|PUT|DELETE /v1/os-hosts/{id}``;
* ``GET /v1/os-hosts/allocations`` and ``GET /v1/os-hosts/{id}/allocation``
  (``lease_id`` / ``reservation_id`` filters);
* ``GET /v1/os-hosts/properties`` (``detail``, ``all``) and ``PATCH
  /v1/os-hosts/properties/{name}``;
* microversion 1.12: ``GET /v1/os-hosts/power`` and ``GET
  /v1/os-hosts/{id}/power`` (``start``, ``end``): power states, one host's
  history and the energy saved (doc/source/energy.rst); 1.13 adds each
  host's measured idle draw (``idle_watts``, ``watts_at``) and which
  watts its energy counts (``watts_source``);
* microversion 1.2, any project reader: ``POST /v1/os-hosts/availability``
  and ``POST /v1/os-hosts/timeline`` (a JSON body, since filters are JSON).
"""

import pecan
from pecan import rest

from climate.api import microversion
from climate.api.v1 import inventory
from climate.api.v1 import types
from climate import exceptions
from climate import policy

AVAILABILITY_VERSION = microversion.Version.parse('1.2')
POWER_VERSION = microversion.Version.parse('1.12')
WATTS_VERSION = microversion.Version.parse('1.13')
#: What 1.13 adds to a host's power state, and to its energy figures.
WATTS_FIELDS = ('idle_watts', 'watts_at')
WATTS_ENERGY_FIELDS = ('watts_source',)
_TRUE = ('1', 'true', 'yes', 'on')


_body = types.request_object


def _flag(params, name):
    return str(params.get(name, '')).lower() in _TRUE


def _authorize(rule):
    ctx = pecan.request.context
    policy.authorize(ctx, 'climate:oshosts:%s' % rule)
    return ctx


def _rpc():
    return pecan.request.rpcapi


def _refuse_on_collection(host_id, allowed):
    if host_id is None:
        raise exceptions.MethodNotAllowed(method=pecan.request.method,
                                          allowed=allowed)


class AllocationsController(rest.RestController):
    """``/v1/os-hosts/allocations``."""

    @pecan.expose('json')
    def get_all(self):
        ctx = _authorize('allocation:get_all')
        params = inventory.query(('lease_id', 'reservation_id'))
        return {'allocations': _rpc().host_allocations(ctx, **params)}


class HostAllocationController(rest.RestController):
    """``/v1/os-hosts/{id}/allocation``."""

    @pecan.expose('json')
    def get_all(self, host_id):
        ctx = _authorize('allocation:get')
        params = inventory.query(('lease_id', 'reservation_id'))
        return {'allocation': _rpc().host_allocation(ctx, host_id, **params)}


def _power_shown(view):
    """A host's power view as the request's microversion shows it:
    before 1.13, without the measured watts (the manager answers 1.13's
    view)."""
    if microversion.of(pecan.request) >= WATTS_VERSION:
        return view
    shown = inventory.without(view, WATTS_FIELDS)
    if 'energy' in shown:
        shown['energy'] = inventory.without(shown['energy'], WATTS_ENERGY_FIELDS)
    return shown


class PowerController(rest.RestController):
    """``/v1/os-hosts/power`` and ``/v1/os-hosts/{id}/power``."""

    # ``*ids``: pecan answers 404 to a path missing an argument the
    # method names (``/os-hosts/power`` for ``get_all(host_id)``); the
    # host's id is the parent's routing argument, when there is one
    @pecan.expose('json')
    def get_all(self, *ids):
        microversion.require(pecan.request, POWER_VERSION)
        host_id = ids[0] if ids else None
        if host_id is None:
            ctx = _authorize('power:get_all')
            inventory.query(())
            return {'hosts_power': [_power_shown(view) for view in
                                    _rpc().host_power_list(ctx)]}
        ctx = _authorize('power:get')
        query = inventory.query(('start', 'end'))
        return {'host_power': _power_shown(
            _rpc().host_power_get(ctx, host_id, query))}


class PropertiesController(rest.RestController):
    """``/v1/os-hosts/properties``."""

    @pecan.expose('json')
    def get_all(self):
        ctx = _authorize('properties:get')
        params = inventory.query(('detail', 'all'))
        return {'resource_properties': _rpc().host_properties(
            ctx, detail=_flag(params, 'detail'),
            include_private=_flag(params, 'all'))}

    @pecan.expose('json')
    def patch(self, name=None):
        if name is None:
            # a property is patched by name; the collection only lists
            raise exceptions.MethodNotAllowed(method='PATCH', allowed='GET')
        ctx = _authorize('properties:patch')
        return {'resource_property': _rpc().host_property_update(
            ctx, name, _body())}


class HostsController(rest.RestController):
    """``/v1/os-hosts``."""

    allocations = AllocationsController()
    allocation = HostAllocationController()
    properties = PropertiesController()
    power = PowerController()
    _custom_actions = {'availability': ['POST'], 'timeline': ['POST']}

    @pecan.expose('json')
    def get_all(self):
        ctx = pecan.request.context
        if not policy.check(ctx, 'climate:oshosts:get_all') and \
                policy.check(ctx, 'climate:oshosts:get_all_summary'):
            inventory.query(())
            return {'hosts': _rpc().host_pool_summary(ctx)}
        ctx = _authorize('get_all')
        inventory.query(())
        return {'hosts': _rpc().host_list(ctx)}

    @pecan.expose('json')
    def get_one(self, host_id):
        ctx = _authorize('get')
        return {'host': _rpc().host_get(ctx, host_id)}

    @pecan.expose('json')
    def post(self):
        ctx = _authorize('post')
        host = _rpc().host_create(ctx, _body())
        pecan.response.status = 201
        return {'host': host}

    @pecan.expose('json')
    def put(self, host_id=None):
        _refuse_on_collection(host_id, 'GET, POST')
        ctx = _authorize('put')
        return {'host': _rpc().host_update(ctx, host_id, _body())}

    @pecan.expose(content_type='application/json')
    def delete(self, host_id=None):
        _refuse_on_collection(host_id, 'GET, POST')
        ctx = _authorize('delete')
        _rpc().host_delete(ctx, host_id)
        pecan.response.status = 204
        return ''

    @pecan.expose('json')
    def availability(self):
        microversion.require(pecan.request, AVAILABILITY_VERSION)
        ctx = _authorize('availability')
        return {'availability': _rpc().host_availability(ctx, _body())}

    @pecan.expose('json')
    def timeline(self):
        microversion.require(pecan.request, AVAILABILITY_VERSION)
        ctx = _authorize('timeline')
        return {'timeline': _rpc().host_timeline(ctx, _body())}
