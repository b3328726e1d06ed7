"""/v1/leases: parse, authorize, call the manager, answer."""

import json
import urllib.parse

import pecan
from pecan import rest

from climate.api import microversion
from climate.api.v1 import types
from climate import dates
from climate import exceptions
from climate.lease import holds
from climate.lease import idle
from climate.lease import types as lease_types
from climate.lease import views
from climate import policy
from climate import states

PAGINATION_VERSION = microversion.Version.parse('1.1')
#: Pre-created instance reservations (``server_id``, ``server``,
#: ``on_end``).
PRECREATED_VERSION = microversion.Version.parse('1.4')
PRECREATED_FIELDS = ('server_id', 'server', 'on_end')
#: Lease types (``lease_type``, ``max_retries``) and their states.
LEASE_TYPES_VERSION = microversion.Version.parse('1.11')
#: Temporary holds (``hold_for``, ``/confirm``) and their states.
HOLDS_VERSION = microversion.Version.parse('1.14')
#: Idle reclaim: a lease that asks never to be reclaimed (``keep_idle``).
IDLE_VERSION = microversion.Version.parse('1.17')
#: Resource types newer than those fields, which take them at any version.
NEWER_TYPES = ('virtual:volume', 'virtual:stack')
LIST_PARAMS = frozenset(['limit', 'marker', 'sort_key', 'sort_dir', 'status',
                         'name', 'project_id', 'time_from', 'time_to'])
SORT_KEYS = ('created_at', 'name', 'start_date', 'end_date', 'status', 'id')


def _int_param(name, value, maximum):
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = 0
    if number < 1:
        raise exceptions.InvalidInput(
            reason='%s must be a positive integer, not %r' % (name, value))
    return min(number, maximum)


def _list_query(request, ctx):
    """Translate 1.1 query parameters into the manager's list arguments."""
    params = request.GET
    unknown = set(params) - LIST_PARAMS
    if unknown:
        raise exceptions.InvalidInput(
            reason='unknown query parameter(s) %s; accepted: %s' % (
                ', '.join(sorted(unknown)), ', '.join(sorted(LIST_PARAMS))))
    conf = pecan.request.conf
    query = {'limit': _int_param('limit', params['limit'],
                                 conf.api.max_limit)
             if 'limit' in params else conf.api.default_limit,
             'marker': params.get('marker'),
             'sort_key': params.get('sort_key', 'created_at'),
             'sort_dir': params.get('sort_dir', 'asc')}
    if query['sort_key'] not in SORT_KEYS:
        raise exceptions.InvalidInput(
            reason='sort_key must be one of %s' % ', '.join(SORT_KEYS))
    if query['sort_dir'] not in ('asc', 'desc'):
        raise exceptions.InvalidInput(reason="sort_dir must be asc or desc")
    filters = {}
    if params.getall('status'):
        filters['status'] = [s.upper() for v in params.getall('status')
                             for s in v.split(',') if s]
        unknown = sorted(set(filters['status']) - set(states.LEASE))
        if unknown:
            # (an empty list would say no lease has it: a typo passed
            # for an answer)
            raise exceptions.InvalidInput(
                reason='status %s is not a lease status; one of %s' % (
                    ', '.join(unknown), ', '.join(sorted(states.LEASE))))
    if 'name' in params:
        filters['name'] = params['name']
    for key in ('time_from', 'time_to'):
        if key in params:
            filters[key] = dates.format(dates.parse(params[key], key))
    query['filters'] = filters
    if 'project_id' in params:
        policy.authorize(ctx, 'climate:leases:list:all_projects')
        query['project_id'] = params['project_id']
    return query


def _next_link(request, page, limit):
    if page['count'] < limit:
        return []
    params = [(k, v) for k, v in request.GET.items() if k != 'marker']
    params.append(('marker', page['last_id']))
    return [{'rel': 'next',
             'href': '%s?%s' % (request.path_url,
                                urllib.parse.urlencode(params))}]


def _page_body(page, links=()):
    # the manager's page is JSON text already (climate.db.lease_json):
    # decoding it here only to encode it again would double the API's cost
    body = '{"leases": %s' % _shown_page(views.page_leases(page))
    if links:
        body += ', "leases_links": %s' % json.dumps(links)
    return body + '}'


def _refuse_newer_fields(body, types_of=None):
    """A reservation field of a later microversion is refused as an
    unknown one would be, with the version that has it.

    :param types_of: for an update, whose changes carry reservation ids
        and seldom a type: a callable answering ``{id: resource_type}`` of
        the lease's reservations, called only when a field is in doubt.
    """
    if microversion.of(pecan.request) >= PRECREATED_VERSION:
        return
    known = None
    for res in body.get('reservations') or []:
        if not isinstance(res, dict) or \
                not any(field in res for field in PRECREATED_FIELDS):
            continue
        rtype = res.get('resource_type')
        if rtype is None and types_of is not None:
            known = types_of() if known is None else known
            rtype = known.get(res.get('id'))
        if rtype in NEWER_TYPES:
            continue  # a new type: its fields (on_end) at any version
        field = next(f for f in PRECREATED_FIELDS if f in res)
        raise needs(field, PRECREATED_VERSION)


def needs(field, version):
    """The 400 of a field newer than the request's microversion."""
    return exceptions.InvalidInput(
        reason='%s needs microversion %s or later (send '
               '"OpenStack-API-Version: %s %s")' % (
                   field, version, microversion.SERVICE_TYPE, version))


def _typed():
    """Whether the request's microversion knows lease types."""
    return microversion.of(pecan.request) >= LEASE_TYPES_VERSION


def _refuse_lease_type(body):
    if not _typed():
        for field in lease_types.FIELDS:
            if field in body:
                raise needs(field, LEASE_TYPES_VERSION)
    if holds.FIELD in body and not _holds():
        raise needs(holds.FIELD, HOLDS_VERSION)
    if idle.FIELD in body and \
            microversion.of(pecan.request) < IDLE_VERSION:
        raise needs(idle.FIELD, IDLE_VERSION)


def _holds():
    """Whether the request's microversion knows temporary holds."""
    return microversion.of(pecan.request) >= HOLDS_VERSION


def _equivalents():
    """The states the request's microversion does not know, each with
    the one it is shown as (empty: every state is shown as it is)."""
    if not _typed():
        return states.BLAZAR_EQUIVALENT
    if not _holds():
        return states.HOLD_EQUIVALENT
    return {}


def _shown(lease, equivalents=None):
    """A lease as the request's microversion shows it: before 1.11, the
    lease types' own states as Blazar's (``states.BLAZAR_EQUIVALENT``);
    before 1.14, the holds' ones as PENDING and TERMINATED."""
    equivalents = _equivalents() if equivalents is None else equivalents
    if lease['status'] not in equivalents:
        return lease
    return dict(lease, status=equivalents[lease['status']])


def _shown_page(text):
    """A page's JSON text as :func:`_shown` would show its leases; a
    page without any state to translate is passed on untouched."""
    equivalents = _equivalents()
    if not any('"%s"' % state in text for state in equivalents):
        return text
    return json.dumps([_shown(lease, equivalents)
                       for lease in json.loads(text)])


def _refuse_on_collection(lease_id):
    if lease_id is None:
        raise exceptions.MethodNotAllowed(method=pecan.request.method,
                                          allowed='GET, POST')


class ConfirmController(rest.RestController):
    """``POST /v1/leases/{id}/confirm`` (1.14): a temporary hold becomes
    its lease."""

    # the lease's id is the parent's routing argument (pecan answers 404
    # to /v1/leases/confirm, which has none)
    @pecan.expose('json')
    def post(self, lease_id):
        microversion.require(pecan.request, HOLDS_VERSION)
        ctx = pecan.request.context
        policy.authorize(ctx, 'climate:leases:confirm')
        return {'lease': pecan.request.rpcapi.confirm_lease(ctx, lease_id)}


class LeasesController(rest.RestController):

    confirm = ConfirmController()

    @pecan.expose(content_type='application/json')
    def get_all(self):
        request = pecan.request
        ctx = request.context
        policy.authorize(ctx, 'climate:leases:list')
        if microversion.of(request) < PAGINATION_VERSION:
            # 1.0: Blazar's behaviour, the whole list, no parameters
            return _page_body(request.rpcapi.list_leases(ctx))
        query = _list_query(request, ctx)
        page = request.rpcapi.list_leases(ctx, **query)
        return _page_body(page, _next_link(request, page, query['limit']))

    @pecan.expose('json')
    def get_one(self, lease_id):
        ctx = pecan.request.context
        policy.authorize(ctx, 'climate:leases:get')
        return {'lease': _shown(pecan.request.rpcapi.get_lease(ctx,
                                                               lease_id))}

    @pecan.expose('json')
    def post(self):
        ctx = pecan.request.context
        policy.authorize(ctx, 'climate:leases:create')
        body = types.parse(pecan.request, types.LeaseCreate)
        _refuse_newer_fields(body)
        _refuse_lease_type(body)
        # at every microversion: a retried create with the same key returns
        # the first lease (climate.manager.idempotency)
        lease = pecan.request.rpcapi.create_lease(
            ctx, body, pecan.request.headers.get('Idempotency-Key'))
        pecan.response.status = 201
        return {'lease': _shown(lease)}

    @pecan.expose('json')
    def put(self, lease_id=None):
        _refuse_on_collection(lease_id)
        ctx = pecan.request.context
        policy.authorize(ctx, 'climate:leases:update')
        body = types.parse(pecan.request, types.LeaseUpdate)
        _refuse_newer_fields(body, lambda: {
            res['id']: res['resource_type'] for res in
            pecan.request.rpcapi.get_lease(ctx, lease_id)['reservations']})
        return {'lease': _shown(pecan.request.rpcapi.update_lease(
            ctx, lease_id, body))}

    # no template: a 204 has no body, but the JSON content type lets clients
    # that send "Accept: application/json" (python-blazarclient) through
    @pecan.expose(content_type='application/json')
    def delete(self, lease_id=None):
        _refuse_on_collection(lease_id)
        ctx = pecan.request.context
        policy.authorize(ctx, 'climate:leases:delete')
        pecan.request.rpcapi.delete_lease(ctx, lease_id)
        pecan.response.status = 204
        return ''
