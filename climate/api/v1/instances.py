"""/v1/instances: availability of instance slots (microversion 1.3).

``POST /v1/instances/availability`` (any project reader; see
doc/source/instances.rst): a JSON body naming the slots and the window,
answered by the manager (``climate.manager.instances``).
"""

import pecan
from pecan import rest

from climate.api import microversion
from climate.api.v1 import types
from climate import policy

AVAILABILITY_VERSION = microversion.Version.parse('1.3')


_body = types.request_object


class InstancesController(rest.RestController):
    """``/v1/instances``."""

    _custom_actions = {'availability': ['POST']}

    @pecan.expose('json')
    def availability(self):
        microversion.require(pecan.request, AVAILABILITY_VERSION)
        ctx = pecan.request.context
        policy.authorize(ctx, 'climate:instances:availability')
        return {'availability': pecan.request.rpcapi.instance_availability(
            ctx, _body())}
