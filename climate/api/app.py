"""The API as a WSGI application, with its middleware in order."""

import functools

from keystonemiddleware import auth_token
from oslo_config import cfg
from oslo_log import log as logging
from oslo_middleware import healthcheck
from oslo_middleware import request_id
import pecan
import pecan.core
import pecan.rest
import pecan.routing
import pecan.util

from climate.api import hooks
from climate.api import middleware
from climate.api import noauth
from climate.api import root
from climate.conf import api as api_conf
from climate.manager import rpcapi

LOG = logging.getLogger(__name__)

# pecan recomputes a controller's argspec (building a namedtuple class each
# time) several times per request, ~1 ms of a POST; controllers never change.
_argspec = functools.lru_cache(maxsize=None)(pecan.util.getargspec)
for _module in (pecan.util, pecan.core, pecan.rest, pecan.routing):
    _module.getargspec = _argspec


class _ConfHook(pecan.hooks.PecanHook):
    def __init__(self, conf):
        self.conf = conf

    def before(self, state):
        state.request.conf = self.conf


def setup_app(conf=None, manager_api=None):
    """Build the WSGI pipeline.

    Outside in: proxy headers, request id, JSON error bodies, input limits
    (body size, odd URLs), Blazar's ``.json`` route twins, authentication
    (version discovery and /healthcheck bypass it), GET and HEAD only on
    version documents, microversions, JSON bodies, pecan.
    """
    conf = conf or cfg.CONF
    manager_api = manager_api or rpcapi.ManagerAPI()
    app = pecan.make_app(
        root.RootController(),
        hooks=[_ConfHook(conf), hooks.ContextHook(),
               hooks.RPCHook(manager_api), hooks.ErrorHook()],
        force_canonical=False, guess_content_type_from_ext=False)
    max_body = conf.api.max_request_body_size
    app = middleware.JsonBody(app, max_body)
    versioned = middleware.AllowMethods(
        middleware.Microversion(app), middleware.READ_METHODS,
        middleware.VERSION_PATHS + middleware.V1_PATHS)
    if conf.auth_strategy == api_conf.AUTH_KEYSTONE:
        authenticated = auth_token.AuthProtocol(
            versioned, {'oslo_config_config': conf})
    else:
        authenticated = noauth.NoAuth(versioned, conf)
    routes = dict.fromkeys(middleware.VERSION_PATHS, versioned)
    routes[middleware.HEALTHCHECK_PATH] = middleware.AllowMethods(
        healthcheck.Healthcheck.app_factory({}, oslo_config_project='climate'),
        middleware.READ_METHODS)
    app = middleware.PathRouter(authenticated, routes)
    app = middleware.JsonSuffix(app)
    app = middleware.InputGuard(app, max_body)
    app = middleware.JsonErrors(app)
    app = middleware.RequestLogContext(app)
    app = request_id.RequestId(app)
    app = middleware.ProxyHeaders(app, conf)
    return app
