"""The ``redfish`` power backend against a real Redfish BMC emulator.

sushy-tools' ``sushy-emulator`` runs with its fake systems driver (no
libvirt, no cloud) on 127.0.0.1 and a free port, for the whole module
(``climate.tests.redfish_emulator``: power changes land within 1 s, which
keeps the backend's wait for a transition in play); its state is kept in
the module's temporary folder.  The emulator not starting fails the
module: these tests never skip.
"""

import json
import os
import re
import subprocess
import sys
import time
import types

import pytest
import requests
from oslo_config import cfg

from climate.conf import power_backends as power_conf
from climate import exceptions
from climate.plugins.physical_host.power import base
from climate.plugins.physical_host.power import redfish
from climate.tests import redfish_emulator

ON_ID = '0c0f0a31-1d6b-4c2e-9f6c-000000000001'
OFF_ID = '0c0f0a31-1d6b-4c2e-9f6c-000000000002'
SYSTEMS = redfish_emulator.SYSTEMS
free_port = redfish_emulator.free_port
START_TIMEOUT = redfish_emulator.START_TIMEOUT


@pytest.fixture(scope='module')
def emulator(tmp_path_factory):
    emu = redfish_emulator.Emulator(
        str(tmp_path_factory.mktemp('redfish')),
        [redfish_emulator.system(ON_ID, 'host-on', 'On'),
         redfish_emulator.system(OFF_ID, 'host-off', 'Off')])
    try:
        emu.start()
    except redfish_emulator.EmulatorFailed as exc:
        pytest.fail(str(exc))
    yield emu
    emu.stop()


def make_backend(**overrides):
    conf = cfg.ConfigOpts()
    power_conf.register_opts(conf)
    conf([], default_config_files=[])
    settings = {'backend': 'redfish', 'action_timeout': 5,
                'redfish_username': 'climate', 'redfish_password': 'secret',
                'redfish_verify': 'false'}
    settings.update(overrides)
    for key, value in settings.items():
        conf.set_override(key, value, group='power')
    backend = redfish.RedfishPowerBackend(conf)
    backend.poll_interval = 0.1
    # a refused connection is tried again once, soon (the module's speed)
    backend.server_retry_delay = 0.01
    return backend


def host(name, **facts):
    return dict(hypervisor_hostname=name, service_name=name, **facts)


def test_each_mapping_finds_the_system(emulator):
    by_map = make_backend(redfish_systems={
        'h-map': emulator.system_url(ON_ID)})
    assert by_map.state(host('h-map')) == base.PowerState('on', None)
    backend = make_backend()
    assert backend.state(host('h1', redfish_system=emulator.system_url(
        OFF_ID))) == base.PowerState('off', None)
    # a BMC address naming the system, without a scheme
    address = '127.0.0.1:%d%s%s' % (emulator.port, SYSTEMS, ON_ID)
    with pytest.raises(exceptions.CloudUnavailable):
        # no scheme is https, which the emulator does not speak
        backend.state(host('h2', bmc_address=address))
    assert backend.state(host('h2', bmc_address='http://' + address)) == \
        base.PowerState('on', None)


def test_a_bmc_of_several_systems_needs_the_system_named(emulator):
    backend = make_backend()
    with pytest.raises(exceptions.CloudUnavailable) as caught:
        backend.state(host('h1', bmc_address=emulator.url))
    assert 'Redfish' in str(caught.value)


def test_a_host_without_mapping_is_cloud_unavailable(emulator):
    with pytest.raises(exceptions.CloudUnavailable) as caught:
        make_backend().state(host('nowhere'))
    assert 'redfish_system' in str(caught.value)


def test_power_off_waits_for_off_and_is_idempotent(emulator):
    backend = make_backend()
    target = host('h-on', redfish_system=emulator.system_url(ON_ID))
    assert backend.state(target).power == 'on'
    found = backend.power_off(target)
    assert found == base.PowerState('off', None)
    assert backend.state(target) == base.PowerState('off', None)
    assert emulator.resets(ON_ID) == 1
    # off already: nothing is asked of the BMC
    assert backend.power_off(target) == base.PowerState('off', None)
    assert emulator.resets(ON_ID) == 1


def test_power_on_waits_for_on_and_is_idempotent(emulator):
    backend = make_backend()
    target = host('h-off', redfish_system=emulator.system_url(OFF_ID))
    assert backend.state(target).power == 'off'
    assert backend.power_on(target) == base.PowerState('on', None)
    assert emulator.resets(OFF_ID) == 1
    assert backend.power_on(target) == base.PowerState('on', None)
    assert emulator.resets(OFF_ID) == 1
    # and back off, so that the module leaves the systems as it found them
    assert backend.power_off(target).power == 'off'


def test_an_unreachable_bmc_is_cloud_unavailable(emulator):
    backend = make_backend()
    dead = 'http://127.0.0.1:%d%s%s' % (free_port(), SYSTEMS, ON_ID)
    started = time.monotonic()
    for action in (backend.state, backend.power_on, backend.power_off):
        with pytest.raises(exceptions.CloudUnavailable) as caught:
            action(host('h-dead', redfish_system=dead))
        assert 'Redfish' in str(caught.value)
    assert time.monotonic() - started < 5


def test_a_refused_power_on_is_cloud_unavailable(emulator):
    backend = make_backend()
    target = host('h-off', redfish_system=emulator.system_url(OFF_ID))
    assert backend.state(target).power == 'off'
    emulator.refuse_power_on(OFF_ID)
    try:
        with pytest.raises(exceptions.CloudUnavailable) as caught:
            backend.power_on(target)
        assert 'Redfish' in str(caught.value)
        assert backend.state(target).power == 'off'
    finally:
        emulator.allow_power_on()
    # the BMC answers again: the same call powers it on
    assert backend.power_on(target).power == 'on'
    assert backend.power_off(target).power == 'off'


def test_a_system_the_bmc_lacks_is_cloud_unavailable(emulator):
    backend = make_backend()
    with pytest.raises(exceptions.CloudUnavailable) as caught:
        backend.power_on(host('h-x', redfish_system=emulator.system_url(
            'no-such-system')))
    assert 'not found' in str(caught.value)


def test_no_power_readings_where_the_chassis_has_none(emulator):
    # the emulator's chassis offer Thermal but no Power resource
    backend = make_backend()
    assert backend.power_watts(
        host('h-on', redfish_system=emulator.system_url(ON_ID))) is None


def test_a_transition_that_never_ends_times_out(emulator):
    backend = make_backend()
    target = host('h-off', redfish_system=emulator.system_url(OFF_ID))
    backend.wait(target, 'off')  # off already: returns at once
    with pytest.raises(base.TransitionTimeout) as caught:
        # nothing asked: the system stays off, never on
        backend.wait(target, 'on', timeout=0.3)
    assert 'still off' in str(caught.value)
    assert isinstance(caught.value, exceptions.CloudUnavailable)


# -- power readings: sushy-tools' static Redfish responder ------------------
#
# The emulator's chassis have no Power resource, so the readings are read
# from ``sushy-static`` serving Redfish documents written here: a system
# alone in its chassis with PowerControl readings, two systems sharing an
# enclosure (not this host's watts), one whose chassis reports power
# supplies only, and one whose chassis has no Power resource.

def _ref(path):
    return {'@odata.id': '/redfish/v1/' + path}


def _system(ident, chassis, resets=('On', 'ForceOff', 'GracefulShutdown')):
    return {'@odata.id': '/redfish/v1/Systems/' + ident,
            '@odata.type': '#ComputerSystem.v1_13_0.ComputerSystem',
            'Id': ident, 'Name': ident, 'PowerState': 'On',
            'Links': {'Chassis': [_ref('Chassis/' + chassis)]},
            'Actions': {'#ComputerSystem.Reset': {
                'target': '/redfish/v1/Systems/%s/Actions/'
                          'ComputerSystem.Reset' % ident,
                'ResetType@Redfish.AllowableValues': list(resets)}}}


def _chassis(ident, systems, power=True):
    doc = {'@odata.id': '/redfish/v1/Chassis/' + ident,
           '@odata.type': '#Chassis.v1_5_0.Chassis',
           'Id': ident, 'Name': ident, 'ChassisType': 'RackMount',
           'Links': {'ComputerSystems': [_ref('Systems/' + s)
                                         for s in systems]}}
    if power:
        doc['Power'] = _ref('Chassis/%s/Power' % ident)
    return doc


def _power(ident, controls=(), supplies=()):
    return {'@odata.id': '/redfish/v1/Chassis/%s/Power' % ident,
            '@odata.type': '#Power.v1_5_0.Power', 'Id': 'Power',
            'Name': 'Power',
            'PowerControl': [{'MemberId': str(i), 'PowerConsumedWatts': w}
                             for i, w in enumerate(controls)],
            'PowerSupplies': [{'MemberId': str(i), 'Name': 'PSU%d' % i,
                               'LastPowerOutputWatts': w}
                              for i, w in enumerate(supplies)]}


MOCKUP = {
    '': {'@odata.id': '/redfish/v1/',
         '@odata.type': '#ServiceRoot.v1_5_0.ServiceRoot',
         'Id': 'RootService', 'Name': 'Root Service',
         'RedfishVersion': '1.5.0',
         'UUID': '0c0f0a31-1d6b-4c2e-9f6c-0000000000ff',
         'Systems': _ref('Systems'), 'Chassis': _ref('Chassis')},
    'Systems': {'@odata.id': '/redfish/v1/Systems',
                '@odata.type': '#ComputerSystemCollection.'
                               'ComputerSystemCollection',
                'Name': 'Systems', 'Members': [
                    _ref('Systems/' + s) for s in ('s1', 's2', 's3', 's4',
                                                   's5')],
                'Members@odata.count': 5},
    'Systems/s1': _system('s1', 'c1'),
    'Systems/s2': _system('s2', 'enclosure'),
    'Systems/s3': _system('s3', 'enclosure'),
    'Systems/s4': _system('s4', 'c4'),
    'Systems/s5': _system('s5', 'c5', resets=('On', 'ForceOff')),
    'Chassis/c1': _chassis('c1', ['s1']),
    'Chassis/c1/Power': _power('c1', controls=[182]),
    'Chassis/enclosure': _chassis('enclosure', ['s2', 's3']),
    'Chassis/enclosure/Power': _power('enclosure', controls=[900]),
    'Chassis/c4': _chassis('c4', ['s4']),
    'Chassis/c4/Power': _power('c4', supplies=[60, 55.5]),
    'Chassis/c5': _chassis('c5', ['s5'], power=False),
}


@pytest.fixture(scope='module')
def static_bmc(tmp_path_factory):
    folder = tmp_path_factory.mktemp('redfish-static')
    for path, doc in MOCKUP.items():
        target = folder.joinpath(*path.split('/')) if path else folder
        target.mkdir(parents=True, exist_ok=True)
        target.joinpath('index.json').write_text(json.dumps(doc))
    port = free_port()
    url = 'http://127.0.0.1:%d' % port
    log_path = str(folder / 'static.log')
    with open(log_path, 'w') as log:
        proc = subprocess.Popen(
            [sys.executable, '-m', 'sushy_tools.static.main',
             '--interface', '127.0.0.1', '--port', str(port),
             '--mockup-files', str(folder)],
            stdout=log, stderr=subprocess.STDOUT,
            # its request bodies are printed: unbuffered, to read them
            env=dict(os.environ, PYTHONUNBUFFERED='1'))
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                if requests.get(url + '/redfish/v1/',
                                timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                with open(log_path) as log:
                    pytest.fail('sushy-static did not start on %s:\n%s' % (
                        url, log.read()[-3000:]))
            time.sleep(0.1)
        yield types.SimpleNamespace(url=url, log_path=log_path)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@pytest.mark.parametrize('system, watts', [
    ('s1', 182.0),   # PowerControl of its own chassis
    ('s2', None),    # an enclosure of several systems: not its watts
    ('s4', 115.5),   # power supplies' output when PowerControl is empty
    ('s5', None),    # no Power resource
])
def test_power_readings_of_the_systems_chassis(static_bmc, system, watts):
    backend = make_backend()
    found = backend.power_watts(host('h', redfish_system='%s%s%s' % (
        static_bmc.url, SYSTEMS, system)))
    assert found == watts


def _resets_asked(static_bmc, system):
    """The ResetType values sushy-static was sent for ``system``, in order:
    it prints each request's headers and body, then logs its request
    line."""
    asked, body = [], None
    with open(static_bmc.log_path) as log:
        for line in log:
            found = re.match(r"Data: b'(.*)'$", line.strip())
            if found:
                body = found.group(1)
                continue
            if '"POST %s%s/Actions/ComputerSystem.Reset ' % (
                    SYSTEMS, system) in line:
                asked.append(json.loads(body)['ResetType'])
    return asked


def test_a_shutdown_that_does_not_happen_is_forced(static_bmc):
    # sushy-static accepts every reset and changes nothing: the graceful
    # shutdown times out, ForceOff follows, and then the wait times out
    backend = make_backend(action_timeout=1)
    with pytest.raises(base.TransitionTimeout):
        backend.power_off(host('h', redfish_system='%s%ss1' % (
            static_bmc.url, SYSTEMS)))
    assert _resets_asked(static_bmc, 's1') == ['GracefulShutdown',
                                               'ForceOff']


def test_a_bmc_without_graceful_shutdown_gets_force_off(static_bmc):
    backend = make_backend(action_timeout=0)
    backend.power_off(host('h', redfish_system='%s%ss5' % (
        static_bmc.url, SYSTEMS)))
    assert _resets_asked(static_bmc, 's5') == ['ForceOff']
