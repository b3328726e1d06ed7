"""A TCP forwarder on 127.0.0.1 that a test can cut and restore.

It stands between Climate's processes and a service (MariaDB, PostgreSQL,
RabbitMQ) to make that service vanish on demand:

- :meth:`TCPProxy.cut` closes every forwarded connection at once (both
  ends, with a reset) and, until :meth:`TCPProxy.restore`, treats new
  connections according to ``mode``: ``'refuse'`` resets each at once (a
  stopped server), ``'blackhole'`` accepts it and never answers (a network
  partition), holding it until the restore closes it;
- :meth:`TCPProxy.restore` forwards new connections again.

Two threads per forwarded connection, one per direction; everything is
closed by :meth:`TCPProxy.stop`.
"""

import select
import socket
import struct
import threading

REFUSE = 'refuse'
BLACKHOLE = 'blackhole'


def _reset(sock):
    """Drop a connection now, as when a server dies.

    ``shutdown`` first: a pump thread blocked in ``recv`` on the socket
    keeps it alive through a mere ``close`` (Linux neither wakes the thread
    nor tells the peer), and the peer would wait forever.  No lingering:
    what is left unsent is discarded.
    """
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                        struct.pack('ii', 1, 0))
    except OSError:
        pass
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


class TCPProxy:
    """Forwards ``127.0.0.1:<port>`` to ``target``; see the module doc."""

    def __init__(self, target_host, target_port, host='127.0.0.1'):
        self.target = (target_host, target_port)
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((host, 0))
        self._listener.listen(128)
        self.host, self.port = self._listener.getsockname()
        self._lock = threading.Lock()
        self._pairs = []        # (client, upstream) being forwarded
        self._held = []         # black-holed clients
        self._mode = None       # None: forwarding
        self._stopping = threading.Event()
        self._accepted = 0
        self._thread = threading.Thread(target=self._accept_loop,
                                        daemon=True, name='tcpproxy-accept')

    # -- control ---------------------------------------------------------

    def start(self):
        self._thread.start()
        return self

    def cut(self, mode=REFUSE):
        """Drop every connection; refuse or black-hole new ones."""
        assert mode in (REFUSE, BLACKHOLE), mode
        with self._lock:
            self._mode = mode
            pairs, self._pairs = self._pairs, []
        for client, upstream in pairs:
            _reset(client)
            _reset(upstream)
        return len(pairs)

    def restore(self):
        """Forward new connections again (black-holed ones are closed)."""
        with self._lock:
            self._mode = None
            held, self._held = self._held, []
        for client in held:
            _reset(client)

    def stop(self):
        self._stopping.set()
        self.cut()
        self.restore()
        try:
            self._listener.close()
        except OSError:
            pass
        self._thread.join(5)

    @property
    def open_connections(self):
        with self._lock:
            return len(self._pairs)

    # -- forwarding ------------------------------------------------------

    def _accept_loop(self):
        while not self._stopping.is_set():
            try:
                ready, _, _ = select.select([self._listener], [], [], 0.2)
            except (OSError, ValueError):
                return
            if not ready:
                continue
            try:
                client, _ = self._listener.accept()
            except OSError:
                continue
            self._accepted += 1
            with self._lock:
                mode = self._mode
                if mode == BLACKHOLE:
                    self._held.append(client)
                    continue
            if mode == REFUSE:
                _reset(client)
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                _reset(client)
                continue
            with self._lock:
                if self._mode is not None:  # cut meanwhile
                    _reset(client)
                    _reset(upstream)
                    continue
                self._pairs.append((client, upstream))
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(src, dst),
                                 daemon=True, name='tcpproxy-pump').start()

    def _pump(self, src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        # one side is done: close both (a cut closed them already)
        with self._lock:
            self._pairs = [p for p in self._pairs
                           if src not in p and dst not in p]
        for sock in (src, dst):
            _reset(sock)
