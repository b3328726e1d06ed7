"""Django for the dashboard tests only.

The rest of climate/tests/unit runs in the same processes (xdist), so
Django is set up here, when this package is collected, from the package's
own settings; the variable naming them is taken out of the environment
again once the settings are read, so that no process a later test starts
inherits it.  Horizon is an extra (``climate[dashboard]``): without it the
package is skipped.
"""

import importlib.util
import os

SETTINGS = 'climate.tests.unit.dashboard.settings'


def _setup_django():
    import django
    from django.conf import settings
    from django.test import utils as test_utils

    if settings.configured:
        return
    previous = os.environ.get('DJANGO_SETTINGS_MODULE')
    os.environ['DJANGO_SETTINGS_MODULE'] = SETTINGS
    try:
        django.setup()
        # what Django's own test runner does first: the test client's
        # host allowed, rendered templates recorded for the assertions
        test_utils.setup_test_environment()
    finally:
        if previous is None:
            del os.environ['DJANGO_SETTINGS_MODULE']
        else:
            os.environ['DJANGO_SETTINGS_MODULE'] = previous


if importlib.util.find_spec('horizon') is None:  # pragma: no cover
    # the extra is not installed
    collect_ignore_glob = ['test_*.py']
else:
    _setup_django()



def pytest_configure(config):
    # the marks Horizon's test helpers put on its test cases
    for mark in ('selenium', 'plugin_test'):
        config.addinivalue_line('markers', '%s: a mark of Horizon\'s' % mark)
    # openstacksdk, which Horizon imports, warns of its own API on every
    # rendered page (thousands a run): a warning for Horizon, not for us
    for message in ('The _compute_attributes method is deprecated',
                    "The field '.*' has been deprecated"):
        config.addinivalue_line('filterwarnings', 'ignore:' + message)
