"""Horizon (the ``horizon`` package from PyPI) served on 127.0.0.1 with
Climate's panels, for the browser tests (``test_dashboard_browser.py``).

:func:`write_settings` writes a Django settings module into a directory
of the test's (nothing of this machine is committed): Horizon's own
``openstack_dashboard.settings`` with a local settings module of ours
(the cloud's Keystone, a secret key, a session in Django's local memory
cache, static files collected under that directory), Climate's
``climate/dashboard/enabled`` files added to Horizon's enabled ones.
:class:`Horizon` runs Django's server on it (``runserver --insecure``:
it serves the static files without ``collectstatic``), in a process
group of its own, stopped by its PID.
"""

import os
import pathlib
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

SETTINGS_MODULE = 'climate_it_horizon_settings'

_SETTINGS = '''\
"""Horizon for Climate's browser tests (written by horizon_site.py)."""
import sys
import types

# Horizon's settings import ``local.local_settings``: ours, given before
local = types.ModuleType('local')
local_settings = types.ModuleType('local.local_settings')
local_settings.__dict__.update(
    SECRET_KEY={secret!r},
    DEBUG=False,
    ALLOWED_HOSTS=['127.0.0.1', 'localhost'],
    OPENSTACK_KEYSTONE_URL={auth_url!r},
    OPENSTACK_KEYSTONE_DEFAULT_ROLE='member',
    OPENSTACK_ENDPOINT_TYPE='publicURL',
    SESSION_ENGINE='django.contrib.sessions.backends.cache',
    # one process: the sessions in its memory (Django's default of 300
    # entries culls a session in the middle of a page: the compressor
    # keeps its own entries there too)
    CACHES={{'default': {{
        'BACKEND': 'django.core.cache.backends.locmem.LocMemCache',
        'OPTIONS': {{'MAX_ENTRIES': 100000}}}}}},
    STATIC_ROOT={static_root!r},
    MEDIA_ROOT={media_root!r},
    LOCAL_PATH={local_path!r},
    COMPRESS_OFFLINE=False,
    TIME_ZONE='UTC',
    # the test's own session: no expiry in the middle of a run
    SESSION_TIMEOUT=3600,
    # the page size of the Leases table (the API's limit per page)
    API_RESULT_PAGE_SIZE=20,
    LOGGING={{'version': 1, 'disable_existing_loggers': False,
             'handlers': {{'console': {{'class': 'logging.StreamHandler'}}}},
             'root': {{'handlers': ['console'], 'level': 'INFO'}}}},
)
local.local_settings = local_settings
sys.modules['local'] = local
sys.modules['local.local_settings'] = local_settings

# Climate's enabled files after Horizon's own
from climate.dashboard import enabled as climate_enabled  # noqa: E402
from openstack_dashboard.utils import settings as _utils  # noqa: E402

_update = _utils.update_dashboards


def _with_climate(modules, horizon_config, installed_apps):
    return _update(list(modules) + [climate_enabled], horizon_config,
                   installed_apps)


_utils.update_dashboards = _with_climate
try:
    from openstack_dashboard.settings import *  # noqa: F401,F403,E402
finally:
    _utils.update_dashboards = _update
'''


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def write_settings(directory, auth_url):
    """Write the settings module into ``directory``; returns its path."""
    directory = pathlib.Path(directory)
    for sub in ('static', 'media', 'local'):
        (directory / sub).mkdir(parents=True, exist_ok=True)
    path = directory / (SETTINGS_MODULE + '.py')
    path.write_text(_SETTINGS.format(
        secret=os.urandom(24).hex(), auth_url=auth_url,
        static_root=str(directory / 'static'),
        media_root=str(directory / 'media'),
        local_path=str(directory / 'local')))
    return path


class Horizon:
    """Django's server running Horizon with Climate's panels."""

    def __init__(self, directory, auth_url, port=None):
        self.directory = pathlib.Path(directory)
        self.port = port or free_port()
        self.url = 'http://127.0.0.1:%d' % self.port
        self.log_path = self.directory / 'horizon.log'
        write_settings(self.directory, auth_url)
        self.proc = None

    def env(self):
        env = dict(os.environ)
        env['DJANGO_SETTINGS_MODULE'] = SETTINGS_MODULE
        env['PYTHONPATH'] = os.pathsep.join(
            [str(self.directory)] + [p for p in sys.path if p])
        return env

    def manage(self, *args, timeout=300):
        """``django-admin ARGS`` with these settings; the completed process."""
        return subprocess.run(
            [sys.executable, '-m', 'django', *args], env=self.env(),
            stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=timeout, cwd=self.directory)

    def start(self, timeout=120):
        with open(self.log_path, 'ab') as log:
            self.proc = subprocess.Popen(
                [sys.executable, '-m', 'django', 'runserver', '--insecure',
                 '--noreload', '127.0.0.1:%d' % self.port],
                env=self.env(), cwd=self.directory, stdin=subprocess.DEVNULL,
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError('Horizon exited (status %s):\n%s' % (
                    self.proc.returncode, self.log_tail()))
            try:
                urllib.request.urlopen(self.url + '/auth/login/',
                                       timeout=30).close()
                return
            except urllib.error.HTTPError as exc:
                raise RuntimeError('Horizon answers %s on its login page:\n%s'
                                   % (exc.code, self.log_tail()))
            except OSError:
                time.sleep(0.5)
        raise RuntimeError('Horizon did not answer on %s within %d s:\n%s' % (
            self.url, timeout, self.log_tail()))

    def log_tail(self, lines=60):
        if not self.log_path.exists():
            return ''
        text = self.log_path.read_text(errors='replace')
        return '\n'.join(text.rstrip().splitlines()[-lines:])

    def stop(self, grace=10):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.proc = None
