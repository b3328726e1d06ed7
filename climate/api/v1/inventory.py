"""What the v1 controllers share: the checked query parameters of a
request and, for the admin inventory routes (``/v1/floatingips``...),
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


def query(allowed):
    """The request's query parameters named in ``allowed``; 400 for any
    other parameter, or for a value holding a NUL character."""
    params = pecan.request.GET
    unknown = set(params) - set(allowed)
    if unknown:
        raise exceptions.InvalidInput(
            reason='unknown query parameter(s) %s; accepted: %s' % (
                ', '.join(sorted(repr(k) for k in unknown)),
                ', '.join(sorted(allowed)) or 'none'))
    for key in allowed:
        if '\x00' in params.get(key, ''):
            # no database compares text holding NUL (PostgreSQL refuses it)
            raise exceptions.InvalidInput(
                reason='%s holds a NUL character' % key)
    return {k: params[k] for k in allowed if k in params}


def rpc():
    return pecan.request.rpcapi


def refuse_on_collection(item_id, allowed):
    """405 for ``DELETE /v1/<collection>`` and the like."""
    if item_id is None:
        raise exceptions.MethodNotAllowed(method=pecan.request.method,
                                          allowed=allowed)


def without(view, fields):
    """``view`` (a dict) less the keys of ``fields``: an answer as a
    microversion older than the one that added them shows it."""
    return {key: value for key, value in view.items() if key not in fields}
