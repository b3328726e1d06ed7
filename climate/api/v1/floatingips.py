"""/v1/floatingips (Blazar's 1.0 API, admin only): the floating IP
addresses ``virtual:floatingip`` reservations book (see
doc/source/floatingips.rst).

``GET|POST /v1/floatingips``, ``GET|DELETE /v1/floatingips/{id}``:
Blazar's bodies (``{"floatingip": {...}}``, ``{"floatingips": [...]}``)
and status codes (201 on create, 204 on delete).
"""

import pecan
from pecan import rest

from climate.api.v1 import inventory
from climate.api.v1 import types

PREFIX = 'climate:floatingips:%s'


class FloatingIPsController(rest.RestController):
    """``/v1/floatingips``."""

    @pecan.expose('json')
    def get_all(self):
        ctx = inventory.authorize(PREFIX, 'get_all')
        inventory.query(())
        return {'floatingips': inventory.rpc().floatingip_list(ctx)}

    @pecan.expose('json')
    def get_one(self, floatingip_id):
        ctx = inventory.authorize(PREFIX, 'get')
        return {'floatingip': inventory.rpc().floatingip_get(
            ctx, floatingip_id)}

    @pecan.expose('json')
    def post(self):
        ctx = inventory.authorize(PREFIX, 'post')
        fip = inventory.rpc().floatingip_create(ctx, types.request_object())
        pecan.response.status = 201
        return {'floatingip': fip}

    @pecan.expose(content_type='application/json')
    def delete(self, floatingip_id=None):
        inventory.refuse_on_collection(floatingip_id, 'GET, POST')
        ctx = inventory.authorize(PREFIX, 'delete')
        inventory.rpc().floatingip_delete(ctx, floatingip_id)
        pecan.response.status = 204
        return ''
