"""/v1/volume-pools (microversion 1.5, admin only): the volume pools
``virtual:volume`` reservations book on (see doc/source/volumes.rst).

* ``GET|POST /v1/volume-pools``, ``GET|PUT|DELETE /v1/volume-pools/{id}``;
  create and delete with the static inventory only.
"""

import pecan
from pecan import rest

from climate.api import microversion
from climate.api.v1 import hosts as hosts_api
from climate.api.v1 import types
from climate import exceptions
from climate import policy

VERSION = microversion.Version.parse('1.5')


def _authorize(rule):
    microversion.require(pecan.request, VERSION)
    ctx = pecan.request.context
    policy.authorize(ctx, 'climate:volume_pools:%s' % rule)
    return ctx


def _rpc():
    return pecan.request.rpcapi


def _refuse_on_collection(pool_id, allowed):
    if pool_id is None:
        raise exceptions.MethodNotAllowed(method=pecan.request.method,
                                          allowed=allowed)


class VolumePoolsController(rest.RestController):
    """``/v1/volume-pools``."""

    @pecan.expose('json')
    def get_all(self):
        ctx = _authorize('get_all')
        hosts_api._query(())
        return {'volume_pools': _rpc().volume_pool_list(ctx)}

    @pecan.expose('json')
    def get_one(self, pool_id):
        ctx = _authorize('get')
        return {'volume_pool': _rpc().volume_pool_get(ctx, pool_id)}

    @pecan.expose('json')
    def post(self):
        ctx = _authorize('post')
        pool = _rpc().volume_pool_create(ctx, types.request_object())
        pecan.response.status = 201
        return {'volume_pool': pool}

    @pecan.expose('json')
    def put(self, pool_id=None):
        _refuse_on_collection(pool_id, 'GET, POST')
        ctx = _authorize('put')
        return {'volume_pool': _rpc().volume_pool_update(
            ctx, pool_id, types.request_object())}

    @pecan.expose(content_type='application/json')
    def delete(self, pool_id=None):
        _refuse_on_collection(pool_id, 'GET, POST')
        ctx = _authorize('delete')
        _rpc().volume_pool_delete(ctx, pool_id)
        pecan.response.status = 204
        return ''
