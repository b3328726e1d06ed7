"""/v1/webhooks (microversion 1.7): the webhooks a project registers for
its leases' notices (see doc/source/webhooks.rst).

* ``GET|POST /v1/webhooks``, ``GET|DELETE /v1/webhooks/{id}``;
* ``GET /v1/webhooks/{id}/deliveries``: the webhook's delivery log.

The secret is write-only: no answer ever shows it.  Validation, scoping
and the delivery itself are the manager's (``climate.manager.webhooks``).
"""

import pecan
from pecan import rest

from climate.api import microversion
from climate.api.v1 import inventory
from climate.api.v1 import types
from climate import exceptions
from climate import policy

VERSION = microversion.Version.parse('1.7')
_rpc = inventory.rpc


def _authorize(rule):
    return inventory.authorize('climate:webhooks:%s', rule, VERSION)


def _params(allowed):
    """The query's parameters, refusing any other."""
    params = pecan.request.GET
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise exceptions.InvalidInput(
            reason='unknown query parameter(s) %s; accepted: %s' % (
                ', '.join(unknown), ', '.join(allowed) or 'none'))
    return params


def _limit(params):
    maximum = pecan.request.conf.api.max_limit
    if 'limit' not in params:
        return maximum
    try:
        limit = int(params['limit'])
    except ValueError:
        limit = 0
    if limit < 1:
        raise exceptions.InvalidInput(
            reason='limit must be a positive integer, not %r' %
            params['limit'])
    return min(limit, maximum)


class DeliveriesController(rest.RestController):
    """``/v1/webhooks/{id}/deliveries``: the delivery log, newest first."""

    @pecan.expose('json')
    def get_all(self, webhook_id):
        ctx = _authorize('deliveries')
        limit = _limit(_params(('limit',)))
        return {'deliveries': _rpc().webhook_deliveries(ctx, webhook_id,
                                                        limit)}


class WebhooksController(rest.RestController):
    """``/v1/webhooks``."""

    deliveries = DeliveriesController()

    @pecan.expose('json')
    def get_all(self):
        ctx = _authorize('list')
        params = _params(('project_id',))
        project_id = params.get('project_id')
        if project_id is not None:
            policy.authorize(ctx, 'climate:webhooks:list:all_projects')
        return {'webhooks': _rpc().webhook_list(ctx, project_id)}

    @pecan.expose('json')
    def get_one(self, webhook_id):
        ctx = _authorize('get')
        _params(())
        return {'webhook': _rpc().webhook_get(ctx, webhook_id)}

    @pecan.expose('json')
    def post(self):
        ctx = _authorize('create')
        webhook = _rpc().webhook_create(ctx, types.request_object())
        pecan.response.status = 201
        return {'webhook': webhook}

    @pecan.expose(content_type='application/json')
    def delete(self, webhook_id=None):
        inventory.refuse_on_collection(webhook_id, 'GET, POST')
        ctx = _authorize('delete')
        _rpc().webhook_delete(ctx, webhook_id)
        pecan.response.status = 204
        return ''
