"""Console scripts (``climate-*``) and what their start-up shares."""

import sys

from oslo_log import log as logging

from climate.api import noauth
from climate.api import server

LOG = logging.getLogger(__name__)


def listening(app, conf):
    """The API server on ``[DEFAULT] host``/``port``, bound; when the
    address cannot be bound (a port taken by another process), the process
    stops with exit status 1 and one line saying so, not a traceback."""
    try:
        return server.APIServer.from_conf(app, conf)
    except server.CannotListen as exc:
        refused = str(exc)
    # (logged outside the handler: the log would repeat it with its type)
    LOG.error('%s', refused)
    sys.exit('climate: %s' % refused)


def refuse_noauth_exposed(conf):
    """Stop the process (exit status 1, the reason on stderr and in the
    log) when noauth would serve beyond loopback without
    ``[noauth] allow_remote``; see :func:`climate.api.noauth.check_exposure`.
    """
    try:
        noauth.check_exposure(conf, conf.host)
    except noauth.NoauthExposed as exc:
        LOG.critical('%s', exc)
        sys.exit('climate: %s' % exc)
