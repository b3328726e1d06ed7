"""The wake of a pre-created server against a scripted Nova: it waits for
a shelve still in progress to end before it decides what to do."""

import types

from novaclient import exceptions as nova_exc
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

    def shelve(self, sid):
        self.calls.append(('shelve', sid))
        self.script = [('SHELVED', 'shelving'), ('SHELVED_OFFLOADED', None)]

    def delete(self, sid):
        self.calls.append(('delete', sid))


@pytest.fixture
def actions(monkeypatch):
    monkeypatch.setattr(nova_servers, 'POLL_INTERVAL', 0)
    monkeypatch.setattr(nova_servers, 'WAIT_TIMEOUT', 5)

    def make(script, after_unshelve=(('ACTIVE', None, 'c1'),)):
        fake = ScriptedNova(script, after_unshelve)
        backend = types.SimpleNamespace(
            nova=fake, aggregate_up=lambda *a, **k: types.SimpleNamespace(
                id=7), aggregate_down=lambda rid: fake.calls.append(
                    ('aggregate_down', rid)))
        acts = nova_servers.ServerActions(backend)
        acts._nova_at = lambda version: fake
        return acts, fake
    return make


def wake(acts, **kwargs):
    return acts.wake({'id': 'r1', 'server_id': 'srv'}, 'p1',
                     {'service_name': 'c1'}, None, **kwargs)


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


def test_a_server_running_elsewhere_is_moved_when_asked(actions):
    # a stack's server the periodic pass had not shelved before the start
    acts, fake = actions([('ACTIVE', None, 'c9')])
    answer = wake(acts, move_running=True)
    assert fake.calls == [('shelve', 'srv'), ('unshelve', 'srv', 'c1')]
    assert answer['server_error'] is None


def test_a_server_running_on_its_host_is_left_as_it_is(actions):
    # a retried start: woken already
    acts, fake = actions([('ACTIVE', None, 'c1')])
    answer = wake(acts, move_running=True)
    assert fake.calls == []
    assert answer == {'server_status': 'ACTIVE', 'aggregate_id': 7,
                      'server_error': None}


def test_keep_removes_only_what_the_wake_made(actions):
    acts, fake = actions([('SUSPENDED', None, 'c1')])
    answer = acts.release({'id': 'r1', 'server_id': 'srv',
                           'on_end': nova_servers.KEEP})
    assert fake.calls == [('aggregate_down', 'r1')]
    assert answer['snapshot_id'] is None


def test_a_snapshot_made_before_is_found_even_with_the_server_gone(
        actions):
    acts, fake = actions([('ACTIVE', None, 'c1')])
    images = {'reservation-r1': 'img-1'}

    def find_image(name):
        if name not in images:
            raise nova_exc.NotFound(404)
        return types.SimpleNamespace(id=images[name])

    fake.glance = types.SimpleNamespace(find_image=find_image)
    acts._get = lambda sid: None
    assert acts.snapshot({'id': 'r1', 'server_id': 'srv'}) == 'img-1'
    # no image, no server: nothing to keep
    assert acts.snapshot({'id': 'r2', 'server_id': 'srv'}) is None
    assert fake.calls == []


def test_a_snapshot_is_given_to_the_project_when_asked(actions):
    acts, fake = actions([('ACTIVE', None, 'c1')])
    patched = []
    fake.glance = types.SimpleNamespace(find_image=lambda name: (
        types.SimpleNamespace(id='img-1')))
    fake.client = types.SimpleNamespace(
        region_name='R1', session=types.SimpleNamespace(
            patch=lambda url, **kw: patched.append((url, kw))))
    assert acts.snapshot({'id': 'r1', 'server_id': 'srv'},
                         owner='p1') == 'img-1'
    [(url, kw)] = patched
    assert url == '/v2/images/img-1'
    assert kw['json'] == [{'op': 'replace', 'path': '/owner',
                           'value': 'p1'}]
    assert kw['endpoint_filter']['service_type'] == 'image'
    assert acts.snapshot({'id': 'r1', 'server_id': 'srv'}) == 'img-1'
    assert len(patched) == 1
