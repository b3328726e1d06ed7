"""/v1/volume-pools (microversion 1.5, admin only): the volume pools
``virtual:volume`` reservations book on (see doc/source/volumes.rst).

* ``GET|POST /v1/volume-pools``, ``GET|PUT|DELETE /v1/volume-pools/{id}``;
  create and delete with the static inventory only;
* microversion 1.6: ``GET /v1/volume-pools/allocations`` (``lease_id`` /
  ``reservation_id`` filters), the reservations holding each pool.
"""

import pecan
from pecan import rest

from climate.api import microversion
from climate.api.v1 import inventory
from climate.api.v1 import types

VERSION = microversion.Version.parse('1.5')
ALLOCATIONS_VERSION = microversion.Version.parse('1.6')
_rpc = inventory.rpc
_refuse_on_collection = inventory.refuse_on_collection


def _authorize(rule, version=VERSION):
    return inventory.authorize('climate:volume_pools:%s', rule, version)


class AllocationsController(rest.RestController):
    """``/v1/volume-pools/allocations``."""

    @pecan.expose('json')
    def get_all(self):
        ctx = _authorize('allocation:get_all', ALLOCATIONS_VERSION)
        params = inventory.query(('lease_id', 'reservation_id'))
        return {'allocations': _rpc().volume_pool_allocations(ctx, **params)}


class VolumePoolsController(rest.RestController):
    """``/v1/volume-pools``."""

    allocations = AllocationsController()

    @pecan.expose('json')
    def get_all(self):
        ctx = _authorize('get_all')
        inventory.query(())
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
