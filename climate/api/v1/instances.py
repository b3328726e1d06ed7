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


class AvailabilityController(rest.RestController):
    """A collection whose ``availability`` action (POST, a JSON body) is
    a search of the manager: from ``VERSION`` on, under policy ``RULE``,
    answered by the RPC method ``METHOD``."""

    _custom_actions = {'availability': ['POST']}
    VERSION = RULE = METHOD = None

    @pecan.expose('json')
    def availability(self):
        microversion.require(pecan.request, self.VERSION)
        ctx = pecan.request.context
        policy.authorize(ctx, self.RULE)
        search = getattr(pecan.request.rpcapi, self.METHOD)
        return {'availability': search(ctx, types.request_object())}


class InstancesController(AvailabilityController):
    """``/v1/instances``."""

    VERSION = AVAILABILITY_VERSION
    RULE = 'climate:instances:availability'
    METHOD = 'instance_availability'
