"""climate-all: API and manager in one process (the embedded default).

Unless configured otherwise it uses SQLite under ``state_path``, the
in-process ``fake://`` transport and ``auth_strategy = noauth``, and
creates or upgrades its schema at start: one command, nothing else to run.
"""

import threading

from oslo_config import cfg
from oslo_log import log as logging

from climate.api import app
from climate import cmd
from climate.conf import api as api_conf
from climate.db import migration
from climate.manager import service as manager_service
from climate import rpc
from climate import service

CONF = cfg.CONF
#: Seconds a stop waits for the message bus connections to close.
STOP_TIMEOUT = 2
LOG = logging.getLogger(__name__)


def set_embedded_defaults(conf=CONF):
    rpc.register_opts(conf)
    conf.set_default('transport_url', 'fake:/')
    conf.set_default('auth_strategy', api_conf.AUTH_NOAUTH)


def main():
    set_embedded_defaults()
    service.prepare()
    cmd.refuse_noauth_exposed(CONF)
    migration.upgrade()
    rpc.init()
    # bound before the manager starts: a taken port stops the process
    # with nothing to wind down
    api = cmd.listening(app.setup_app(), CONF)
    manager = manager_service.ManagerService()
    manager.start()
    threading.Thread(target=api.serve_forever, daemon=True).start()
    LOG.info('Climate (embedded) ready on http://%s:%s, database %s',
             api.host, api.port, CONF.database.connection)
    try:
        service.wait_for_signal()
    finally:
        api.stop()
        manager.stop()
        rpc.cleanup(timeout=STOP_TIMEOUT)
