"""Gabbi fixtures: a whole Climate (API + manager + SQLite) per YAML file.

Each YAML file names ``APIFixture`` in its ``fixtures:``; the fixture starts
a fresh :class:`climate.tests.fixtures.ClimateEnvironment` (new database,
new in-process transport, new manager) and stops it when the file is done.

:class:`PowerRecords`, named after ``APIFixture``, adds hosts with the
power planner's records (which no route writes).

Gabbi asks for the WSGI application when it *builds* the tests, long before
any fixture runs, so :func:`setup_app` returns a small proxy that forwards
each request to the application of the environment running at that time.

:class:`RelativeDates` is run by gabbi before every request (an inner
fixture) and sets environment variables holding dates relative to the
current time, for YAML to use as ``$ENVIRON['CLIMATE_IN_1H']``:

``CLIMATE_IN_8S``, ``CLIMATE_IN_1H``, ``CLIMATE_IN_2H``, ``CLIMATE_IN_3H``
    ISO 8601 UTC without offset, 3 seconds / 1, 2, 3 hours from now.
``CLIMATE_IN_1H_BLAZAR``
    The same hour as ``CLIMATE_IN_1H`` in Blazar's ``YYYY-MM-DD HH:MM``.
``CLIMATE_HOUR_AGO``
    ISO 8601 UTC, an hour ago.
``CLIMATE_IN_1H_DAY``, ``CLIMATE_IN_1H_NEXT_DAY``
    The weekday of ``CLIMATE_IN_1H`` (UTC) and the next, as BYDAY spells
    them (``MO``...).
"""

import datetime
import os

from gabbi import fixture

from climate import context
from climate import dates
from climate.db import models
from climate.db import power as db_power
from climate.tests import fixtures as climate_fixtures

_ENV = None


def current():
    """The environment of the running YAML file."""
    if _ENV is None:
        raise RuntimeError('no APIFixture is running')
    return _ENV


def _application(environ, start_response):
    return current().app(environ, start_response)


def setup_app():
    """Gabbi's ``intercept``: the API of whichever environment runs now."""
    return _application


class APIFixture(fixture.GabbiFixture):
    """API, manager and a new SQLite database, for one YAML file."""

    def start_fixture(self):
        global _ENV
        self.env = climate_fixtures.ClimateEnvironment()
        self.env.start()
        _ENV = self.env

    def stop_fixture(self):
        global _ENV
        _ENV = None
        self.env.stop()


class PowerRecords(fixture.GabbiFixture):
    """After :class:`APIFixture`: two hosts the power planner powered off
    (no route writes its records): ``compute-1`` off for the last 2 hours,
    its idle draw read at 212.5 W just before, ``compute-2`` off for the
    last hour, never read (counted at ``[power] idle_watts``)."""

    READINGS = (('compute-1', 2, 212.5), ('compute-2', 1, None))

    def start_fixture(self):
        env = current()
        ctx = context.admin_context()
        now = models.now()
        for name, hours, watts in self.READINGS:
            resp = env.request('POST', '/v1/os-hosts', persona='admin',
                               body={'name': name, 'vcpus': 4,
                                     'memory_mb': 4096, 'local_gb': 40})
            if resp.status_int != 201:
                raise RuntimeError(resp.text)
            host_id = int(resp.json['host']['id'])
            off_at = now - datetime.timedelta(hours=hours)
            db_power.set_state(ctx, host_id, db_power.ON,
                               off_at - datetime.timedelta(hours=1))
            db_power.set_state(ctx, host_id, db_power.OFF, off_at,
                               reading=watts and db_power.Reading(
                                   watts, off_at))

    def stop_fixture(self):
        pass


DATE_VARIABLES = {
    'CLIMATE_IN_8S': 8,
    'CLIMATE_IN_1H': 3600,
    'CLIMATE_IN_2H': 2 * 3600,
    'CLIMATE_IN_3H': 3 * 3600,
    'CLIMATE_HOUR_AGO': -3600,
    # a day or two later (recurring leases)
    'CLIMATE_IN_2H_PLUS_1D': 86400 + 2 * 3600,
    'CLIMATE_IN_3H_PLUS_1D': 86400 + 3 * 3600,
    'CLIMATE_IN_1H_PLUS_2D': 2 * 86400 + 3600,
    'CLIMATE_IN_2H_PLUS_2D': 2 * 86400 + 2 * 3600,
}


DAYS = ('MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU')


class RelativeDates:
    """Inner fixture: refresh the ``CLIMATE_*`` date variables."""

    def setUp(self):
        now = dates.utcnow()
        for name, seconds in DATE_VARIABLES.items():
            os.environ[name] = climate_fixtures.iso(seconds, now)
        os.environ['CLIMATE_IN_1H_BLAZAR'] = (
            os.environ['CLIMATE_IN_1H'][:16].replace('T', ' '))
        # the weekday of CLIMATE_IN_1H (UTC) and the next one, as RRULE's
        # BYDAY spells them
        weekday = (now + datetime.timedelta(hours=1)).weekday()
        os.environ['CLIMATE_IN_1H_DAY'] = DAYS[weekday]
        os.environ['CLIMATE_IN_1H_NEXT_DAY'] = DAYS[(weekday + 1) % 7]

    def cleanUp(self):
        pass
