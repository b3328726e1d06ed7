"""sushy-tools' ``sushy-emulator`` as a test's Redfish BMC: its fake systems
driver (no libvirt, no cloud), on 127.0.0.1 and a free port, its state in
a folder of the test's, started and stopped by PID.

The fake driver applies a power change some time after it is asked (1 to
11 s, at random).  The emulator's configuration (a Python file, as Flask
reads it) makes that 1 s so that tests stay fast while a backend's wait
for a transition stays in play.

A system can be made to refuse power on (:meth:`Emulator.refuse_power_on`):
its ``ComputerSystem.Reset`` to on is answered 500, as a BMC with a power
fault answers, until :meth:`Emulator.allow_power_on`.  The switch is a
file in the emulator's folder that its driver reads at each request, so it
changes while the emulator runs.
"""

import os
import socket
import subprocess
import sys
import time

import requests

SYSTEMS = '/redfish/v1/Systems/'
START_TIMEOUT = 15
STOP_TIMEOUT = 10

CONFIG = '''
SUSHY_EMULATOR_LISTEN_IP = '127.0.0.1'
SUSHY_EMULATOR_FAKE_DRIVER = True
SUSHY_EMULATOR_STATE_DIR = %(state)r
SUSHY_EMULATOR_FAKE_SYSTEMS = %(systems)r

import os as _os
import random as _random
from sushy_tools import error as _error
from sushy_tools.emulator.resources.systems import fakedriver as _fake


class _SoonRandom(_random.Random):
    def randint(self, low, high):
        return 1


# power changes land within 1 s instead of 1 to 11 s
_fake.random = _SoonRandom()

_REFUSED = %(refused)r
_set_power_state = _fake.FakeDriver.set_power_state


def _refused(uuid):
    try:
        with open(_REFUSED) as listed:
            return uuid in listed.read().split()
    except FileNotFoundError:
        return False


def _set_power_state_unless_refused(self, identity, state):
    if 'On' in state and _refused(self.uuid(identity)):
        raise _error.FishyError('power on failed: power supply fault',
                                code=500)
    return _set_power_state(self, identity, state)


_fake.FakeDriver.set_power_state = _set_power_state_unless_refused
'''


def free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def system(uuid, name, power_state='On'):
    """One fake system of the emulator's configuration."""
    return {'uuid': uuid, 'name': name, 'power_state': power_state,
            'nics': []}


class EmulatorFailed(Exception):
    """The emulator did not answer within START_TIMEOUT; its log's tail
    is the message."""


class Emulator:
    def __init__(self, folder, systems):
        self.folder = folder
        self.systems = systems
        self.port = free_port()
        self.url = 'http://127.0.0.1:%d' % self.port
        self.log_path = os.path.join(folder, 'emulator.log')
        self.refused_path = os.path.join(folder, 'refuse-power-on')
        self.proc = None

    def start(self):
        config = os.path.join(self.folder, 'emulator.conf')
        with open(config, 'w') as out:
            out.write(CONFIG % {
                'state': os.path.join(self.folder, 'state'),
                'systems': self.systems, 'refused': self.refused_path})
        with open(self.log_path, 'w') as log:
            self.proc = subprocess.Popen(
                [sys.executable, '-m', 'sushy_tools.emulator.main',
                 '--config', config, '--interface', '127.0.0.1',
                 '--port', str(self.port)],
                stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, cwd=self.folder)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                if requests.get(self.url + '/redfish/v1/',
                                timeout=1).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.1)
        self.stop()
        with open(self.log_path) as log:
            raise EmulatorFailed('sushy-emulator did not start on %s:\n%s' % (
                self.url, log.read()[-3000:]))

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(STOP_TIMEOUT)

    def system_url(self, identity):
        return self.url + SYSTEMS + identity

    def resets(self, identity):
        """How many ComputerSystem.Reset requests a system got so far, from
        the emulator's request log."""
        with open(self.log_path) as log:
            return sum(1 for line in log if 'POST %s%s/Actions/Computer'
                       'System.Reset' % (SYSTEMS, identity) in line)

    def power_state(self, identity):
        """The system's PowerState as the emulator answers it."""
        resp = requests.get(self.system_url(identity), timeout=5)
        resp.raise_for_status()
        return resp.json()['PowerState']

    def reset(self, identity, reset_type):
        resp = requests.post(
            self.system_url(identity) + '/Actions/ComputerSystem.Reset',
            json={'ResetType': reset_type}, timeout=5)
        resp.raise_for_status()

    def refuse_power_on(self, *identities):
        with open(self.refused_path, 'a') as out:
            out.write(''.join('%s\n' % i for i in identities))

    def allow_power_on(self):
        if os.path.exists(self.refused_path):
            os.remove(self.refused_path)
