"""The power planner: the plan carried out through a power backend on a
SQLite database, its record and history kept, failures kept per host."""

import datetime
import importlib

from oslo_config import cfg
import pytest
import sqlalchemy as sa

from climate import context
from climate.db import api as db_api
from climate.db import models
from climate.db import power as db_power
from climate import exceptions
from climate.manager.workers import power as planner
from climate.plugins.physical_host.power import base as power_base
from climate.plugins.physical_host.power import static
from climate.scheduling import power as plan_power
from climate.tests import schema
from climate.tests.unit.db import power_checks

T0 = datetime.datetime(2090, 1, 1)
CONF = cfg.CONF


def at(minutes):
    return T0 + datetime.timedelta(minutes=minutes)


@pytest.fixture
def ctx(tmp_path):
    importlib.import_module('climate.conf')  # registers the options
    CONF([], project='climate', default_config_files=[])
    schema.head_database(tmp_path / 'c.sqlite')
    # one spare kept by default would hide which host went off
    CONF.set_override('enabled', True, group='power')
    CONF.set_override('spare_awake', 0, group='power')
    CONF.set_override('spare_share', 0.0, group='power')
    yield context.admin_context()
    CONF.clear_override('enabled', group='power')
    CONF.clear_override('spare_awake', group='power')
    CONF.clear_override('spare_share', group='power')
    db_api.get_engine().dispose()


class Clock:
    def __init__(self, when=T0):
        self.when = when

    def __call__(self):
        return self.when


add_host = power_checks.add_host
book = power_checks.book


def make(backend=None, clock=None):
    backend = backend or static.StaticPowerBackend(CONF)
    return planner.PowerPlanner(CONF, backend, clock or Clock()), backend


def history(ctx):
    with db_api.reader(ctx) as session:
        return [tuple(r) for r in session.execute(sa.select(
            models.HostPowerHistory.host_id, models.HostPowerHistory.state,
            models.HostPowerHistory.started_at,
            models.HostPowerHistory.ended_at).order_by(
            models.HostPowerHistory.id))]


def record(ctx, host_id):
    return db_power.records(ctx).get(host_id)


def test_a_host_free_for_long_is_powered_off_and_recorded(ctx):
    host = add_host(ctx, 'h1')
    task, backend = make()
    result = task.run_once()
    assert result.actions == [plan_power.Action(host, plan_power.POWER_OFF,
                                                plan_power.FREE)]
    assert backend.state({'hypervisor_hostname': 'h1'}).power == 'off'
    rec = record(ctx, host)
    assert (rec.state, rec.since, rec.last_error) == ('off', T0, None)
    assert db_power.intervals(ctx, 'off', T0, at(60)) == {
        host: [(T0, at(60))]}
    # read on, then powered off at the same instant: only off is kept
    assert history(ctx) == [(host, 'off', T0, None)]
    # a second pass has nothing to do
    assert task.run_once().actions == []


def test_a_host_booked_soon_is_woken_one_wake_lead_ahead(ctx):
    host = add_host(ctx, 'h1')
    clock = Clock()
    task, backend = make(clock=clock)
    task.run_once()
    assert record(ctx, host).state == 'off'
    # default boot 600 s + margin 300 s: a wake lead of 15 minutes
    book(ctx, host, at(24 * 60), at(25 * 60))
    clock.when = at(24 * 60 - 16)
    result = task.run_once()
    assert result.actions == []
    assert result.next_wake == at(24 * 60 - 15)
    clock.when = result.next_wake
    result = task.run_once()
    assert result.actions == [plan_power.Action(
        host, plan_power.WAKE, plan_power.FOR_BOOKING, at(24 * 60),
        at(24 * 60))]
    assert backend.state({'hypervisor_hostname': 'h1'}).power == 'on'
    rec = record(ctx, host)
    assert (rec.state, rec.need_at) == ('on', None)
    # the static backend boots nothing: no boot is measured
    assert rec.boot_seconds is None
    assert db_power.intervals(ctx, 'off', T0, at(48 * 60)) == {
        host: [(T0, at(24 * 60 - 15))]}


def test_protected_hosts_are_never_powered_off(ctx):
    disabled = add_host(ctx, 'disabled', disabled=True)
    down = add_host(ctx, 'down', reservable=False)
    busy = add_host(ctx, 'busy')
    book(ctx, busy, at(-60), at(600))
    free = add_host(ctx, 'free')
    task, backend = make()
    result = task.run_once()
    assert result.actions == [plan_power.Action(free, plan_power.POWER_OFF,
                                                plan_power.FREE)]
    for host in (disabled, down, busy):
        assert record(ctx, host).state == 'on'
    assert [name for _when, name, _state in backend.history] == ['free']


def test_a_host_in_maintenance_is_left_to_the_operator(ctx):
    working = add_host(ctx, 'working', caps={'maintenance': 'true'})
    idle = add_host(ctx, 'idle', caps={'maintenance': 'false'})
    clock = Clock()
    task, backend = make(clock=clock)
    result = task.run_once()
    # free for long, both: only the one not under work goes off
    assert result.actions == [plan_power.Action(idle, plan_power.POWER_OFF,
                                                plan_power.FREE)]
    assert record(ctx, working).state == 'on'
    # the operator powered it off for their work: a booking due does not
    # wake it (its power is theirs)
    backend.power_off({'hypervisor_hostname': 'working'}, None)
    db_power.set_state(ctx, working, db_power.OFF, clock())
    book(ctx, working, at(10), at(70))
    clock.when = at(5)
    assert [a.host_id for a in task.run_once().actions] == []
    assert record(ctx, working).state == 'off'
    assert planner.in_maintenance({'maintenance': 'yes'})
    assert not planner.in_maintenance({'maintenance': 'soon'})
    assert not planner.in_maintenance({})


class FailingBackend(static.StaticPowerBackend):
    """The static backend with one host's switch unreachable."""

    def __init__(self, conf, broken, states=None):
        super().__init__(conf, states)
        self.broken = broken

    def state(self, host):
        if power_base.host_label(host) in self.broken:
            raise exceptions.CloudUnavailable(service='BMC',
                                              reason='no route to host')
        return super().state(host)


def test_a_switch_failure_is_recorded_and_the_pass_goes_on(ctx):
    first = add_host(ctx, 'h1')
    second = add_host(ctx, 'h2')
    task, backend = make(FailingBackend(CONF, {'h1'}))
    result = task.run_once()
    assert list(result.failed) == [first]
    rec = record(ctx, first)
    assert rec.state == 'unknown'
    assert 'no route to host' in rec.last_error
    assert rec.error_at == T0
    assert record(ctx, second).state == 'off'
    assert result.done == [second]
    # nothing is due by the clock: the next pass after the interval
    assert result.next_wake is None
    backend.broken.clear()
    task.run_once()
    rec = record(ctx, first)
    assert (rec.state, rec.last_error) == ('off', None)


class BusyBackend(static.StaticPowerBackend):
    def power_off(self, host, until=None):
        raise power_base.HostBusy(service='Nova', reason='servers run')


def test_a_busy_host_stays_on_with_the_refusal_recorded(ctx):
    host = add_host(ctx, 'h1')
    task, _backend = make(BusyBackend(CONF))
    result = task.run_once()
    assert list(result.failed) == [host]
    rec = record(ctx, host)
    assert rec.state == 'on'
    assert 'servers run' in rec.last_error


def test_the_disabled_plan_does_nothing(ctx):
    CONF.set_override('enabled', False, group='power')
    add_host(ctx, 'h1')
    task, backend = make()
    assert task.interval() == 0
    assert task.run_once() is None
    assert db_power.records(ctx) == {}
    assert list(backend.history) == []


class SlowBoot(static.StaticPowerBackend):
    """A backend that acts: a host powered on heads for on until
    :meth:`booted` (``crash``: the power on dies after the request)."""

    acts_in_cloud = True

    def __init__(self, conf, states=None, crash=False):
        super().__init__(conf, states)
        self.booting = set()
        self.crash = crash

    def state(self, host):
        name = power_base.host_label(host)
        if name in self.booting:
            return power_base.PowerState('off', 'on')
        return super().state(host)

    def request(self, host, wanted, current):
        if wanted == 'on':
            self.booting.add(power_base.host_label(host))
            if self.crash:
                raise RuntimeError('manager killed')
        else:
            super().request(host, wanted, current)

    def booted(self, name):
        self.booting.discard(name)
        self._states[name] = 'on'


def _off_and_booked(ctx, backend, clock):
    host = add_host(ctx, 'h1')
    task, _ = make(backend, clock)
    task.run_once()
    assert record(ctx, host).state == 'off'
    book(ctx, host, at(60), at(120))
    clock.when = at(45)
    return host, task


def test_a_boot_is_measured_when_the_woken_host_reads_on(ctx):
    clock = Clock()
    backend = SlowBoot(CONF)
    host, task = _off_and_booked(ctx, backend, clock)
    result = task.run_once()
    assert [a.verb for a in result.actions] == ['wake']
    rec = record(ctx, host)
    assert (rec.state, rec.since, rec.need_at) == ('waking', at(45), at(60))
    clock.when = at(52)
    # a boot under way is looked at again soon
    assert task.run_once().next_wake == at(52) + datetime.timedelta(
        seconds=planner.BOOT_POLL)
    assert record(ctx, host).state == 'waking'
    backend.booted('h1')
    clock.when = at(53)
    task.run_once()
    rec = record(ctx, host)
    assert (rec.state, rec.boot_seconds) == ('on', 8 * 60)
    assert db_power.intervals(ctx, 'waking', T0, at(60)) == {
        host: [(at(45), at(53))]}


def test_a_boot_longer_than_the_wake_lead_is_said(ctx):
    clock = Clock()
    backend = SlowBoot(CONF)
    host, task = _off_and_booked(ctx, backend, clock)
    task.run_once()
    # the default wake lead: 600 s boot + 300 s margin
    clock.when = at(45 + 15)
    task.run_once()
    assert record(ctx, host).last_error is None
    clock.when = at(45 + 16)
    task.run_once()
    rec = record(ctx, host)
    assert rec.state == 'waking'
    assert 'still booting 960 s' in rec.last_error
    backend.booted('h1')
    clock.when = at(45 + 17)
    task.run_once()
    rec = record(ctx, host)
    assert (rec.state, rec.last_error, rec.boot_seconds) == (
        'on', None, 17 * 60)


def test_a_pass_after_a_crash_mid_wake_finishes_the_wake(ctx):
    clock = Clock()
    backend = SlowBoot(CONF, crash=True)
    host, task = _off_and_booked(ctx, backend, clock)
    with pytest.raises(RuntimeError):
        task.run_once()
    rec = record(ctx, host)
    assert (rec.state, rec.need_at) == ('waking', at(60))
    # the request never reached the switch
    backend.booting.clear()
    backend.crash = False
    clock.when = at(46)
    restarted, _ = make(backend, clock)
    result = restarted.run_once()
    # no new wake is planned: the one under way is finished
    assert result.actions == []
    assert result.done == [host]
    assert 'h1' in backend.booting
    backend.booted('h1')
    clock.when = at(50)
    restarted.run_once()
    rec = record(ctx, host)
    assert (rec.state, rec.boot_seconds) == ('on', 5 * 60)


def test_the_horizon_covers_the_longest_wake_lead_and_a_pass():
    settings = plan_power.Settings(
        min_off=datetime.timedelta(hours=2),
        wake_margin=datetime.timedelta(minutes=5),
        default_boot=datetime.timedelta(minutes=10))
    assert planner.horizon(settings, 300, None) == datetime.timedelta(
        minutes=140)
    assert planner.horizon(settings, 300, 1800) == datetime.timedelta(
        minutes=160)


class SlowSwitch(SlowBoot):
    """Each power on takes the switch ten minutes to answer."""

    def __init__(self, conf, clock):
        super().__init__(conf)
        self.clock = clock

    def power_on(self, host):
        self.clock.when += datetime.timedelta(minutes=10)
        return super().power_on(host)


def test_each_wake_is_timed_from_its_own_power_on(ctx):
    clock = Clock()
    backend = SlowSwitch(CONF, clock)
    first, second = add_host(ctx, 'h1'), add_host(ctx, 'h2')
    task, _ = make(backend, clock)
    task.run_once()
    for host in (first, second):
        book(ctx, host, at(60), at(120))
    clock.when = at(45)
    task.run_once()
    # the second wake began when the first one's switch had answered
    assert record(ctx, first).since == at(45)
    assert record(ctx, second).since == at(55)
    backend.booted('h1')
    backend.booted('h2')
    clock.when = at(60)
    task.run_once()
    # each from its own power on to the answer that found it on (10
    # minutes more each): timed from the pass, the second would be 35
    assert [record(ctx, h).boot_seconds for h in (first, second)] == [
        25 * 60, 25 * 60]


class DiesAfterPowerOff(static.StaticPowerBackend):
    """The switch powers the host off; the manager dies before it hears
    so."""

    def power_off(self, host, until=None):
        super().power_off(host, until)
        raise RuntimeError('manager killed')


def test_a_crash_after_a_power_off_leaves_a_state_read_again(ctx):
    host = add_host(ctx, 'h1')
    backend = DiesAfterPowerOff(CONF)
    task, _ = make(backend)
    with pytest.raises(RuntimeError):
        task.run_once()
    # not "on": a booking due would wake a host recorded on too late
    assert record(ctx, host).state == 'unknown'
    assert backend.state({'hypervisor_hostname': 'h1'}).power == 'off'
    result = task.run_once()
    assert result.actions == []
    assert record(ctx, host).state == 'off'


def test_a_wake_of_the_engines_wakes_the_planner(ctx, monkeypatch):
    from climate.manager import service
    svc = service.ManagerService('m')
    woken = []
    monkeypatch.setattr(svc.power_planner, 'wake', lambda: woken.append(1))
    monkeypatch.setattr(svc, '_tell_all', lambda method: None)
    service.ManagerEndpoint(svc).wake(context.admin_context())
    assert woken == [1]
    svc._wake_all()
    assert woken == [1, 1]


def test_the_manager_starts_it_and_it_runs_only_when_enabled(ctx):
    from climate.manager import service
    CONF.set_override('enabled', False, group='power')
    assert isinstance(service.ManagerService('m').power_planner,
                      planner.PowerPlanner)
    task, _ = make()
    task.start()
    try:
        assert task._thread is None
    finally:
        task.stop()


def test_it_sleeps_until_the_next_change_at_most_an_interval(ctx):
    from oslo_utils import timeutils
    task, _ = make()
    assert task.interval() == CONF.power.plan_interval
    task._interval = task.interval()
    task._next_wake = timeutils.utcnow() + datetime.timedelta(seconds=20)
    assert 18 < task.due_in() <= 20
    task._next_wake = None
    assert task.due_in() == CONF.power.plan_interval


class MeteredBackend(static.StaticPowerBackend):
    """The static backend with a power meter: ``watts`` by host name, a
    value or an exception to raise; each reading keeps the state the
    host was in when read."""

    def __init__(self, conf, watts):
        super().__init__(conf)
        self.watts = dict(watts)
        self.read_when = []

    def power_watts(self, host):
        name = power_base.host_label(host)
        self.read_when.append((name, self.state(host).power))
        found = self.watts.get(name)
        if isinstance(found, Exception):
            raise found
        return found


def _woken(ctx, task, backend, host, name, clock, minutes):
    """``host`` woken by a booking and free again ``minutes`` later,
    when the next pass powers it off."""
    book(ctx, host, clock.when + datetime.timedelta(minutes=20),
         clock.when + datetime.timedelta(minutes=30))
    clock.when += datetime.timedelta(minutes=10)
    task.run_once()
    assert backend.state({'hypervisor_hostname': name}).power == 'on'
    clock.when += datetime.timedelta(minutes=minutes)


def test_the_idle_draw_is_read_before_the_power_off_and_kept(ctx):
    first = add_host(ctx, 'h1')
    second = add_host(ctx, 'h2')
    task, backend = make(MeteredBackend(CONF, {'h1': 212.5}))
    result = task.run_once()
    assert sorted(result.done) == [first, second]
    # read while on: what a free host draws idle
    assert sorted(backend.read_when) == [('h1', 'on'), ('h2', 'on')]
    rec = record(ctx, first)
    assert (rec.state, rec.idle_watts, rec.watts_at) == ('off', 212.5, T0)
    # a switch that measures nothing: no reading, nothing made up
    rec = record(ctx, second)
    assert (rec.state, rec.idle_watts, rec.watts_at) == ('off', None, None)


def test_the_next_power_off_reads_again(ctx):
    host = add_host(ctx, 'h1')
    clock = Clock()
    task, backend = make(MeteredBackend(CONF, {'h1': 200}), clock)
    task.run_once()
    _woken(ctx, task, backend, host, 'h1', clock, 24 * 60)
    backend.watts['h1'] = 180.25
    task.run_once()
    rec = record(ctx, host)
    assert (rec.state, rec.idle_watts, rec.watts_at) == (
        'off', 180.25, clock.when)


@pytest.mark.parametrize('reading', [
    exceptions.CloudUnavailable(service='Redfish', reason='BMC away'),
    RuntimeError('a backend bug'), None, -3.0, 0, float('nan'),
    float('inf'), 'many', True,
], ids=['switch-down', 'backend-bug', 'none', 'negative', 'zero', 'nan',
        'inf', 'text', 'bool'])
def test_a_failed_reading_never_blocks_the_power_off_and_keeps_the_last(
        ctx, reading):
    host = add_host(ctx, 'h1')
    clock = Clock()
    task, backend = make(MeteredBackend(CONF, {'h1': 150.5}), clock)
    task.run_once()
    _woken(ctx, task, backend, host, 'h1', clock, 24 * 60)
    backend.watts['h1'] = reading
    result = task.run_once()
    assert result.done == [host] and result.failed == {}
    rec = record(ctx, host)
    assert (rec.state, rec.last_error) == ('off', None)
    assert (rec.idle_watts, rec.watts_at) == (150.5, T0)


def test_a_failing_reading_is_warned_of_once_per_host(ctx, caplog):
    host = add_host(ctx, 'h1')
    clock = Clock()
    broken = exceptions.CloudUnavailable(service='Redfish',
                                         reason='no Power resource')
    task, backend = make(MeteredBackend(CONF, {'h1': broken}), clock)
    caplog.set_level('DEBUG', logger='climate.manager.workers.power')

    def warnings():
        return [r for r in caplog.records if r.levelname == 'WARNING' and
                'power reading failed' in r.getMessage()]

    task.run_once()
    assert len(warnings()) == 1
    assert 'no Power resource' in warnings()[0].getMessage()
    _woken(ctx, task, backend, host, 'h1', clock, 24 * 60)
    task.run_once()
    assert record(ctx, host).state == 'off'
    assert len(warnings()) == 1
    # read again: a later failure is news again
    _woken(ctx, task, backend, host, 'h1', clock, 24 * 60)
    backend.watts['h1'] = 99.0
    task.run_once()
    _woken(ctx, task, backend, host, 'h1', clock, 24 * 60)
    backend.watts['h1'] = broken
    task.run_once()
    assert len(warnings()) == 2
    assert record(ctx, host).idle_watts == 99.0


class BusyMeteredBackend(MeteredBackend):
    def power_off(self, host, until=None):
        raise power_base.HostBusy(service='Nova', reason='servers run')


def test_a_reading_of_a_host_with_servers_is_dropped(ctx):
    host = add_host(ctx, 'h1')
    task, backend = make(BusyMeteredBackend(CONF, {'h1': 420.0}))
    task.run_once()
    assert backend.read_when == [('h1', 'on')]
    rec = record(ctx, host)
    # servers ran on it: not an idle draw
    assert (rec.state, rec.idle_watts, rec.watts_at) == ('on', None, None)
