"""climate.clients.nova retries a call whose connection was reset."""

import json
import socket
import struct
import threading

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import session as ks_session
from oslo_config import cfg
import pytest

from climate.clients import nova
from climate.conf import clients as clients_conf


class ResettingServer:
    """Nova on 127.0.0.1 that resets the first ``resets`` connections (as a
    WSGI server closing a keep-alive connection as it is reused), then
    answers ``GET /os-aggregates``."""

    def __init__(self, resets):
        self.resets = resets
        self.connections = 0
        self.sock = socket.socket()
        self.sock.bind(('127.0.0.1', 0))
        self.sock.listen(8)
        self.url = 'http://127.0.0.1:%d/v2.1' % self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                conn.recv(65536)
                if self.connections <= self.resets:
                    # RST instead of FIN
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                    struct.pack('ii', 1, 0))
                    continue
                body = json.dumps({'aggregates': []}).encode()
                conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Type: '
                             b'application/json\r\nConnection: close\r\n'
                             b'Content-Length: %d\r\n\r\n%s' % (len(body),
                                                                body))

    def close(self):
        self.sock.close()


@pytest.fixture
def conf():
    conf = cfg.ConfigOpts()  # not the global one: nothing to undo
    clients_conf.register_opts(conf)
    conf([], project='climate', default_config_files=[])
    return conf


@pytest.fixture
def server():
    srv = ResettingServer(resets=1)
    yield srv
    srv.close()


def test_a_reset_connection_is_retried(conf, server):
    conf.set_override('endpoint_override', server.url, group='nova')
    client = nova.client(ks_session.Session(), conf)
    assert client.aggregates.list() == []
    assert server.connections == 2


def test_without_retries_the_reset_is_an_error(conf, server):
    conf.set_override('endpoint_override', server.url, group='nova')
    conf.set_override('connect_retries', 0, group='nova')
    client = nova.client(ks_session.Session(), conf)
    with pytest.raises(ks_exc.ConnectFailure):
        client.aggregates.list()
    assert server.connections == 1
