"""WSGI entry point: ``climate.wsgi.api:application`` (uWSGI, mod_wsgi,
gunicorn).  Configuration comes from the usual files, or from
``OS_CLIMATE_CONFIG_FILES`` (semicolon-separated paths).

The application is built at its first request.  Under ``auth_strategy =
noauth`` it refuses to be built unless ``[noauth] allow_remote = true``:
the address the web server listens on is not visible from here, so
Climate cannot tell loopback from the world (see ``climate.api.noauth``).
Every request then fails, and the web server's log says why.
"""

import os

from oslo_config import cfg
from oslo_log import log as logging

from climate.api import app
from climate.api import noauth
from climate import rpc
from climate import service

LOG = logging.getLogger(__name__)

_application = None
_refusal = None


def init_application():
    """The API application, built once.

    :raises climate.api.noauth.NoauthExposed: noauth without
        ``[noauth] allow_remote`` (raised again at every later call).
    """
    global _application, _refusal
    if _refusal is not None:
        raise _refusal
    if _application is None:
        files = os.environ.get('OS_CLIMATE_CONFIG_FILES')
        service.prepare(argv=[], default_config_files=files.split(';')
                        if files else None)
        try:
            noauth.check_exposure(cfg.CONF, host=None)
        except noauth.NoauthExposed as exc:
            LOG.critical('%s', exc)
            _refusal = exc
            raise
        rpc.init()
        _application = app.setup_app()
    return _application


def application(environ, start_response):
    return init_application()(environ, start_response)
