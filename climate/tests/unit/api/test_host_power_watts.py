"""The hosts' measured idle watts through the in-process API: shown from
microversion 1.13 (a host's ``idle_watts`` and ``watts_at``, the source
of the watts its figures count), left out at 1.12, whose answers keep
their keys while their figures count the measured watts."""

import datetime

from oslo_config import cfg
import pytest

from climate import context
from climate import dates
from climate.db import power as db_power
from climate.tests import fixtures

CONF = cfg.CONF
NOW = datetime.datetime(2030, 1, 10, 12, 0, 0)
HOUR = datetime.timedelta(hours=1)
READ_AT = NOW - 4 * HOUR
#: The keys of 1.12's answers, as they were before 1.13.
STATE_KEYS_1_12 = {'host_id', 'hypervisor_hostname', 'state', 'since',
                   'boot_seconds', 'need_at', 'last_error', 'error_at'}
SHOW_KEYS_1_12 = STATE_KEYS_1_12 | {'start', 'end', 'history', 'energy'}
ENERGY_KEYS_1_12 = {'hours_off', 'kwh_saved', 'idle_watts'}
REPORT_HOST_KEYS_1_12 = {'host_id', 'hypervisor_hostname', 'hours_off',
                         'kwh_saved'}
ENERGY_PATH = '/v1/usage/energy?start=2030-01-10 00:00&end=2030-01-11 00:00'


@pytest.fixture(scope='module')
def env():
    with fixtures.ClimateEnvironment() as environment:
        for name in ('h1', 'h2'):
            resp = environment.request(
                'POST', '/v1/os-hosts', persona='admin',
                body={'name': name, 'vcpus': 4, 'memory_mb': 4096,
                      'local_gb': 40})
            assert resp.status_int == 201, resp.text
        ctx = context.admin_context()
        # h1 read at 212.5 W before its power off 4 h ago; h2 off 2 h,
        # never read
        db_power.set_state(ctx, 1, db_power.ON, NOW - 10 * HOUR)
        db_power.set_state(ctx, 1, db_power.OFF, READ_AT,
                           reading=db_power.Reading(212.5, READ_AT))
        db_power.set_state(ctx, 2, db_power.ON, NOW - 10 * HOUR)
        db_power.set_state(ctx, 2, db_power.OFF, NOW - 2 * HOUR)
        yield environment


@pytest.fixture(autouse=True)
def now(monkeypatch):
    # the manager answers in this process: its clock is this one
    monkeypatch.setattr(dates, 'utcnow', lambda: NOW)


def get(env, path, version):
    resp = env.request('GET', path, persona='admin', version=version)
    assert resp.status_int == 200, resp.text
    return resp.json


def kwh(hours, watts):
    return round(hours * watts / 1000, 3)


def test_the_list_shows_the_readings_from_1_13(env):
    h1, h2 = get(env, '/v1/os-hosts/power', '1.13')['hosts_power']
    assert set(h1) == STATE_KEYS_1_12 | {'idle_watts', 'watts_at'}
    assert (h1['idle_watts'], h1['watts_at']) == (
        212.5, '2030-01-10T08:00:00.000000')
    assert (h2['idle_watts'], h2['watts_at']) == (None, None)


def test_the_list_at_1_12_keeps_its_keys(env):
    for host in get(env, '/v1/os-hosts/power', '1.12')['hosts_power']:
        assert set(host) == STATE_KEYS_1_12


def test_a_host_at_1_13_says_its_watts_and_their_source(env):
    power = get(env, '/v1/os-hosts/1/power', '1.13')['host_power']
    assert power['idle_watts'] == 212.5
    assert power['watts_at'] == '2030-01-10T08:00:00.000000'
    assert power['energy'] == {'hours_off': 4.0, 'idle_watts': 212.5,
                               'kwh_saved': kwh(4, 212.5),
                               'watts_source': 'measured'}
    power = get(env, '/v1/os-hosts/2/power', '1.13')['host_power']
    assert power['idle_watts'] is None
    assert power['energy'] == {
        'hours_off': 2.0, 'idle_watts': CONF.power.idle_watts,
        'kwh_saved': kwh(2, CONF.power.idle_watts),
        'watts_source': 'configured'}


def test_a_host_at_1_12_keeps_its_keys_and_counts_the_reading(env):
    power = get(env, '/v1/os-hosts/1/power', '1.12')['host_power']
    assert set(power) == SHOW_KEYS_1_12
    assert set(power['energy']) == ENERGY_KEYS_1_12
    assert power['energy']['kwh_saved'] == kwh(4, 212.5)
    assert power['energy']['idle_watts'] == 212.5


def test_the_report_at_1_13_says_each_hosts_watts(env):
    energy = get(env, ENERGY_PATH, '1.13')['energy']
    configured = CONF.power.idle_watts
    assert energy['idle_watts'] == configured
    assert [(h['host_id'], h['hours_off'], h['idle_watts'],
             h['watts_source'], h['kwh_saved']) for h in energy['hosts']] \
        == sorted([('1', 4.0, 212.5, 'measured', kwh(4, 212.5)),
                   ('2', 2.0, configured, 'configured',
                    kwh(2, configured))], key=lambda h: -h[4])
    assert energy['kwh_saved'] == round(
        (4 * 212.5 + 2 * configured) / 1000, 3)


def test_the_report_at_1_12_keeps_its_keys_and_counts_the_reading(env):
    newer = get(env, ENERGY_PATH, '1.13')['energy']
    energy = get(env, ENERGY_PATH, '1.12')['energy']
    for host in energy['hosts']:
        assert set(host) == REPORT_HOST_KEYS_1_12
    assert set(energy) == set(newer)
    assert (energy['hours_off'], energy['kwh_saved']) == (
        newer['hours_off'], newer['kwh_saved'])
    assert [h['kwh_saved'] for h in energy['hosts']] == [
        h['kwh_saved'] for h in newer['hosts']]
