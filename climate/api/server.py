"""The multi-threaded WSGI server climate-api and climate-all run."""

from cheroot import wsgi
from oslo_log import log as logging

LOG = logging.getLogger(__name__)


class APIServer:
    """cheroot's thread-pool HTTP/1.1 server around the API application."""

    def __init__(self, app, host, port, threads):
        self._server = wsgi.Server((host, port), app, numthreads=threads,
                                   server_name='climate-api')
        self._server.prepare()
        self.host, self.port = self._server.bind_addr[:2]

    def serve_forever(self):
        LOG.info('climate-api listening on http://%s:%s', self.host,
                 self.port)
        self._server.serve()

    def stop(self):
        self._server.stop()
