"""Process start-up shared by every climate-* command."""

import gc
import signal
import sys
import threading

from oslo_config import cfg
from oslo_log import log as logging

from climate import conf as climate_conf  # noqa: F401 - registers options
from climate.conf import opts
from climate.db import api as db_api
from climate import version

CONF = cfg.CONF
LOG = logging.getLogger(__name__)


def prepare(argv=None, default_config_files=None):
    """Parse the command line and config files, set up logging and the DB."""
    logging.register_options(CONF)
    opts.set_defaults(CONF)
    CONF(sys.argv[1:] if argv is None else argv, project='climate',
         version=version.version_string(),
         default_config_files=default_config_files)
    logging.setup(CONF, 'climate')
    db_api.quiet_aborted_rollbacks()
    db_api.configure()


def wait_for_signal():
    """Block until SIGTERM or SIGINT."""
    # What start-up loaded (modules, config, ORM mappers...) lives as long
    # as the process: keep it out of the cyclic GC's full collections, which
    # otherwise walk all of it and pause a request for ~60 ms every ~15
    # pages of leases.
    gc.freeze()
    stop = threading.Event()

    def handler(signum, _frame):
        LOG.info('Signal %s received, stopping', signum)
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    while not stop.wait(3600):
        pass
