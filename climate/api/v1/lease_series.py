"""/v1/lease-series (microversion 1.15): recurring leases (see
doc/source/recurring.rst).

* ``GET|POST /v1/lease-series``: the project's series; a create is a
  lease create body with a ``recurrence``;
* ``GET|PUT|DELETE /v1/lease-series/{id}``: a series with its
  occurrences; an update from an occurrence on; a cancel.

Parsing the rule, booking the occurrences and scoping to the caller's
project are the manager's (``climate.manager.series``).
"""

import pecan
from pecan import rest

from climate.api import microversion
from climate.api.v1 import inventory
from climate.api.v1 import leases
from climate.api.v1 import types
from climate.lease import idle
from climate import policy

VERSION = microversion.Version.parse('1.15')
_rpc = inventory.rpc


def _authorize(rule):
    return inventory.authorize('climate:lease_series:%s', rule, VERSION)


class LeaseSeriesController(rest.RestController):
    """``/v1/lease-series``."""

    @pecan.expose('json')
    def get_all(self):
        ctx = _authorize('list')
        project_id = inventory.query(('project_id',)).get('project_id')
        if project_id is not None:
            policy.authorize(ctx, 'climate:lease_series:list:all_projects')
        return {'lease_series': _rpc().series_list(ctx, project_id)}

    @pecan.expose('json')
    def get_one(self, series_id):
        ctx = _authorize('get')
        inventory.query(())
        return {'lease_series': _rpc().series_get(ctx, series_id)}

    @pecan.expose('json')
    def post(self):
        ctx = _authorize('create')
        body = types.parse(pecan.request, types.SeriesCreate)
        if idle.FIELD in body and \
                microversion.of(pecan.request) < leases.IDLE_VERSION:
            raise leases.needs(idle.FIELD, leases.IDLE_VERSION)
        series = _rpc().series_create(ctx, body)
        pecan.response.status = 201
        return {'lease_series': series}

    @pecan.expose('json')
    def put(self, series_id=None):
        inventory.refuse_on_collection(series_id, 'GET, POST')
        ctx = _authorize('update')
        body = types.parse(pecan.request, types.SeriesUpdate)
        return {'lease_series': _rpc().series_update(ctx, series_id, body)}

    @pecan.expose(content_type='application/json')
    def delete(self, series_id=None):
        inventory.refuse_on_collection(series_id, 'GET, POST')
        ctx = _authorize('delete')
        _rpc().series_delete(ctx, series_id)
        pecan.response.status = 204
        return ''
