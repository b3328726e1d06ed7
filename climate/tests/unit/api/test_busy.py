"""A lease an event is working on, and SQLite under concurrent writers.

The database behaves as climate-all's embedded default does.
"""

import threading
import time

import pytest

from climate import context
from climate.db import api as db_api
from climate.tests import fixtures


@pytest.fixture(scope='module')
def plain_env():
    with fixtures.ClimateEnvironment() as env:
        yield env


def _wait(predicate, timeout=10):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail('timed out')
        time.sleep(0.02)


def test_update_and_delete_while_the_start_runs_are_409(plain_env,
                                                        monkeypatch):
    plugin = plain_env.plugin()
    on_start = plugin.on_start
    entered, release = threading.Event(), threading.Event()

    def slow_start(ctx, lease, reservation, event):
        entered.set()
        assert release.wait(10)
        on_start(ctx, lease, reservation, event)

    monkeypatch.setattr(plugin, 'on_start', slow_start)
    # a plugin that calls a slow cloud: STARTING is committed before it runs
    monkeypatch.setattr(plugin, 'acts_in_cloud', True, raising=False)
    resp = plain_env.request('POST', '/v1/leases', body=fixtures.lease_body(
        name='busy', start='now'))
    assert resp.status_int == 201, resp.text
    lease = resp.json['lease']
    url = '/v1/leases/' + lease['id']
    try:
        assert entered.wait(10)
        shown = plain_env.request('GET', url).json['lease']
        assert shown['status'] == 'STARTING'
        assert shown['events'][0]['status'] == 'IN_PROGRESS'
        # Blazar's sentence first (it answers 500 there)
        why = ('Invalid lease status. Lease %s is STARTING: start_lease is '
               'running; try again in a moment' % lease['id'])

        resp = plain_env.request('DELETE', url)
        assert resp.status_int == 409, resp.text
        assert resp.json == {'error_code': 409, 'error_name': 'LeaseBusy',
                             'error_message': why}

        resp = plain_env.request('PUT', url, body={'prolong_for': '1h'})
        assert resp.status_int == 409, resp.text
        assert resp.json['error_message'] == why

        assert plain_env.request('GET', url).json['lease'] == shown
    finally:
        release.set()

    def active():
        return plain_env.request('GET', url).json['lease']['status'] == (
            'ACTIVE')

    _wait(active)
    assert plain_env.noop_actions(lease['id']) == [
        ('reserve', lease['id']), ('on_start', lease['id'])]
    resp = plain_env.request('DELETE', url)
    assert resp.status_int == 204


def test_read_then_write_survives_a_concurrent_commit(plain_env):
    resp = plain_env.request('POST', '/v1/leases', body=fixtures.lease_body(
        name='contended', start='2090-01-01 00:00'))
    lease_id = resp.json['lease']['id']
    has_read, other_done = threading.Event(), threading.Event()
    errors = []

    def other_writer():
        ctx = context.admin_context()
        has_read.wait(5)
        try:
            with db_api.writer(ctx):
                db_api.lease_get(ctx, lease_id).status_reason = 'second'
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
        other_done.set()

    thread = threading.Thread(target=other_writer)
    thread.start()
    ctx = context.admin_context()
    try:
        with db_api.writer(ctx):
            row = db_api.lease_get(ctx, lease_id)  # reads first
            has_read.set()
            other_done.wait(1)  # a correct database makes the other wait
            row.status_reason = 'first'
    finally:
        has_read.set()
        thread.join(10)
    assert errors == []
    final = plain_env.request('GET', '/v1/leases/' + lease_id).json['lease']
    assert final['status_reason'] == 'second'
