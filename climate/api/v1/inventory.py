"""What the admin inventory routes share (``/v1/floatingips``...):
authorizing a rule of the route's policy prefix (after its microversion,
when it has one), the manager's RPC API, and the 405 of a collection
asked for a method only its items have."""

import pecan

from climate.api import microversion
from climate import exceptions
from climate import policy


def authorize(prefix, rule, version=None):
    """The request's context, once ``prefix % rule`` allows it (and the
    request's microversion is ``version`` or later, when given)."""
    if version is not None:
        microversion.require(pecan.request, version)
    ctx = pecan.request.context
    policy.authorize(ctx, prefix % rule)
    return ctx


def rpc():
    return pecan.request.rpcapi


def refuse_on_collection(item_id, allowed):
    """405 for ``DELETE /v1/<collection>`` and the like."""
    if item_id is None:
        raise exceptions.MethodNotAllowed(method=pecan.request.method,
                                          allowed=allowed)
