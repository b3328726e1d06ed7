"""/v1/networks (Blazar's and Chameleon's 1.0 API, admin only): the
network segments ``network`` reservations book (see
doc/source/networks.rst).

``GET|POST /v1/networks``, ``GET|PUT|DELETE /v1/networks/{id}``:
Blazar's bodies (``{"network": {...}}``, ``{"networks": [...]}``, the
extra capabilities beside the fields) and status codes (201 on create,
204 on delete).
"""

import pecan
from pecan import rest

from climate.api.v1 import inventory
from climate.api.v1 import types

PREFIX = 'climate:networks:%s'


class NetworksController(rest.RestController):
    """``/v1/networks``."""

    @pecan.expose('json')
    def get_all(self):
        ctx = inventory.authorize(PREFIX, 'get_all')
        inventory.query(())
        return {'networks': inventory.rpc().network_list(ctx)}

    @pecan.expose('json')
    def get_one(self, network_id):
        ctx = inventory.authorize(PREFIX, 'get')
        return {'network': inventory.rpc().network_get(ctx, network_id)}

    @pecan.expose('json')
    def post(self):
        ctx = inventory.authorize(PREFIX, 'post')
        net = inventory.rpc().network_create(ctx, types.request_object())
        pecan.response.status = 201
        return {'network': net}

    @pecan.expose('json')
    def put(self, network_id=None):
        inventory.refuse_on_collection(network_id, 'GET, POST')
        ctx = inventory.authorize(PREFIX, 'put')
        return {'network': inventory.rpc().network_update(
            ctx, network_id, types.request_object())}

    @pecan.expose(content_type='application/json')
    def delete(self, network_id=None):
        inventory.refuse_on_collection(network_id, 'GET, POST')
        ctx = inventory.authorize(PREFIX, 'delete')
        inventory.rpc().network_delete(ctx, network_id)
        pecan.response.status = 204
        return ''
