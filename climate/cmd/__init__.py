"""Console scripts (``climate-*``) and what their start-up shares."""

import sys

from oslo_log import log as logging

from climate.api import noauth

LOG = logging.getLogger(__name__)


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
