"""WSGI middleware of the API: authentication choice, microversions and
uniform JSON errors."""


import json
import re

from oslo_log import log as logging
from oslo_middleware import http_proxy_to_wsgi
from oslo_middleware import request_id
import webob
import webob.headers

from climate.api import errors
from climate.api import microversion
from climate import context
from climate import exceptions

LOG = logging.getLogger(__name__)

# Version discovery is public, as in every OpenStack service.
VERSION_PATHS = ('/', '/versions', '/versions/')
HEALTHCHECK_PATH = '/healthcheck'
# where JsonBody leaves the decoded request body
JSON_BODY = 'climate.json_body'


class PathRouter:
    """Send a few exact paths to their own application (version discovery
    and /healthcheck must not need a token); everything else to ``app``."""

    def __init__(self, app, routes):
        self.app = app
        self.routes = routes

    def __call__(self, environ, start_response):
        target = self.routes.get(environ.get('PATH_INFO') or '/', self.app)
        return target(environ, start_response)


class ProxyHeaders:
    """oslo.middleware's HTTPProxyToWSGI, passed only when
    ``[oslo_middleware] enable_proxy_headers_parsing`` is on (it does
    nothing otherwise, at the cost of a webob request and response)."""

    def __init__(self, app, conf):
        self.app = app
        self.proxy = http_proxy_to_wsgi.HTTPProxyToWSGI(app, conf)
        self.conf = conf

    def __call__(self, environ, start_response):
        if self.conf.oslo_middleware.enable_proxy_headers_parsing:
            return self.proxy(environ, start_response)
        return self.app(environ, start_response)


class RequestLogContext:
    """Give each request a fresh logging context from its first line.

    oslo.log takes the context of a log line from a thread-local that the
    last ``RequestContext`` of the thread set: without this, what
    keystonemiddleware logs about a request (a refused token...) would
    carry the user and request id of the previous request this worker
    thread served.  The full context replaces it once the identity is known
    (``climate.api.hooks.ContextHook``).
    """

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        context.RequestContext(
            request_id=environ.get(request_id.ENV_REQUEST_ID),
            global_request_id=environ.get(request_id.GLOBAL_REQ_ID),
            overwrite=True)
        return self.app(environ, start_response)


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
            if key not in environ:
                environ[key] = value
        environ['HTTP_X_IDENTITY_STATUS'] = 'Confirmed'
        environ.setdefault('HTTP_X_TENANT_ID', environ['HTTP_X_PROJECT_ID'])
        return self.app(environ, start_response)


class Microversion:
    """Negotiate ``OpenStack-API-Version`` for /v1 and echo it back."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        # plain WSGI rather than webob.dec.wsgify: every request passes
        # here, and a wsgify layer buffers the whole answer into a Response
        if not environ.get('PATH_INFO', '').startswith('/v1'):
            return self.app(environ, start_response)
        try:
            version = microversion.from_headers(
                webob.headers.EnvironHeaders(environ))
        except ValueError as exc:
            return errors.response(
                400, 'Invalid OpenStack-API-Version header %r: expected '
                     '"reservation X.Y" or "reservation latest"' %
                (exc.args[0],), 'InvalidAPIVersion')(environ, start_response)
        except LookupError as exc:
            return errors.response(
                406, 'Version %s is not supported by the API. Minimum is %s '
                     'and maximum is %s.' % (exc.args[0], microversion.MIN,
                                             microversion.MAX),
                'APIVersionNotAcceptable')(environ, start_response)
        environ[microversion.ENVIRON_KEY] = version
        echoed = [(microversion.HEADER, '%s %s' % (microversion.SERVICE_TYPE,
                                                   version)),
                  ('Vary', microversion.HEADER)]

        def versioned_start_response(status, headers, exc_info=None):
            names = {microversion.HEADER.lower(), 'vary'}
            headers = [(k, v) for k, v in headers
                       if k.lower() not in names] + echoed
            return start_response(status, headers, exc_info)

        return self.app(environ, versioned_start_response)


def decode_json_body(req, max_bytes):
    """The JSON object a request carries, or MalformedRequestBody."""
    if req.content_length and req.content_length > max_bytes:
        raise exceptions.MalformedRequestBody(
            reason='the body is larger than %d bytes' % max_bytes)
    raw = req.body
    if not raw:
        raise exceptions.MalformedRequestBody(reason='the body is empty')
    ctype = req.content_type or 'application/json'
    if ctype != 'application/json':
        raise exceptions.MalformedRequestBody(
            reason="content type must be application/json, not '%s'" %
            ctype)
    try:
        data = json.loads(raw.decode('utf-8'))
    except UnicodeDecodeError:
        raise exceptions.MalformedRequestBody(
            reason='the body is not valid UTF-8')
    except RecursionError:
        raise exceptions.MalformedRequestBody(
            reason='the body is nested too deeply')
    except ValueError as exc:
        raise exceptions.MalformedRequestBody(reason='not JSON (%s)' %
                                              exc)
    if not isinstance(data, dict):
        raise exceptions.MalformedRequestBody(
            reason='the body must be a JSON object')
    return data


class JsonBody:
    """Decode the JSON body of POST and PUT before pecan looks at it.

    Pecan would otherwise parse it itself while routing and turn a bad body
    into a 500 (deep nesting) or an anonymous 400 (bad UTF-8).  The decoded
    object is left in ``environ[JSON_BODY]`` for the controllers.
    """

    METHODS = frozenset(['POST', 'PUT'])

    def __init__(self, app, max_bytes):
        self.app = app
        self.max_bytes = max_bytes

    def __call__(self, environ, start_response):
        if environ.get('REQUEST_METHOD') in self.METHODS:
            try:
                environ[JSON_BODY] = decode_json_body(
                    webob.Request(environ), self.max_bytes)
            except exceptions.MalformedRequestBody as exc:
                return errors.from_exception(
                    exc, environ.get(microversion.ENVIRON_KEY))(
                    environ, start_response)
        return self.app(environ, start_response)


class JsonErrors:
    """Give non-JSON error pages (routing 404s, 405s) the error body."""

    def __init__(self, app):
        self.app = app

    @staticmethod
    def _keystone_error(resp):
        """(message, title) of keystonemiddleware's own JSON error body
        (``{"error": {"code", "title", "message"}}``), or None."""
        try:
            error = json.loads(resp.body).get('error')
            return str(error['message']), str(error['title'])
        except (ValueError, TypeError, AttributeError, KeyError):
            return None

    def __call__(self, environ, start_response):
        answered, written = [], []

        def held_start_response(status, headers, exc_info=None):
            answered[:] = [status, headers, exc_info]
            return written.append  # WSGI's write(), which nobody here uses

        body = self.app(environ, held_start_response)
        if not answered or written:
            # an application that answers as it is iterated, or wrote
            original = body
            try:
                body = written + list(original)
            finally:
                if hasattr(original, 'close'):
                    original.close()
        status, headers, exc_info = answered
        if int(status.split(' ', 1)[0]) < 400:
            # successes pass through untouched, unbuffered
            start_response(status, headers, exc_info)
            return body
        try:
            content = b''.join(body)
        finally:
            if hasattr(body, 'close'):
                body.close()
        resp = webob.Response(status=status, headerlist=list(headers),
                              body=content)
        return self._json_error(webob.Request(environ), resp)(
            environ, start_response)

    def _json_error(self, req, resp):
        title = resp.status.split(' ', 1)[-1]
        message = title
        if resp.content_type == 'application/json':
            # ours already, or keystonemiddleware's 401 in Keystone's shape
            keystone_error = self._keystone_error(resp)
            if keystone_error is None:
                return resp
            message, title = keystone_error
        text = resp.text.strip() if resp.charset else ''
        if resp.status_int == 405:
            message = 'Method %s is not allowed here; allowed: %s.' % (
                req.method, resp.headers.get('Allow', 'none'))
        elif resp.content_type == 'application/json':
            pass
        elif text and '<' not in text:
            message = text.splitlines()[-1].strip()
        elif resp.status_int == 503 and text:
            # keystonemiddleware's "Keystone unavailable" page: its last
            # line of text is the explanation
            lines = [line.strip() for line in
                     re.sub(r'<[^>]*>', '\n', text).splitlines()
                     if line.strip()]
            message = lines[-1] if lines else message
        new = errors.response(resp.status_int, message,
                              title.replace(' ', ''))
        for name in ('Allow', microversion.HEADER, 'Vary',
                     'WWW-Authenticate'):
            if name in resp.headers:
                new.headers[name] = resp.headers[name]
        return new
