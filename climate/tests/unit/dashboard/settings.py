"""A Horizon for the dashboard tests: Horizon's test settings, the Project
and Admin dashboards, and Climate's panels (``climate.dashboard.enabled``).

Loaded only by this package's conftest, through DJANGO_SETTINGS_MODULE.
"""

import copy
import os
import socket

# Horizon's test settings lower the process-wide socket timeout to one
# second; the other unit tests share this process, so it is put back.
_TIMEOUT = socket.getdefaulttimeout()
from horizon.test import settings as horizon_test_settings  # noqa: E402
socket.setdefaulttimeout(_TIMEOUT)
from openstack_dashboard import defaults  # noqa: E402
from openstack_dashboard import exceptions  # noqa: E402
from openstack_dashboard import theme_settings  # noqa: E402
from openstack_dashboard.utils import settings as settings_utils  # noqa

from climate.dashboard import enabled as climate_enabled  # noqa: E402
from climate.tests.unit.dashboard import dashboards  # noqa: E402

import openstack_dashboard  # noqa: E402


def _settings_of(module):
    """The settings (upper-case names) of ``module``, copied."""
    return {name: copy.deepcopy(getattr(module, name))
            for name in dir(module) if name.isupper()}


# Horizon's test settings, then the dashboard's defaults, as Horizon's own
# tests have them
globals().update(_settings_of(horizon_test_settings))
globals().update(_settings_of(defaults))

DASHBOARD_ROOT = os.path.dirname(os.path.abspath(openstack_dashboard.__file__))

WEBROOT = '/'
LOGIN_URL = '/auth/login/'
LOGOUT_URL = '/auth/logout/'
LOGIN_REDIRECT_URL = '/'
MEDIA_URL = '/media/'
STATIC_URL = '/static/'
SECRET_KEY = 'climate-dashboard-tests-only'
ROOT_URLCONF = 'openstack_dashboard.test.urls'
# Django's logging setup would reconfigure the loggers of the whole
# process (the other unit tests' included)
LOGGING_CONFIG = None
DATABASES = {'default': {'ENGINE': 'django.db.backends.sqlite3',
                         'NAME': ':memory:'}}

TEMPLATES = copy.deepcopy(horizon_test_settings.TEMPLATES)
TEMPLATES[0]['DIRS'] = [os.path.join(DASHBOARD_ROOT, 'test', 'templates'),
                        os.path.join(DASHBOARD_ROOT, 'templates')]
TEMPLATES[0]['OPTIONS']['context_processors'].append(
    'openstack_dashboard.context_processors.openstack')
TEMPLATES[0]['OPTIONS']['debug'] = True

COMPRESS_ENABLED = False
COMPRESS_OFFLINE = False
AVAILABLE_THEMES, SELECTABLE_THEMES, DEFAULT_THEME = \
    theme_settings.get_available_themes(defaults.AVAILABLE_THEMES, 'default',
                                        None)

INSTALLED_APPS = [
    'django.contrib.contenttypes',
    'django.contrib.auth',
    'django.contrib.sessions',
    'django.contrib.staticfiles',
    'django.contrib.messages',
    'django.contrib.humanize',
    'openstack_auth',
    'compressor',
    'horizon',
    'openstack_dashboard',
]
AUTHENTICATION_BACKENDS = ('openstack_auth.backend.KeystoneBackend',)
HORIZON_CONFIG = {
    'user_home': None,
    'help_url': 'https://docs.openstack.org/',
    'exceptions': {'recoverable': exceptions.RECOVERABLE,
                   'not_found': exceptions.NOT_FOUND,
                   'unauthorized': exceptions.UNAUTHORIZED},
    'angular_modules': [],
    'js_files': [],
}
settings_utils.update_dashboards([dashboards, climate_enabled],
                                 HORIZON_CONFIG, INSTALLED_APPS)
# the themes' and the angular templates' files, which every page lists
settings_utils.find_static_files(HORIZON_CONFIG, AVAILABLE_THEMES,
                                 defaults.THEME_COLLECTION_DIR,
                                 DASHBOARD_ROOT)

OPENSTACK_KEYSTONE_URL = 'http://localhost/identity/v3'
# no policy file for the reservation scope: Horizon allows its rules, the
# (mocked or real) API decides
POLICY_FILES_PATH = os.path.join(DASHBOARD_ROOT, 'conf')
POLICY_FILES = {'identity': 'keystone_policy.yaml',
                'compute': 'nova_policy.yaml'}
TEST_GLOBAL_MOCKS_ON_PANELS = {}
