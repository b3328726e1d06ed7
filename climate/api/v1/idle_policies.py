"""/v1/idle-policies (microversion 1.17): the projects' idle reclaim
policies (see doc/source/idle.rst).

* ``GET /v1/idle-policies`` (administrators): the projects with a policy
  of their own;
* ``GET /v1/idle-policies/{project_id}``: the project's policy, or the
  operator's default (readers of the project, or administrators);
* ``PUT``: set it (administrators); ``DELETE``: remove it.
"""

import pecan
from pecan import rest

from climate.api import microversion
from climate.api.v1 import inventory
from climate.api.v1 import types
from climate import policy

VERSION = microversion.Version.parse('1.17')
PREFIX = 'climate:idle_policies:%s'


def _authorize(rule, project_id):
    microversion.require(pecan.request, VERSION)
    ctx = pecan.request.context
    policy.authorize(ctx, PREFIX % rule, {'project_id': project_id})
    return ctx


class IdlePoliciesController(rest.RestController):
    """``/v1/idle-policies``."""

    @pecan.expose('json')
    def get_all(self):
        ctx = inventory.authorize(PREFIX, 'list', VERSION)
        inventory.query(())
        return {'idle_policies': inventory.rpc().idle_policy_list(ctx)}

    @pecan.expose('json')
    def get_one(self, project_id):
        ctx = _authorize('get', project_id)
        return {'idle_policy': inventory.rpc().idle_policy_get(
            ctx, project_id)}

    @pecan.expose('json')
    def put(self, project_id=None):
        inventory.refuse_on_collection(project_id, 'GET')
        ctx = _authorize('set', project_id)
        return {'idle_policy': inventory.rpc().idle_policy_set(
            ctx, project_id, types.request_object())}

    @pecan.expose(content_type='application/json')
    def delete(self, project_id=None):
        inventory.refuse_on_collection(project_id, 'GET')
        ctx = _authorize('delete', project_id)
        inventory.rpc().idle_policy_delete(ctx, project_id)
        pecan.response.status = 204
        return ''
