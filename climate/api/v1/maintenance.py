"""/v1/maintenance-windows (microversion 1.16): an operator's windows on
hosts (see doc/source/maintenance.rst).

* ``GET|POST /v1/maintenance-windows``: the windows; a plan
  (``dry_run``, 200) or a window applied (201);
* ``GET|DELETE /v1/maintenance-windows/{id}``: one window; a cancel.

The plan, the actions and the booking are the manager's
(``climate.manager.maintenance``).
"""

import pecan
from pecan import rest

from climate.api import microversion
from climate.api.v1 import inventory
from climate.api.v1 import types

VERSION = microversion.Version.parse('1.16')
_rpc = inventory.rpc


def _authorize(rule):
    return inventory.authorize('climate:maintenance:%s', rule, VERSION)


class MaintenanceController(rest.RestController):
    """``/v1/maintenance-windows``."""

    @pecan.expose('json')
    def get_all(self):
        ctx = _authorize('list')
        inventory.query(())
        return {'maintenance_windows': _rpc().maintenance_list(ctx)}

    @pecan.expose('json')
    def get_one(self, window_id):
        ctx = _authorize('get')
        inventory.query(())
        return {'maintenance_window': _rpc().maintenance_get(ctx,
                                                             window_id)}

    @pecan.expose('json')
    def post(self):
        ctx = _authorize('create')
        window = _rpc().maintenance_create(ctx, types.request_object())
        pecan.response.status = 200 if window.get('dry_run') else 201
        return {'maintenance_window': window}

    @pecan.expose(content_type='application/json')
    def delete(self, window_id=None):
        inventory.refuse_on_collection(window_id, 'GET, POST')
        ctx = _authorize('delete')
        _rpc().maintenance_delete(ctx, window_id)
        pecan.response.status = 204
        return ''
