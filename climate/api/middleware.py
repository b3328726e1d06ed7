"""WSGI middleware of the API: input limits, microversions, JSON bodies
and uniform JSON errors."""

import io
import json
import re
import urllib.parse

from cheroot import errors as cheroot_errors
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
#: the v1 document (behind authentication)
V1_PATHS = ('/v1', '/v1/')
#: the only methods a version document or /healthcheck answers
READ_METHODS = ('GET', 'HEAD')
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


class JsonSuffix:
    """Serve ``/v1/<route>.json`` as ``/v1/<route>``, as Blazar does (its
    ``Rest.route`` adds a ``.json`` twin to every route; JSON is the only
    representation either serves)."""

    SUFFIX = '.json'

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        path = environ.get('PATH_INFO', '')
        if (path.startswith('/v1/') and path.endswith(self.SUFFIX) and
                not path.endswith('/' + self.SUFFIX)):
            environ['PATH_INFO'] = path[:-len(self.SUFFIX)]
        return self.app(environ, start_response)


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
            # Blazar's sentence first
            return errors.response(
                400, 'API Version String %s is of invalid format. Must be '
                     'of format MajorNum.MinorNum. Invalid '
                     'OpenStack-API-Version header %r: expected '
                     '"reservation X.Y" or "reservation latest"' %
                (exc.args[0], exc.args[0]), 'InvalidAPIVersion')(
                    environ, start_response)
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


class AllowMethods:
    """Answer 405 (with ``Allow``) to any method but ``methods``: a route
    such as /healthcheck or a version document answers every method
    otherwise.  With ``paths``, only requests for those paths are checked.
    """

    def __init__(self, app, methods, paths=None):
        self.app = app
        self.methods = tuple(methods)
        self.paths = frozenset(paths) if paths is not None else None

    def __call__(self, environ, start_response):
        method = environ.get('REQUEST_METHOD')
        if method in self.methods or (
                self.paths is not None and
                environ.get('PATH_INFO', '') not in self.paths):
            return self.app(environ, start_response)
        allowed = ', '.join(self.methods)
        resp = errors.response(
            405, 'Method %s is not allowed here; allowed: %s.' % (
                method, allowed), 'MethodNotAllowed')
        resp.headers['Allow'] = allowed
        return resp(environ, start_response)


class _BodyTooLarge(Exception):
    pass


#: Largest read asked of ``wsgi.input`` at once.  Small, because cheroot's
#: chunked reader builds each answer by concatenation, chunk by chunk:
#: quadratic in the size asked for when a client sends tiny chunks.
READ_SIZE = 8192


def _read_body(environ, max_bytes):
    """The request body, read from ``wsgi.input``: at most ``max_bytes`` + 1
    bytes whatever the client declares or sends.

    A ``Content-Length`` above the limit is refused unread (unless the body
    is chunked: chunked framing overrides the length).  A chunked body, or
    any body the server marks ``wsgi.input_terminated`` (it ends at its
    end), is read to its end; otherwise ``Content-Length`` bytes.  None when
    the request declares no body.

    :raises _BodyTooLarge: the body has more than ``max_bytes``.
    :raises exceptions.InvalidInput: Content-Length is not a number.
    """
    stream = environ.get('wsgi.input')
    chunked = 'chunked' in environ.get('HTTP_TRANSFER_ENCODING', '').lower()
    declared = environ.get('CONTENT_LENGTH') or '0'
    try:
        length = int(declared)
    except ValueError:
        raise exceptions.InvalidInput(
            reason='Content-Length %r is not a number' % declared)
    if length < 0:
        raise exceptions.InvalidInput(
            reason='Content-Length %r is negative' % declared)
    if length > max_bytes and not chunked:
        raise _BodyTooLarge()
    if chunked or environ.get('wsgi.input_terminated'):
        budget = max_bytes + 1
    elif length:
        budget = length
    else:
        return None
    if stream is None:
        return b''
    parts, total = [], 0
    while total < budget:
        data = stream.read(min(READ_SIZE, budget - total))
        if not data:
            break
        parts.append(data)
        total += len(data)
    if total > max_bytes:
        raise _BodyTooLarge()
    return b''.join(parts)


class InputGuard:
    """Refuse, before anything reads or decodes it, what no route can take.

    - The body, with Content-Length or chunked, is read here and never more
      than ``max_bytes`` + 1 bytes of it: a larger one is answered 413
      Request Entity Too Large (as oslo.middleware's ``sizelimit`` and so
      OpenStack services answer), a declared length above the limit without
      reading a byte.  What was read replaces ``wsgi.input`` (with its
      ``CONTENT_LENGTH``), so the layers below see an ordinary body.
    - A path with a NUL character names nothing (and PostgreSQL refuses NUL
      in a query): 404.  A query string with one: 400.  A path or query
      string that is not UTF-8 once percent-decoded: 400.
    """

    def __init__(self, app, max_bytes):
        self.app = app
        self.max_bytes = max_bytes

    def __call__(self, environ, start_response):
        refusal = self._url_refusal(environ)
        if refusal is None:
            refusal = self._buffer_body(environ)
        if refusal is not None:
            return refusal(environ, start_response)
        return self.app(environ, start_response)

    @staticmethod
    def _url_refusal(environ):
        # PEP 3333: PATH_INFO is percent-decoded, as latin-1 text
        path = environ.get('PATH_INFO', '')
        if '\x00' in path:
            return errors.response(404, 'The resource could not be found.',
                                   'NotFound')
        try:
            path.encode('latin-1').decode('utf-8')
        except (UnicodeEncodeError, UnicodeDecodeError):
            return errors.response(400, 'The URL path is not valid UTF-8.',
                                   'BadRequest')
        query = environ.get('QUERY_STRING', '')
        if not query:
            return None
        try:
            params = [(name.decode('utf-8'), value.decode('utf-8'))
                      for name, value in urllib.parse.parse_qsl(
                          query.encode('latin-1'), keep_blank_values=True)]
        except (UnicodeEncodeError, UnicodeDecodeError):
            return errors.response(
                400, 'The query string is not valid UTF-8.', 'BadRequest')
        for name, value in params:
            if '\x00' in name or '\x00' in value:
                return errors.response(
                    400, 'Query parameter %s contains a NUL character '
                         '(U+0000).' % _name(name), 'BadRequest')
        return None

    def _buffer_body(self, environ):
        try:
            raw = _read_body(environ, self.max_bytes)
        except _BodyTooLarge:
            return self._too_large()
        except exceptions.InvalidInput as exc:
            return errors.from_exception(exc)
        except ValueError as exc:
            # cheroot: a chunk size that is not hexadecimal, a chunk not
            # followed by CRLF
            return errors.response(
                400, 'Malformed chunked transfer coding: %s' % exc,
                'BadRequest')
        except OSError as exc:
            # cheroot raises IOError('Request Entity Too Large') when the
            # chunked framing passes its own limit; any other error of the
            # connection (a timeout, a reset) is the server's to handle
            if 'Too Large' not in str(exc):
                raise
            return self._too_large()
        except cheroot_errors.MaxSizeExceeded:
            # the chunked framing passed cheroot's own limit
            return self._too_large()
        if raw is not None:
            environ['wsgi.input'] = io.BytesIO(raw)
            environ['CONTENT_LENGTH'] = str(len(raw))
            environ.pop('HTTP_TRANSFER_ENCODING', None)
            environ['wsgi.input_terminated'] = True
            environ['webob.is_body_seekable'] = True
        return None

    def _too_large(self):
        return errors.response(
            413, 'The request body is larger than %d bytes.' % self.max_bytes,
            'RequestEntityTooLarge')


#: Deepest nesting of objects and lists a body may have.  Blazar's bodies
#: nest three levels; the limit keeps every later step (type checks, RPC
#: serialisation, SQL JSON columns) far from Python's recursion limit.
MAX_DEPTH = 32
_ODD_CHARACTER = re.compile('[\x00\ud800-\udfff]')
_PLAIN_NAME = re.compile(r'[A-Za-z0-9_\-]+')


def _odd_character(text):
    """What is wrong with a decoded JSON string, or None.

    JSON's ``\\uXXXX`` escapes can say what UTF-8 cannot: a NUL (which
    PostgreSQL refuses in text) or half of a UTF-16 surrogate pair (which
    cannot be encoded to UTF-8, so no database stores it).  A pair that
    is complete decodes to one character outside the surrogate range.
    """
    found = _ODD_CHARACTER.search(text)
    if found is None:
        return None
    if found.group() == '\x00':
        return 'a NUL character (U+0000)'
    return 'an unpaired UTF-16 surrogate (U+%04X)' % ord(found.group())


def _name(text):
    """``text`` as it is when plain, quoted and escaped otherwise."""
    return text if _PLAIN_NAME.fullmatch(text) else json.dumps(text)


def _where(path):
    """``reservations[0].resource_type`` for ('reservations', 0, ...)."""
    out = ''
    for part in path:
        if isinstance(part, int):
            out += '[%d]' % part
        else:
            out += ('.' if out else '') + _name(part)
    return out


def check_json_value(data):
    """Refuse odd strings (keys or values, at any depth) and deep nesting.

    :raises exceptions.MalformedRequestBody: naming the problem and where.
    """
    stack = [(data, (), 1)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, dict):
            items = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            continue
        if depth > MAX_DEPTH:
            raise exceptions.MalformedRequestBody(
                reason='the body is nested too deeply (more than %d levels)'
                       % MAX_DEPTH)
        for key, item in items:
            if isinstance(key, str):
                problem = _odd_character(key)
                if problem:
                    raise exceptions.MalformedRequestBody(
                        reason='the key %s%s contains %s' % (
                            _name(key),
                            ' in %s' % _where(path) if path else '',
                            problem))
            if isinstance(item, str):
                problem = _odd_character(item)
                if problem:
                    raise exceptions.MalformedRequestBody(
                        reason='the string at %s contains %s' % (
                            _where(path + (key,)), problem))
            elif isinstance(item, (dict, list)):
                stack.append((item, path + (key,), depth + 1))


def _loads(raw):
    try:
        return json.loads(raw.decode('utf-8'))
    except UnicodeDecodeError:
        raise exceptions.MalformedRequestBody(
            reason='the body is not valid UTF-8')
    except RecursionError:
        raise exceptions.MalformedRequestBody(
            reason='the body is nested too deeply (more than %d levels)' %
                   MAX_DEPTH)
    except ValueError as exc:
        raise exceptions.MalformedRequestBody(reason='not JSON (%s)' %
                                              exc)


def decode_json_body(req, max_bytes):
    """The JSON object a request carries, or MalformedRequestBody.

    Strings with a NUL or an unpaired surrogate and nesting deeper than
    :data:`MAX_DEPTH` are refused too (:func:`check_json_value`).
    """
    if req.content_length and req.content_length > max_bytes:
        raise exceptions.MalformedRequestBody(
            reason='the body is larger than %d bytes' % max_bytes)
    raw = req.body
    if not raw:
        # Blazar reads an empty body as {}, whatever its content type: the
        # route then says what is missing (or, for an update, changes
        # nothing)
        return {}
    ctype = req.content_type or 'application/json'
    if ctype != 'application/json':
        raise exceptions.UnsupportedContentType(content_type=ctype)
    data = _loads(raw)
    if not isinstance(data, dict):
        raise exceptions.MalformedRequestBody(
            reason='the body must be a JSON object')
    check_json_value(data)
    return data


class JsonBody:
    """Decode and check a JSON request body before pecan looks at it.

    Pecan parses the JSON body of any request but a GET itself while
    routing (its keys may fill controller arguments), and turns a bad one
    into a 500 (deep nesting) or an anonymous 400 (bad UTF-8).  So:

    - POST, PUT and PATCH: the body must be a JSON object without odd
      strings (:func:`decode_json_body`); it is left in
      ``environ[JSON_BODY]`` for the controllers.  A PATCH without a body
      goes on to routing untouched: where PATCH is no route, a 405.
    - Any other method but GET with a JSON body: deep nesting and odd
      strings are refused; a body that is not JSON is left alone, as pecan
      leaves it.
    """

    METHODS = frozenset(['POST', 'PUT', 'PATCH'])
    # the content types whose body pecan decodes as JSON
    PECAN_JSON = frozenset(['application/json', 'application/javascript'])

    def __init__(self, app, max_bytes):
        self.app = app
        self.max_bytes = max_bytes

    def __call__(self, environ, start_response):
        method = environ.get('REQUEST_METHOD')
        try:
            if method in self.METHODS:
                req = webob.Request(environ)
                if method != 'PATCH' or req.body:
                    environ[JSON_BODY] = decode_json_body(req, self.max_bytes)
            elif method != 'GET':
                self._check_other(webob.Request(environ))
        except exceptions.MalformedRequestBody as exc:
            return errors.from_exception(
                exc, environ.get(microversion.ENVIRON_KEY))(
                environ, start_response)
        return self.app(environ, start_response)

    @classmethod
    def _check_other(cls, req):
        if req.content_type not in cls.PECAN_JSON or not req.body:
            return
        try:
            data = json.loads(req.body.decode('utf-8'))
        except RecursionError:
            raise exceptions.MalformedRequestBody(
                reason='the body is nested too deeply (more than %d levels)'
                       % MAX_DEPTH)
        except ValueError:
            return  # not JSON (or not UTF-8): pecan ignores it as well
        check_json_value(data)


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
