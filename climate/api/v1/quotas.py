"""/v1/quotas/{project_id} (microversion 1.9): a project's limits on
leases.

* ``GET /v1/quotas`` (administrators): the projects with limits of
  their own, and the defaults;
* ``GET``: the limits in effect (the project's own over the configured
  defaults) and what the project holds against them; readers of the
  project, or administrators;
* ``PUT``: set some of the project's own limits (administrators);
* ``DELETE``: back to the defaults (administrators).

See doc/source/quotas.rst.
"""

import pecan
from pecan import rest

from climate.api import microversion
from climate.api.v1 import inventory
from climate.api.v1 import types
from climate import policy

VERSION = microversion.Version.parse('1.9')
PREFIX = 'climate:quotas:%s'


def _authorize(rule, project_id):
    microversion.require(pecan.request, VERSION)
    ctx = pecan.request.context
    policy.authorize(ctx, PREFIX % rule, {'project_id': project_id})
    return ctx


class QuotasController(rest.RestController):
    """``/v1/quotas/{project_id}``."""

    @pecan.expose('json')
    def get_one(self, project_id):
        ctx = _authorize('get', project_id)
        return {'quota': inventory.rpc().quota_get(ctx, project_id)}

    @pecan.expose('json')
    def get_all(self):
        ctx = inventory.authorize(PREFIX, 'get_all', VERSION)
        inventory.query(())
        return {'quotas': inventory.rpc().quota_list(ctx)}

    @pecan.expose('json')
    def put(self, project_id=None):
        inventory.refuse_on_collection(project_id, 'none')
        ctx = _authorize('put', project_id)
        return {'quota': inventory.rpc().quota_set(
            ctx, project_id, types.request_object())}

    @pecan.expose(content_type='application/json')
    def delete(self, project_id=None):
        inventory.refuse_on_collection(project_id, 'none')
        ctx = _authorize('delete', project_id)
        inventory.rpc().quota_delete(ctx, project_id)
        pecan.response.status = 204
        return ''
