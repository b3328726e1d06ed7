"""Pecan hooks: the request context, the RPC client, errors as JSON."""

from oslo_config import cfg
from oslo_log import log as logging
import oslo_messaging as messaging
from pecan import hooks
import webob.exc

from climate.api import errors
from climate.api import microversion
from climate import context
from climate import exceptions
from climate import policy

LOG = logging.getLogger(__name__)


class ContextHook(hooks.PecanHook):
    """Build the RequestContext from the identity headers."""

    def before(self, state):
        ctx = context.RequestContext.from_environ(state.request.environ)
        ctx.is_admin = policy.check(ctx, 'context_is_admin')
        state.request.context = ctx


class RPCHook(hooks.PecanHook):
    """Give controllers the manager's RPC client."""

    def __init__(self, rpcapi):
        self.rpcapi = rpcapi

    def before(self, state):
        state.request.rpcapi = self.rpcapi


class ErrorHook(hooks.PecanHook):
    """Render every failure as Blazar's error body; hide internals.

    A 503 (the database or the message bus out of reach) says when to try
    again: ``Retry-After: [api] retry_after``.
    """

    def on_error(self, state, exc):
        resp = self._render(state, exc)
        if resp.status_code == 503 and 'Retry-After' not in resp.headers:
            resp.headers['Retry-After'] = str(cfg.CONF.api.retry_after)
        return resp

    def _render(self, state, exc):
        version = state.request.environ.get(microversion.ENVIRON_KEY)
        if isinstance(exc, exceptions.ClimateException):
            if isinstance(exc, exceptions.ServiceUnavailable):
                # an outage, not a bug: one line, no traceback
                LOG.warning('Request failed: %s', errors.message_of(exc))
            elif exc.code >= 500:
                LOG.error('Request failed: %s', exc)
            resp = errors.from_exception(exc, version)
            resp.headers.update(getattr(exc, 'headers', {}))
            return resp
        if isinstance(exc, messaging.MessagingTimeout):
            LOG.error('climate-manager did not answer: %s', exc)
            return errors.response(
                503, 'The reservation manager did not answer in time; try '
                     'again later.', 'ServiceUnavailable', version)
        if isinstance(exc, webob.exc.HTTPException):
            message = exc.explanation or exc.title
            if exc.code == 405:
                message = 'Method %s is not allowed here; allowed: %s.' % (
                    state.request.method, exc.headers.get('Allow', 'none'))
            resp = errors.response(exc.code, message,
                                   exc.title.replace(' ', ''), version)
            if 'Allow' in exc.headers:
                resp.headers['Allow'] = exc.headers['Allow']
            return resp
        LOG.exception('Unexpected error on %s %s', state.request.method,
                      state.request.path)
        return errors.response(500, 'Internal Server Error',
                               'INTERNAL_SERVER_ERROR', version)

