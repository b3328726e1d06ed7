"""climate-api: the REST API in a multi-threaded WSGI server."""

import threading

from oslo_config import cfg

from climate.api import app
from climate import cmd
from climate import rpc
from climate import service

CONF = cfg.CONF
#: Seconds a stop waits for the message bus connections to close.
STOP_TIMEOUT = 2


def main():
    service.prepare()
    cmd.refuse_noauth_exposed(CONF)
    rpc.init()
    api = cmd.listening(app.setup_app(), CONF)
    thread = threading.Thread(target=api.serve_forever, daemon=True)
    thread.start()
    try:
        service.wait_for_signal()
    finally:
        api.stop()
        rpc.cleanup(timeout=STOP_TIMEOUT)
