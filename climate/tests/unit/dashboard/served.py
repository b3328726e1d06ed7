"""Climate's API served on 127.0.0.1 for the wrapper's real calls:
its WSGI application (ClimateEnvironment: SQLite, the manager
in-process) behind ``identity.TokenIdentity``, by its own server."""

import contextlib
import threading

from climate.api import server
from climate.tests import fixtures
from climate.tests.unit.dashboard import identity


@contextlib.contextmanager
def climate(overrides=()):
    """``(env, app, url)``: the environment, the application that saw
    the tokens, and the API's URL."""
    with fixtures.ClimateEnvironment(overrides) as env:
        app = identity.TokenIdentity(env.app)
        srv = server.APIServer(app, '127.0.0.1', 0, 4)
        thread = threading.Thread(target=srv.serve_forever, daemon=True)
        thread.start()
        try:
            yield env, app, 'http://%s:%s' % (srv.host, srv.port)
        finally:
            srv.stop()
            thread.join(10)
