"""The multi-threaded WSGI server climate-api and climate-all run."""

from cheroot import wsgi
from oslo_log import log as logging

LOG = logging.getLogger(__name__)
#: Idle keep-alive connections the API keeps open.
KEEP_ALIVE_CONNECTIONS = 1000
#: Listen backlog when none is configured (``[api] backlog``).
DEFAULT_BACKLOG = 4096


def body_limit_for_server(max_body):
    """cheroot's own body limit for an API whose limit is ``max_body``.

    The API reads at most ``max_body`` + 1 bytes of any body itself and
    answers 413 with a JSON error (``climate.api.middleware.InputGuard``).
    cheroot's limit is still needed: without it, cheroot reads a chunk of a
    chunked body whole, whatever size the client declares for it, before
    the application asks for a single byte.  It counts the chunked framing
    (sizes and extensions) too, so it is set higher than the API's, leaving
    the answer to the API for any ordinary body.  A Content-Length above it
    gets cheroot's own plain-text 413.
    """
    return 2 * max_body


class CannotListen(Exception):
    """The API's address cannot be bound: taken by another process, or
    not an address of this machine."""


class _Gateway(wsgi.Gateway_10):
    """cheroot's WSGI gateway, closing the connection after an answer to a
    chunked body the application did not read to its end.

    cheroot reads what is left of a body with a Content-Length before the
    next request of a kept-alive connection, but not of a chunked one: the
    rest of a refused chunked body (too large, malformed framing) would be
    parsed as the next request.
    """

    def start_response(self, status, headers, exc_info=None):
        if self.req.chunked_read and not getattr(self.req.rfile, 'closed',
                                                 True):
            self.req.close_connection = True
        return super().start_response(status, headers, exc_info)


class APIServer:
    """cheroot's thread-pool HTTP/1.1 server around the API application.

    ``max_request_body_size`` and ``max_request_header_size`` are cheroot's
    limits (0: none).  Beyond the header limit cheroot answers 414
    Request-URI Too Long (the request line alone) or 413 Request Entity Too
    Large (the headers), in plain text, and closes the connection.
    """

    def __init__(self, app, host, port, threads, max_request_body_size=0,
                 max_request_header_size=0, backlog=DEFAULT_BACKLOG):
        # cheroot listens with a backlog of 5: 20 clients connecting at
        # once overflowed it, and Linux reset some of their connections
        # (SYN cookies, "possible SYN flooding" in dmesg)
        self._server = wsgi.Server((host, port), app, numthreads=threads,
                                   server_name='climate-api',
                                   request_queue_size=backlog)
        self._server.gateway = _Gateway
        self._server.max_request_body_size = max_request_body_size
        self._server.max_request_header_size = max_request_header_size
        # cheroot keeps at most 10 idle keep-alive connections by default
        # and drops the others right after answering on them, so a client
        # with more parallel connections sends its next request into a
        # closed socket (ConnectionResetError).  Idle connections cost a
        # socket in a selector, not a thread, and expire after ``timeout``.
        self._server.keep_alive_conn_limit = KEEP_ALIVE_CONNECTIONS
        try:
            self._server.prepare()
        except OSError as exc:
            # cheroot's text ends with the socket's own error, e.g.
            # "[Errno 98] Address already in use)"
            reason = str(exc).rsplit('] ', 1)[-1].rstrip(')') or str(exc)
            raise CannotListen(
                'cannot listen on %s:%s: %s; the address is [DEFAULT] host '
                'and port of the configuration' % (host, port, reason)
            ) from None
        self.host, self.port = self._server.bind_addr[:2]

    @classmethod
    def from_conf(cls, app, conf):
        """The server ``[DEFAULT] host``/``port`` and ``[api]`` describe."""
        return cls(app, conf.host, conf.port, conf.api.threads,
                   backlog=conf.api.backlog,
                   max_request_body_size=body_limit_for_server(
                       conf.api.max_request_body_size),
                   max_request_header_size=conf.api.max_request_header_size)

    def serve_forever(self):
        LOG.info('climate-api listening on http://%s:%s', self.host,
                 self.port)
        self._server.serve()

    def stop(self):
        self._server.stop()
