"""The power planner on real Nova and a real Redfish endpoint.

Climate's manager runs with ``[power] enabled = true`` and ``backend =
redfish`` against sushy-tools' ``sushy-emulator`` (fake systems driver, on
127.0.0.1), one fake system per compute host of the cloud, mapped with
``[power] redfish_systems``; hosts come from Nova (``[hosts] inventory =
nova``), whose ``nova-compute`` services the planner closes while a host
sleeps.  The planner's timings are seconds instead of minutes so that a
wake, a start and a heal fit in a test.

Only the manager acts on power (the API forwards to it), so the module
swaps the session's manager for one with this module's configuration, one
per test: a test's teardown stops it before putting the cloud back (every
system on, every service the planner closed enabled), so that nothing
powers a host off behind that.  The session's manager is started again at
the end.

1. A free host nobody booked is powered off, its service closed with
   Climate's reason.
2. A booking ahead wakes its host before its start (on, service open
   again), and the lease is ACTIVE on time, without waiting.
3. Hosts whose BMC refuses power on are healed past ``[power]
   wake_grace``: one reservation moves to a free host that fits, one for
   which none fits is flagged degraded; once the BMC powers them on, they
   are reservable again and the flag is cleared.
"""

import datetime
import json
import time
import uuid

import pytest

from climate.plugins.physical_host.backends import nova as nova_backend
from climate.tests.functional.procs import wait_for
from climate.tests import redfish_emulator
from climate.tests.integration import compute as compute_mod
from climate.tests.integration.identity import iso_in

POWER_VERSION = '1.12'
# the plan in seconds: a host is off once free for wake lead + min_off
# (8 + 4 s), woken 8 s before its booking (5 s boot, 3 s margin: the
# emulator's boots take 1 s, the rest is room for a loaded machine's
# planner pass and Nova calls), healed 10 s after a start it missed
DEFAULT_BOOT = 5
WAKE_MARGIN = 3
MIN_OFF = 4
WAKE_GRACE = 10
PLAN_INTERVAL = 2
LEAD = DEFAULT_BOOT + WAKE_MARGIN
# how far ahead the leases start: room to book (and to break a BMC)
# before their hosts are woken
AHEAD = 15
# a planner pass, a Redfish transition (1 s) and the Nova calls around it,
# on a loaded machine
SETTLE = 30
# how late after its start a lease whose host was woken ahead may become
# ACTIVE (the start's own Nova calls); the figure is printed
ON_TIME = 10


def power_section(systems):
    mapping = ','.join('%s:%s' % item for item in sorted(systems.items()))
    return f"""
[power]
enabled = true
backend = redfish
redfish_username = climate
redfish_password = climate-it
redfish_systems = {mapping}
action_timeout = 10
default_boot_time = {DEFAULT_BOOT}
wake_margin = {WAKE_MARGIN}
min_off = {MIN_OFF}
wake_grace = {WAKE_GRACE}
plan_interval = {PLAN_INTERVAL}
# every free host may sleep: the tests watch each one
spare_awake = 0
spare_share = 0
"""


class Bmc:
    """The emulator with one system per compute host, by host name."""

    def __init__(self, folder, names):
        self.ids = {name: str(uuid.uuid4()) for name in names}
        self.emulator = redfish_emulator.Emulator(folder, [
            redfish_emulator.system(self.ids[n], n, 'On') for n in names])

    def state(self, name):
        return self.emulator.power_state(self.ids[name])

    def states(self):
        return {name: self.state(name) for name in self.ids}

    def refuse_power_on(self, *names):
        self.emulator.refuse_power_on(*(self.ids[n] for n in names))

    def systems(self):
        return {n: self.emulator.system_url(i) for n, i in self.ids.items()}

    def all_on(self, timeout=SETTLE):
        """Every system on, and staying on: a change asked before the
        manager stopped lands within 1 s of it, so only a read after that
        counts."""
        self.emulator.allow_power_on()
        settled = time.monotonic() + 1.5

        def on():
            states = self.states()
            for name, state in states.items():
                if state != 'On':
                    self.emulator.reset(self.ids[name], 'On')
            return time.monotonic() > settled and \
                all(s == 'On' for s in states.values())
        wait_for(on, timeout, interval=0.2,
                 message=lambda: 'every system on: %s' % self.states())


def services(nova, names):
    return {s.host: s for s in nova.services.list(binary='nova-compute')
            if s.host in names}


def open_services(nova, names):
    """Enable the services a power off closed (one closed for another
    reason is not the planner's doing: left as it is)."""
    for service in services(nova, names).values():
        if nova_backend.closed_by_power(service):
            nova.services.enable(service.id)


def put_back(bmc, nova):
    bmc.all_on()
    open_services(nova, bmc.ids)


@pytest.fixture(scope='module')
def names(cloud):
    found = cloud.info['compute_hosts'][:3]
    assert len(found) == 3, 'the scenarios need 3 compute hosts'
    return found


@pytest.fixture(scope='module')
def nova(cloud):
    return compute_mod.Compute(cloud).admin


@pytest.fixture(scope='module')
def bmc(names, tmp_path_factory):
    found = Bmc(str(tmp_path_factory.mktemp('bmc')), names)
    try:
        found.emulator.start()
    except redfish_emulator.EmulatorFailed as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield found
    finally:
        found.emulator.stop()


@pytest.fixture(scope='module')
def power_config(climate_config, bmc, tmp_path_factory):
    path = tmp_path_factory.mktemp('climate-power') / 'climate.conf'
    path.write_text(climate_config.read_text() + power_section(bmc.systems()))
    return path


@pytest.fixture(scope='module')
def session_manager_stopped(climate_services, bmc, nova):
    climate_services.stop('climate-manager')
    try:
        yield climate_services
    finally:
        put_back(bmc, nova)
        climate_services.start('climate-manager')


@pytest.fixture
def planner(session_manager_stopped, power_config, bmc, nova):
    """A manager with the power plan on, for one test."""
    put_back(bmc, nova)
    services = session_manager_stopped
    services.start('climate-manager', power_config)
    try:
        yield services
    finally:
        services.stop('climate-manager')
        put_back(bmc, nova)


def register(api, token, names, **extra):
    hosts = {}
    for name in names:
        resp = api.call('POST', '/v1/os-hosts', token,
                        dict(extra.get(name, {}), name=name))
        assert resp.status_code == 201, resp.text
        hosts[name] = resp.json()['host']
    return hosts


def power_views(api, token):
    resp = api.call('GET', '/v1/os-hosts/power', token,
                    version=POWER_VERSION)
    assert resp.status_code == 200, resp.text
    return {v['hypervisor_hostname']: v for v in resp.json()['hosts_power']}


def host_row(api, token, host_id):
    resp = api.call('GET', '/v1/os-hosts/%s' % host_id, token)
    assert resp.status_code == 200, resp.text
    return resp.json()['host']


def host_lease(api, token, name, start_in, length, properties=''):
    resp = api.call('POST', '/v1/leases', token, {
        'name': name, 'start_date': iso_in(start_in),
        'end_date': iso_in(start_in + length), 'events': [],
        'reservations': [{'resource_type': 'physical:host', 'min': 1,
                          'max': 1, 'hypervisor_properties': '',
                          'resource_properties': properties}]})
    assert resp.status_code == 201, resp.text
    return resp.json()['lease']


def held_by(api, token, reservation_id, hosts):
    """The host name the reservation holds."""
    resp = api.call('GET', '/v1/os-hosts/allocations?reservation_id=%s'
                    % reservation_id, token)
    assert resp.status_code == 200, resp.text
    by_id = {h['id']: name for name, h in hosts.items()}
    held = [by_id[a['resource_id']] for a in resp.json()['allocations']
            if a['reservations']]
    assert len(held) == 1, resp.json()
    return held[0]


def start_of(lease):
    """The lease's start as an aware UTC datetime."""
    return datetime.datetime.fromisoformat(lease['start_date']).replace(
        tzinfo=datetime.timezone.utc)


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


def asleep(bmc, nova, names):
    """Every system of ``names`` off and its service closed by Climate."""
    held = services(nova, names)
    return all(bmc.state(n) == 'Off' for n in names) and all(
        nova_backend.closed_by_power(held[n]) for n in names)


def wait_asleep(bmc, nova, names):
    wait_for(lambda: asleep(bmc, nova, names), SETTLE, interval=0.3,
             message=lambda: 'hosts %s off with their services closed: '
             'systems %s, services %s' % (names, bmc.states(), {
                 n: (s.status, s.disabled_reason)
                 for n, s in services(nova, names).items()}))


def all_off(api, token, names):
    views = power_views(api, token)
    return all(views[n]['state'] == 'off' for n in names) and views


def test_a_free_host_is_powered_off_and_its_service_closed(
        planner, api, tokens, bmc, nova, names):
    assert set(bmc.states().values()) == {'On'}
    register(api, tokens['admin'], names)
    wait_asleep(bmc, nova, names)
    # the record follows once the planner's own wait has seen the system off
    views = wait_for(lambda: all_off(api, tokens['admin'], names), SETTLE,
                     interval=0.3, message='the planner recording them off')
    assert all(views[n]['last_error'] is None for n in names), views
    for name, service in services(nova, names).items():
        assert service.status == 'disabled'
        # nothing booked: no date to give
        assert service.disabled_reason == \
            nova_backend.POWER_DISABLED_REASON % 'its next booking', service


def test_a_booking_ahead_wakes_its_host_before_the_start(
        planner, api, tokens, bmc, nova, names):
    hosts = register(api, tokens['admin'], names)
    wait_asleep(bmc, nova, names)
    lease = host_lease(api, tokens['demo'], 'woken', AHEAD, 120)
    start = start_of(lease)
    name = held_by(api, tokens['admin'], lease['reservations'][0]['id'],
                   hosts)
    others = [n for n in names if n != name]
    # off until its wake: it has just been booked, AHEAD s ahead
    assert bmc.state(name) == 'Off'

    def woken():
        return bmc.state(name) == 'On' and \
            services(nova, [name])[name].status == 'enabled' and utcnow()
    up = wait_for(woken, AHEAD + SETTLE, interval=0.2,
                  message=lambda: 'host %s on with its service enabled '
                  '(%s)' % (name, bmc.state(name)))
    ahead = (start - up).total_seconds()
    print('\nhost %s up %.1f s before its start' % (name, ahead))
    # up before the start, and woken for it (not left on): about a wake
    # lead ahead, the boot (1 s) and the service's opening after the wake
    assert 0 < ahead <= LEAD + PLAN_INTERVAL, ahead

    lease = api.wait_status(tokens['demo'], lease['id'], 'ACTIVE',
                            timeout=30 + SETTLE)
    late = (utcnow() - start).total_seconds()
    print('lease ACTIVE %.1f s after its start' % late)
    assert late <= ON_TIME, late
    # the start did not wait for a boot (it would say so)
    assert lease['status_reason'] is None, lease['status_reason']
    assert asleep(bmc, nova, others), bmc.states()
    view = power_views(api, tokens['admin'])[name]
    assert view['state'] == 'on' and view['last_error'] is None, view
    # the boot was measured: the next wake lead uses it
    assert view['boot_seconds'] is not None and \
        view['boot_seconds'] <= LEAD, view


def test_hosts_that_do_not_wake_are_healed(planner, api, tokens, bmc, nova,
                                           names):
    first, second, third = names
    # the second alone has the property one reservation asks for
    hosts = register(api, tokens['admin'], names,
                     **{second: {'power_it': 'only'}})
    wait_asleep(bmc, nova, names)
    only = host_lease(api, tokens['demo'], 'only-one-fits', AHEAD, 120,
                      properties=json.dumps(['=', '$power_it', 'only']))
    movable = host_lease(api, tokens['demo'], 'movable', AHEAD, 120)
    rid_only = only['reservations'][0]['id']
    rid_movable = movable['reservations'][0]['id']
    assert held_by(api, tokens['admin'], rid_only, hosts) == second
    stuck = held_by(api, tokens['admin'], rid_movable, hosts)
    spare = next(n for n in names if n not in (second, stuck))
    # their BMCs fail every power on from now on (a power supply fault)
    bmc.refuse_power_on(second, stuck)
    start = start_of(movable)

    # at the start, the leases wait for their hosts
    def waiting():
        seen = api.lease(tokens['demo'], movable['id'])
        return seen['status'] == 'STARTING' and seen
    seen = wait_for(waiting, AHEAD + SETTLE, interval=0.3,
                    message='the lease STARTING, waiting for its host')
    assert seen['status_reason'].startswith(
        'start waits for host(s) %s (waking) to boot' % stuck), seen
    views = power_views(api, tokens['admin'])
    for name in (second, stuck):
        assert views[name]['state'] == 'waking', views[name]
        assert 'powering on' in views[name]['last_error'], views[name]
        assert 'Redfish' in views[name]['last_error'], views[name]

    # past wake_grace: the movable reservation's host is replaced by the
    # free one, which is woken for it; the other one is flagged
    def reservation(lease_id):
        return api.lease(tokens['demo'], lease_id)['reservations'][0]
    wait_for(lambda: reservation(movable['id'])['resources_changed'],
             WAKE_GRACE + AHEAD + SETTLE, interval=0.3,
             message='the stuck host replaced')
    healed = (utcnow() - start).total_seconds()
    print('\nhealed %.1f s after the start (wake_grace %d s)' % (
        healed, WAKE_GRACE))
    assert healed >= WAKE_GRACE, healed
    assert held_by(api, tokens['admin'], rid_movable, hosts) == spare
    wait_for(lambda: bmc.state(spare) == 'On' and services(
        nova, [spare])[spare].status == 'enabled', SETTLE, interval=0.3,
        message='the replacement woken')
    moved = api.wait_status(tokens['demo'], movable['id'], 'ACTIVE',
                            timeout=SETTLE)
    assert moved['degraded'] is False, moved

    flagged = wait_for(lambda: reservation(only['id'])['missing_resources']
                       and api.lease(tokens['demo'], only['id']), SETTLE,
                       interval=0.3, message='the reservation flagged')
    assert flagged['degraded'] is True, flagged
    flagged = api.wait_status(tokens['demo'], only['id'], 'ACTIVE',
                              timeout=SETTLE)
    # it started without its host, and says so
    assert flagged['status_reason'].endswith(
        'its resources not all ready: host(s) %s (waking) did not boot '
        'within [power] wake_grace (%d s)' % (second, WAKE_GRACE)), flagged
    for name in (second, stuck):
        assert host_row(api, tokens['admin'],
                        hosts[name]['id'])['reservable'] is False
        # still off, and closed to Nova's scheduler as a sleeping host
        assert bmc.state(name) == 'Off'
        assert nova_backend.closed_by_power(services(nova, [name])[name])

    # the BMCs power them on again: the planner's next try wakes them,
    # healing makes them reservable and clears the flag
    bmc.emulator.allow_power_on()
    wait_for(lambda: all(host_row(api, tokens['admin'], hosts[n]['id'])[
        'reservable'] for n in (second, stuck)), SETTLE, interval=0.3,
        message='the stuck hosts reservable again')
    wait_for(lambda: not reservation(only['id'])['missing_resources'],
             SETTLE, interval=0.3, message='the flag cleared')
    assert api.lease(tokens['demo'], only['id'])['degraded'] is False
    assert bmc.state(second) == 'On'
    assert services(nova, [second])[second].status == 'enabled'
    # the moved reservation stays where healing put it
    assert held_by(api, tokens['admin'], rid_movable, hosts) == spare
