"""The wake of a pre-created server against a scripted Nova: it waits for
a shelve still in progress to end before it decides what to do."""

import types

import pytest

from climate import exceptions
from climate.plugins.virtual_instance.backends import nova_servers


class Server:
    def __init__(self, status, task=None, host=None):
        self.info = {'id': 'srv', 'status': status,
                     'OS-EXT-STS:task_state': task,
                     'OS-EXT-SRV-ATTR:host': host}

    def to_dict(self):
        return self.info


class ScriptedNova:
    """``servers.get`` answers the next state of ``script`` (the last one
    for ever); ``unshelve`` switches to ``after_unshelve``."""

    def __init__(self, script, after_unshelve):
        self.script = list(script)
        self.after_unshelve = list(after_unshelve)
        self.calls = []
        self.servers = self

    def get(self, sid):
        state = self.script.pop(0) if len(self.script) > 1 else \
            self.script[0]
        return Server(*state)

    def unshelve(self, sid, host=None):
        self.calls.append(('unshelve', sid, host))
        self.script = self.after_unshelve

    def shelve_offload(self, sid):
        self.calls.append(('shelve_offload', sid))
        self.script = [('SHELVED_OFFLOADED', None)]


@pytest.fixture
def actions(monkeypatch):
    monkeypatch.setattr(nova_servers, 'POLL_INTERVAL', 0)
    monkeypatch.setattr(nova_servers, 'WAIT_TIMEOUT', 5)

    def make(script, after_unshelve=(('ACTIVE', None, 'c1'),)):
        fake = ScriptedNova(script, after_unshelve)
        backend = types.SimpleNamespace(
            nova=fake, _aggregate_up=lambda *a, **k: types.SimpleNamespace(
                id=7))
        acts = nova_servers.ServerActions(backend)
        acts._nova_at = lambda version: fake
        return acts, fake
    return make


def wake(acts):
    return acts.wake({'id': 'r1', 'server_id': 'srv'}, 'p1',
                     {'service_name': 'c1'}, None)


def test_a_shelve_in_progress_is_waited_for_then_unshelved(actions):
    acts, fake = actions([('ACTIVE', 'shelving'),
                          ('SHELVED', 'shelving_image_uploading'),
                          ('SHELVED', 'shelving_offloading'),
                          ('SHELVED_OFFLOADED', None)])
    answer = wake(acts)
    assert fake.calls == [('unshelve', 'srv', 'c1')]
    assert answer == {'server_status': 'ACTIVE', 'aggregate_id': 7,
                      'server_error': None}


def test_a_shelved_server_not_offloaded_is_offloaded_first(actions):
    acts, fake = actions([('SHELVED', None)])
    assert wake(acts)['server_status'] == 'ACTIVE'
    assert fake.calls == [('shelve_offload', 'srv'),
                          ('unshelve', 'srv', 'c1')]


def test_an_unshelve_the_scheduler_refused_is_an_error(actions):
    acts, fake = actions([('SHELVED_OFFLOADED', None)],
                         after_unshelve=[('SHELVED_OFFLOADED', 'unshelving'),
                                         ('SHELVED_OFFLOADED', None)])
    with pytest.raises(exceptions.CloudUnavailable, match='could not be '
                       'unshelved onto c1'):
        wake(acts)


def test_a_server_its_user_started_elsewhere_is_said(actions):
    acts, fake = actions([('ACTIVE', 'unshelving', 'c9'),
                          ('ACTIVE', None, 'c9')])
    answer = wake(acts)
    assert fake.calls == []
    assert 'runs outside the reserved capacity' in answer['server_error']
