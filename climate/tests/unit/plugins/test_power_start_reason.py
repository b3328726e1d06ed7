"""What a lease says once its start stopped waiting for a sleeping host.

A start on a host the power planner has off waits ``[power] wake_grace``
at most; past it the lease starts with what it holds.  Its reason then
says which hosts were still not up, not that its resources were ready
(as it said before: seen in the integration cloud, test_power.py).
"""

import datetime
import time

import pytest
from oslo_config import cfg

from climate import context
from climate import dates
from climate.db import power as db_power
from climate.plugins import values as plugin_values
from climate.tests import fixtures
from climate.tests.unit.plugins import test_physical_host as hosts_tests

CONF = cfg.CONF
# long enough that the engine's first look at the start comes within it
# on a loaded machine (the start is looked at again every 5 s while it
# waits; a first look past the grace would not wait at all)
GRACE = 6
WAIT = 30


@pytest.fixture
def env(monkeypatch):
    with fixtures.ClimateEnvironment() as environment:
        plugin = environment.plugin('physical:host')
        plugin._backend = hosts_tests.RecordingBackend(None)
        environment.backend = plugin._backend
        # the host's power is the test's to set
        monkeypatch.setattr(environment.manager.power_planner, 'run_once',
                            lambda: None)
        CONF.set_override('enabled', True, 'power')
        CONF.set_override('wake_grace', GRACE, 'power')
        try:
            yield environment
        finally:
            CONF.clear_override('enabled', 'power')
            CONF.clear_override('wake_grace', 'power')


def host_id(env):
    """The id of the one host (ids go on across the process's
    environments)."""
    [host] = hosts_tests.admin(env, 'GET', '/v1/os-hosts')['hosts']
    return int(host['id'])


def lease_of(env, lease_id):
    return env.request('GET', '/v1/leases/' + lease_id).json['lease']


def test_a_start_past_the_grace_says_what_did_not_boot(env):
    hosts_tests.add_hosts(env, 1)
    ctx = context.admin_context()
    db_power.set_state(ctx, host_id(env), db_power.OFF,
                       dates.utcnow() - datetime.timedelta(hours=3))
    lease = hosts_tests.host_lease(env, 'never-up', 'now', '2090-01-01 00:00')
    deadline = time.monotonic() + WAIT
    while not (lease_of(env, lease['id'])['status_reason'] or
               '').startswith('start waits for'):
        assert time.monotonic() < deadline, (lease_of(env, lease['id']),
                                             db_power.records(ctx))
        time.sleep(0.05)
    started = hosts_tests.wait_status(env, lease['id'], 'ACTIVE',
                                      timeout=WAIT)
    reason = started['status_reason']
    assert reason.startswith('started ') and reason.endswith(
        ' s after its start date, its resources not all ready: host(s) '
        'h00 (off) did not boot within [power] wake_grace (%d s)' % GRACE), \
        started
    assert [c[0] for c in env.backend.calls] == ['start']


def test_gave_up_on_names_only_hosts_still_asleep_past_the_grace(env):
    hosts_tests.add_hosts(env, 1)
    plugin = env.plugin('physical:host')
    ctx = context.admin_context()
    db_power.set_state(ctx, host_id(env), db_power.ON, dates.utcnow())
    lease = hosts_tests.host_lease(env, 'up', 'now', '2090-01-01 00:00')
    started = hosts_tests.wait_status(env, lease['id'], 'ACTIVE')
    # on from the start: it never waited
    assert started['status_reason'] is None, started
    value = plugin_values.Lease.from_view(started)
    res = plugin_values.Reservation.from_view(started['reservations'][0])
    late = value.start_date + datetime.timedelta(seconds=GRACE)
    assert plugin.start_gave_up_on(ctx, value, res, late) is None
    db_power.set_state(ctx, host_id(env), db_power.WAKING, dates.utcnow(),
                       need_at=value.start_date)
    # within the grace the start waits for it: nothing given up yet
    assert plugin.start_gave_up_on(ctx, value, res, value.start_date) is None
    assert plugin.start_gave_up_on(ctx, value, res, late) == (
        'host(s) h00 (waking) did not boot within [power] wake_grace '
        '(%d s)' % GRACE)
    CONF.set_override('enabled', False, 'power')
    assert plugin.start_gave_up_on(ctx, value, res, late) is None
