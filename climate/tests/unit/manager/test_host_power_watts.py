"""The energy figures of ``climate.manager.host_power`` count each host at
its measured idle draw where its switch gave one, else at ``[power]
idle_watts``, reading every host's in a fixed number of statements."""

import datetime
import importlib

from oslo_config import cfg
import pytest
import sqlalchemy as sa

from climate import context
from climate import dates
from climate.db import api as db_api
from climate.db import power as db_power
from climate.manager import host_power
from climate.tests import schema
from climate.tests.unit.db import power_checks

CONF = cfg.CONF
NOW = datetime.datetime(2030, 1, 10, 12, 0, 0)
HOUR = datetime.timedelta(hours=1)
PERIOD = {'start': '2030-01-10 00:00', 'end': '2030-01-11 00:00',
          'step': '12h'}


@pytest.fixture
def ctx(tmp_path, monkeypatch):
    importlib.import_module('climate.conf')  # registers the options
    CONF([], project='climate', default_config_files=[])
    schema.head_database(tmp_path / 'c.sqlite')
    # not the default: a figure at the default would pass by chance
    CONF.set_override('idle_watts', 120.0, group='power')
    monkeypatch.setattr(dates, 'utcnow', lambda: NOW)
    yield context.admin_context()
    CONF.clear_override('idle_watts', group='power')
    db_api.get_engine().dispose()


def off_for(ctx, name, hours, watts=None):
    """A host off for the ``hours`` before now, its idle draw read at
    ``watts`` (None: never read)."""
    host = power_checks.add_host(ctx, name)
    began = NOW - hours * HOUR
    db_power.set_state(ctx, host, db_power.ON, began - HOUR)
    db_power.set_state(ctx, host, db_power.OFF, began, reading=None if
                       watts is None else db_power.Reading(watts, began))
    return host


def test_the_report_counts_each_host_at_its_measured_watts(ctx):
    measured = off_for(ctx, 'h1', 4, watts=250.0)
    configured = off_for(ctx, 'h2', 2)
    report = host_power.energy_report(ctx, dict(PERIOD))
    assert report['hours_off'] == 6.0
    assert report['kwh_saved'] == round((4 * 250.0 + 2 * 120.0) / 1000, 3)
    # the report's own figure stays the configured one
    assert report['idle_watts'] == 120.0
    assert [(h['host_id'], h['idle_watts'], h['watts_source'],
             h['kwh_saved']) for h in report['hosts']] == [
        (str(measured), 250.0, 'measured', 1.0),
        (str(configured), 120.0, 'configured', 0.24)]
    assert report['steps'][0]['kwh_saved'] == report['kwh_saved']


def test_a_host_shows_its_reading_and_counts_it(ctx):
    host = off_for(ctx, 'h1', 3, watts=180.5)
    power = host_power.power_get(ctx, str(host), {})
    assert (power['idle_watts'], power['watts_at']) == (
        180.5, dates.format(NOW - 3 * HOUR))
    assert power['energy'] == {'hours_off': 3.0, 'idle_watts': 180.5,
                               'kwh_saved': round(3 * 180.5 / 1000, 3),
                               'watts_source': 'measured'}


def test_a_host_never_read_counts_the_configured_watts(ctx):
    host = off_for(ctx, 'h1', 3)
    power = host_power.power_get(ctx, str(host), {})
    assert (power['idle_watts'], power['watts_at']) == (None, None)
    assert power['energy'] == {'hours_off': 3.0, 'idle_watts': 120.0,
                               'kwh_saved': 0.36,
                               'watts_source': 'configured'}
    listed, = host_power.power_list(ctx)
    assert (listed['idle_watts'], listed['watts_at']) == (None, None)


def _statements_of_a_report(ctx):
    seen = []

    def count(conn, cursor, statement, *args):
        if statement.startswith('SELECT'):
            seen.append(statement)

    engine = db_api.get_engine()
    sa.event.listen(engine, 'before_cursor_execute', count)
    try:
        host_power.energy_report(ctx, dict(PERIOD))
    finally:
        sa.event.remove(engine, 'before_cursor_execute', count)
    return len(seen)


def test_the_report_reads_every_hosts_watts_at_once(ctx):
    off_for(ctx, 'h0', 1, watts=100.0)
    few = _statements_of_a_report(ctx)
    for i in range(1, 9):
        off_for(ctx, 'h%d' % i, 1 + i % 3, watts=None if i % 2 else 90.0 + i)
    assert _statements_of_a_report(ctx) == few
