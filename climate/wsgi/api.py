"""WSGI entry point: ``climate.wsgi.api:application`` (uWSGI, mod_wsgi,
gunicorn).  Configuration comes from the usual files, or from
``OS_CLIMATE_CONFIG_FILES`` (semicolon-separated paths)."""

import os

from climate.api import app
from climate import rpc
from climate import service

_application = None


def init_application():
    global _application
    if _application is None:
        files = os.environ.get('OS_CLIMATE_CONFIG_FILES')
        service.prepare(argv=[], default_config_files=files.split(';')
                        if files else None)
        rpc.init()
        _application = app.setup_app()
    return _application


def application(environ, start_response):
    return init_application()(environ, start_response)
