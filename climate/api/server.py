"""The multi-threaded WSGI server climate-api and climate-all run."""

from cheroot import wsgi
from oslo_log import log as logging

LOG = logging.getLogger(__name__)
#: Idle keep-alive connections the API keeps open.
KEEP_ALIVE_CONNECTIONS = 1000


class APIServer:
    """cheroot's thread-pool HTTP/1.1 server around the API application."""

    def __init__(self, app, host, port, threads):
        self._server = wsgi.Server((host, port), app, numthreads=threads,
                                   server_name='climate-api')
        # cheroot keeps at most 10 idle keep-alive connections by default
        # and drops the others right after answering on them, so a client
        # with more parallel connections sends its next request into a
        # closed socket (ConnectionResetError).  Idle connections cost a
        # socket in a selector, not a thread, and expire after ``timeout``.
        self._server.keep_alive_conn_limit = KEEP_ALIVE_CONNECTIONS
        self._server.prepare()
        self.host, self.port = self._server.bind_addr[:2]

    def serve_forever(self):
        LOG.info('climate-api listening on http://%s:%s', self.host,
                 self.port)
        self._server.serve()

    def stop(self):
        self._server.stop()
