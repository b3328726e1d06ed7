"""GET /v1/os-hosts/power, /v1/os-hosts/{id}/power and /v1/usage/energy
(microversion 1.12) through the in-process API on SQLite: the states the
power planner wrote (``climate.db.power``), a host's history cut to the
period and to now, the energy its power-offs saved, the report of every
host's, and the refusals."""

import datetime

from oslo_config import cfg
import pytest

from climate import context
from climate import dates
from climate.db import power as db_power
from climate.tests import fixtures

CONF = cfg.CONF
V = '1.12'
NOW = datetime.datetime(2030, 1, 10, 12, 0, 0)
HOUR = datetime.timedelta(hours=1)


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
        # h1: on, off for 3 h, waking, then on with a boot measured
        db_power.set_state(ctx, 1, db_power.ON, NOW - 10 * HOUR)
        db_power.set_state(ctx, 1, db_power.OFF, NOW - 6 * HOUR)
        db_power.set_state(ctx, 1, db_power.WAKING, NOW - 3 * HOUR,
                           need_at=NOW - 2 * HOUR)
        db_power.set_state(ctx, 1, db_power.ON, NOW - 3 * HOUR + 400 * (
            HOUR / 3600), boot_seconds=400)
        db_power.set_state(ctx, 1, db_power.OFF, NOW - HOUR)
        db_power.record_error(ctx, 1, 'BMC unreachable', NOW - HOUR / 2)
        yield environment


@pytest.fixture(autouse=True)
def now(monkeypatch):
    # the manager answers in this process: its clock is this one
    monkeypatch.setattr(dates, 'utcnow', lambda: NOW)


def get(env, path, persona='admin', version=V):
    return env.request('GET', path, persona=persona, version=version)


def test_the_list_shows_every_host_and_what_the_planner_knows(env):
    resp = get(env, '/v1/os-hosts/power')
    assert resp.status_int == 200, resp.text
    h1, h2 = resp.json['hosts_power']
    assert h1 == {
        'host_id': '1', 'hypervisor_hostname': 'h1', 'state': 'off',
        'since': '2030-01-10T11:00:00.000000', 'boot_seconds': 400,
        'need_at': None, 'last_error': 'BMC unreachable',
        'error_at': '2030-01-10T11:30:00.000000'}
    # never seen by the planner (it is off by default)
    assert h2 == {'host_id': '2', 'hypervisor_hostname': 'h2',
                  'state': 'unknown', 'since': None, 'boot_seconds': None,
                  'need_at': None, 'last_error': None, 'error_at': None}


def test_a_host_shows_its_history_cut_to_the_period_and_to_now(env):
    resp = get(env, '/v1/os-hosts/1/power?start=2030-01-10 04:00'
                    '&end=2030-01-11 00:00')
    assert resp.status_int == 200, resp.text
    power = resp.json['host_power']
    assert power['state'] == 'off'
    assert (power['start'], power['end']) == (
        '2030-01-10T04:00:00.000000', '2030-01-11T00:00:00.000000')
    assert [(h['state'], h['start'][11:19], h['end'][11:19])
            for h in power['history']] == [
        ('on', '04:00:00', '06:00:00'),
        ('off', '06:00:00', '09:00:00'),
        ('waking', '09:00:00', '09:06:40'),
        ('on', '09:06:40', '11:00:00'),
        # open: cut to now, the future has no history
        ('off', '11:00:00', '12:00:00')]
    assert power['energy'] == {
        'hours_off': 4.0, 'idle_watts': CONF.power.idle_watts,
        'kwh_saved': round(4.0 * CONF.power.idle_watts / 1000, 3)}


def test_the_period_defaults_to_the_last_seven_days(env):
    power = get(env, '/v1/os-hosts/1/power').json['host_power']
    assert (power['start'], power['end']) == (
        '2030-01-03T12:00:00.000000', '2030-01-10T12:00:00.000000')
    assert [h['state'] for h in power['history']] == [
        'on', 'off', 'waking', 'on', 'off']
    assert power['history'][0]['start'] == '2030-01-10T02:00:00.000000'


def test_a_host_never_planned_has_no_history(env):
    power = get(env, '/v1/os-hosts/2/power').json['host_power']
    assert power['state'] == 'unknown'
    assert power['history'] == []
    assert power['energy']['hours_off'] == 0


@pytest.mark.parametrize('path,status,words', [
    ('/v1/os-hosts/9/power', 404, "Object with {'host_id': '9'} not found"),
    ('/v1/os-hosts/x/power', 404, "Object with {'host_id': 'x'} not found"),
    ('/v1/os-hosts/1/power?start=yesterday', 400, 'start'),
    ('/v1/os-hosts/1/power?start=2030-01-10 04:00&end=2030-01-09 00:00',
     400, 'end (2030-01-09'),
    ('/v1/os-hosts/1/power?colour=blue', 400, "'colour'"),
    ('/v1/os-hosts/power?start=2030-01-10 04:00', 400, "'start'"),
    ('/v1/usage/energy?step=0h', 400, 'step must be positive'),
    ('/v1/usage/energy?step=1s', 400, 'at most'),
    ('/v1/usage/energy?start=2030-01-10 04:00&end=2030-01-10 03:00', 400,
     'end (2030-01-10T03'),
    ('/v1/usage/energy?by_host=1', 400, "'by_host'"),
])
def test_bad_requests_say_what_is_wrong(env, path, status, words):
    resp = get(env, path)
    assert resp.status_int == status, resp.text
    assert words in resp.json['error_message'], resp.text


@pytest.mark.parametrize('path', ['/v1/os-hosts/power',
                                  '/v1/os-hosts/1/power',
                                  '/v1/usage/energy'])
def test_only_administrators_and_only_from_1_12(env, path):
    resp = get(env, path, persona='member')
    assert resp.status_int == 403, resp.text
    resp = get(env, path, version='1.11')
    assert resp.status_int == 404, resp.text
    assert '1.12' in resp.json['error_message'], resp.text



def kwh(hours):
    return round(hours * CONF.power.idle_watts / 1000, 3)


def test_the_energy_report_adds_up_the_past_step_by_step(env):
    resp = get(env, '/v1/usage/energy?start=2030-01-10 00:00'
                    '&end=2030-01-11 00:00&step=6h')
    assert resp.status_int == 200, resp.text
    energy = resp.json['energy']
    # h1 was off 06:00-09:00 and is off since 11:00; now is 12:00
    assert (energy['hours_off'], energy['kwh_saved']) == (4.0, kwh(4))
    assert energy['step'] == 6 * 3600
    assert energy['idle_watts'] == CONF.power.idle_watts
    assert [(s['start'][11:16], s['end'][11:16], s['hours_off'],
             s['kwh_saved']) for s in energy['steps']] == [
        ('00:00', '06:00', 0.0, 0.0),
        ('06:00', '12:00', 4.0, kwh(4)),
        # from now on: nothing known yet, not nothing saved
        ('12:00', '18:00', None, None),
        ('18:00', '00:00', None, None)]
    # the hosts that were off, most saved first; h2 never was
    assert energy['hosts'] == [{'host_id': '1', 'hypervisor_hostname': 'h1',
                                'hours_off': 4.0, 'kwh_saved': kwh(4)}]
    assert energy['hosts_now'] == {'on': 0, 'off': 1, 'waking': 0}
    assert energy['now'] == '2030-01-10T12:00:00.000000'


def test_the_energy_report_cuts_a_step_at_now(env):
    energy = get(env, '/v1/usage/energy?start=2030-01-10 08:00'
                      '&end=2030-01-10 14:00&step=4h').json['energy']
    # 08:00-09:00 off, then 11:00-12:00 (now) of the open interval
    assert [s['hours_off'] for s in energy['steps']] == [2.0, None]
    assert energy['hours_off'] == 2.0


def test_the_energy_report_covers_this_month_by_the_day(env):
    energy = get(env, '/v1/usage/energy').json['energy']
    assert (energy['start'], energy['end']) == (
        '2030-01-01T00:00:00.000000', '2030-02-01T00:00:00.000000')
    assert energy['step'] == 86400 and len(energy['steps']) == 31
    assert energy['steps'][9]['hours_off'] == 4.0
    assert energy['steps'][10]['hours_off'] is None
    assert energy['hours_off'] == 4.0


def test_a_period_before_any_power_off_saved_nothing(env):
    energy = get(env, '/v1/usage/energy?start=2029-12-01 00:00'
                      '&end=2029-12-02 00:00').json['energy']
    assert (energy['hours_off'], energy['kwh_saved']) == (0.0, 0.0)
    assert energy['hosts'] == []
