"""WSGI middleware of the API: authentication choice, microversions and
uniform JSON errors."""


from oslo_log import log as logging
import webob
import webob.dec

from climate.api import errors
from climate.api import microversion

LOG = logging.getLogger(__name__)

# Version discovery is public, as in every OpenStack service.
VERSION_PATHS = ('/', '/versions', '/versions/')
HEALTHCHECK_PATH = '/healthcheck'


class PathRouter:
    """Send a few exact paths to their own application (version discovery
    and /healthcheck must not need a token); everything else to ``app``."""

    def __init__(self, app, routes):
        self.app = app
        self.routes = routes

    def __call__(self, environ, start_response):
        target = self.routes.get(environ.get('PATH_INFO') or '/', self.app)
        return target(environ, start_response)


class NoAuth:
    """Identity from X-Project-Id / X-User-Id / X-Roles, or the defaults of
    ``[noauth]``.  Anyone who can reach the port is whoever they claim to
    be: for the embedded single-user default on loopback only."""

    def __init__(self, app, conf):
        self.app = app
        self.conf = conf

    def __call__(self, environ, start_response):
        defaults = {
            'HTTP_X_PROJECT_ID': self.conf.noauth.project_id,
            'HTTP_X_USER_ID': self.conf.noauth.user_id,
            'HTTP_X_ROLES': ','.join(self.conf.noauth.roles),
        }
        for key, value in defaults.items():
            if not environ.get(key):
                environ[key] = value
        environ['HTTP_X_IDENTITY_STATUS'] = 'Confirmed'
        environ.setdefault('HTTP_X_TENANT_ID', environ['HTTP_X_PROJECT_ID'])
        return self.app(environ, start_response)


class Microversion:
    """Negotiate ``OpenStack-API-Version`` for /v1 and echo it back."""

    def __init__(self, app):
        self.app = app

    @webob.dec.wsgify
    def __call__(self, req):
        if not req.path_info.startswith('/v1'):
            return req.get_response(self.app)
        try:
            version = microversion.from_headers(req.headers)
        except ValueError as exc:
            return errors.response(
                400, 'Invalid OpenStack-API-Version header %r: expected '
                     '"reservation X.Y" or "reservation latest"' %
                (exc.args[0],), 'InvalidAPIVersion')
        except LookupError as exc:
            return errors.response(
                406, 'Version %s is not supported by the API. Minimum is %s '
                     'and maximum is %s.' % (exc.args[0], microversion.MIN,
                                             microversion.MAX),
                'APIVersionNotAcceptable')
        req.environ[microversion.ENVIRON_KEY] = version
        resp = req.get_response(self.app)
        resp.headers[microversion.HEADER] = '%s %s' % (
            microversion.SERVICE_TYPE, version)
        resp.headers['Vary'] = microversion.HEADER
        return resp


class JsonErrors:
    """Give non-JSON error pages (routing 404s, 405s) the error body."""

    def __init__(self, app):
        self.app = app

    @webob.dec.wsgify
    def __call__(self, req):
        resp = req.get_response(self.app)
        if resp.status_int < 400 or resp.content_type == 'application/json':
            return resp
        message = resp.status.split(' ', 1)[-1]
        text = resp.text.strip() if resp.charset else ''
        if text and '<' not in text:
            message = text.splitlines()[-1]
        new = errors.response(resp.status_int, message,
                              resp.status.split(' ', 1)[-1].replace(' ', ''))
        for name in ('Allow', microversion.HEADER, 'Vary',
                     'WWW-Authenticate'):
            if name in resp.headers:
                new.headers[name] = resp.headers[name]
        return new


