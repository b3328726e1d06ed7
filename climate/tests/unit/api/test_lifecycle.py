"""Leases driven through the API while the in-process engine runs them.

What YAML cannot see well: each plugin action ran exactly once (the noop
plugin's action log), what a retried event leaves on the lease, and the
request context the manager receives.
"""

import time

from oslo_config import cfg
import pytest

from climate.db import models
from climate.manager import leases as lease_service
from climate.tests import fixtures
from climate.tests.fixtures import climate_env  # noqa: F401 - pytest fixture


def _wait_for(env, lease_id, predicate, timeout=10):
    """Poll GET until ``predicate(lease)``; returns the lease."""
    deadline = time.monotonic() + timeout
    while True:
        resp = env.request('GET', '/v1/leases/' + lease_id)
        assert resp.status_int == 200, resp.text
        lease = resp.json['lease']
        if predicate(lease):
            return lease
        if time.monotonic() > deadline:
            pytest.fail('lease never got there: %r' % (lease,))
        time.sleep(0.05)


def _status(name):
    return lambda lease: lease['status'] == name


def _create(env, **kw):
    resp = env.request('POST', '/v1/leases', body=fixtures.lease_body(**kw))
    assert resp.status_int == 201, resp.text
    return resp.json['lease']


def _raise(exc):
    def fail(*args, **kwargs):
        raise exc
    return fail


def test_each_event_runs_its_action_exactly_once(climate_env):
    lease = _create(climate_env, name='once', start='now',
                    end=fixtures.iso(4), before_end_date=fixtures.iso(2),
                    reservations=[{'resource_type': 'noop'},
                                  {'resource_type': 'noop'}])
    lid = lease['id']
    done = _wait_for(climate_env, lid, _status('TERMINATED'))
    time.sleep(0.6)  # give a duplicate run time to show up
    actions = climate_env.noop_actions(lid)
    assert sorted(actions) == sorted(
        [('reserve', lid)] * 2 + [('on_start', lid)] * 2 +
        [('before_end', lid)] * 2 + [('on_end', lid)] * 2)
    assert [a for a, _l in actions][:2] == ['reserve', 'reserve']
    assert [a for a, _l in actions][-2:] == ['on_end', 'on_end']
    assert [(e['event_type'], e['status'], e['attempts'])
            for e in done['events']] == [('start_lease', 'DONE', 1),
                                         ('before_end_lease', 'DONE', 1),
                                         ('end_lease', 'DONE', 1)]
    assert [r['status'] for r in done['reservations']] == ['deleted'] * 2


def test_deleting_an_active_lease_reclaims_then_forgets_it(climate_env):
    lease = _create(climate_env, name='reclaimed', start='now')
    lid = lease['id']
    _wait_for(climate_env, lid, _status('ACTIVE'))
    resp = climate_env.request('DELETE', '/v1/leases/' + lid)
    assert resp.status_int == 204
    assert resp.body == b''
    assert climate_env.noop_actions(lid) == [
        ('reserve', lid), ('on_start', lid), ('on_end', lid),
        ('delete', lid)]
    assert climate_env.request('GET', '/v1/leases/' + lid).status_int == 404
    # its events are gone with it: the engine has nothing left to run
    assert lid not in [e.lease_id for e in climate_env.rows(
        models.Event)]


def test_deleting_a_pending_lease_releases_without_reclaiming(climate_env):
    lease = _create(climate_env, name='never-started',
                    start='2090-01-01 00:00')
    lid = lease['id']
    assert climate_env.request('DELETE', '/v1/leases/' + lid).status_int == (
        204)
    assert climate_env.noop_actions(lid) == [('reserve', lid),
                                             ('delete', lid)]


def test_a_retried_event_that_succeeds_leaves_no_stale_reason(climate_env,
                                                              monkeypatch):
    plugin = climate_env.plugin()
    before_end = plugin.before_end
    calls = []

    def fail_once(ctx, lease, reservation, event):
        calls.append(event.attempts)
        if len(calls) == 1:
            raise RuntimeError('mail server down')
        before_end(ctx, lease, reservation, event)

    monkeypatch.setattr(plugin, 'before_end', fail_once)
    lease = _create(climate_env, name='retried', start='now',
                    end='2099-01-01 00:00', before_end_date=fixtures.iso(2))

    def notice_done(lease):
        return lease['events'][1]['status'] == 'DONE'

    done = _wait_for(climate_env, lease['id'], notice_done)
    assert calls == [1, 2]
    assert done['events'][1]['attempts'] == 2
    assert done['events'][1]['last_error'] is None
    assert done['status'] == 'ACTIVE'
    assert done['status_reason'] is None


def test_a_failing_start_is_visible_then_retried(climate_env, monkeypatch):
    plugin = climate_env.plugin()
    on_start = plugin.on_start
    calls = []

    def fail_once(ctx, lease, reservation, event):
        calls.append(event.attempts)
        if len(calls) == 1:
            raise RuntimeError('nova said no')
        on_start(ctx, lease, reservation, event)

    monkeypatch.setattr(plugin, 'on_start', fail_once)
    lease = _create(climate_env, name='start-retried', start='now')
    done = _wait_for(climate_env, lease['id'], _status('ACTIVE'))
    assert calls == [1, 2]
    assert done['events'][0]['attempts'] == 2
    assert done['status_reason'] is None
    assert climate_env.noop_actions(lease['id']) == [
        ('reserve', lease['id']), ('on_start', lease['id'])]


def test_a_start_that_always_fails_ends_in_error(climate_env, monkeypatch):
    monkeypatch.setattr(climate_env.plugin(), 'on_start',
                        _raise(RuntimeError('nova is gone')))
    cfg.CONF.set_override('event_max_attempts', 2, group='manager')
    try:
        lease = _create(climate_env, name='doomed', start='now')
        failed = _wait_for(climate_env, lease['id'], _status('ERROR'))
    finally:
        cfg.CONF.clear_override('event_max_attempts', group='manager')
    start = failed['events'][0]
    assert (start['event_type'], start['status'], start['attempts']) == (
        'start_lease', 'ERROR', 2)
    assert start['last_error'] == 'RuntimeError: nova is gone'
    assert failed['status_reason'] == (
        'start_lease failed after 2 attempts: RuntimeError: nova is gone')
    # an ERROR lease can still be deleted (and is reclaimed)
    resp = climate_env.request('DELETE', '/v1/leases/' + lease['id'])
    assert resp.status_int == 204


# -- the request context the manager sees ----------------------------------

@pytest.fixture
def seen_contexts(monkeypatch):
    seen = []
    get = lease_service.LeaseService.get

    def spy(self, ctx, lease_id):
        seen.append(ctx)
        return get(self, ctx, lease_id)

    monkeypatch.setattr(lease_service.LeaseService, 'get', spy)
    return seen


def test_identity_and_request_ids_reach_the_manager(climate_env,
                                                    seen_contexts):
    lease = _create(climate_env, name='context')
    inbound = 'req-11111111-2222-3333-4444-555555555555'
    resp = climate_env.request(
        'GET', '/v1/leases/' + lease['id'],
        headers={'X-OpenStack-Request-ID': inbound})
    assert resp.status_int == 200
    local = resp.headers['X-OpenStack-Request-ID']
    assert local.startswith('req-') and local != inbound
    [ctx] = seen_contexts
    assert ctx.global_request_id == inbound
    assert ctx.request_id == local
    assert (ctx.project_id, ctx.user_id) == ('project-a', 'member-project-a')
    assert sorted(ctx.roles) == ['member', 'reader']
    assert ctx.is_admin is False


def test_a_malformed_global_request_id_is_dropped(climate_env,
                                                  seen_contexts):
    lease = _create(climate_env, name='context-2')
    resp = climate_env.request('GET', '/v1/leases/' + lease['id'],
                               headers={'X-OpenStack-Request-ID': 'evil'})
    assert resp.status_int == 200
    [ctx] = seen_contexts
    assert ctx.global_request_id is None
    assert ctx.request_id == resp.headers['X-OpenStack-Request-ID']


def test_admin_role_makes_an_admin_context(climate_env, seen_contexts):
    lease = _create(climate_env, name='context-3')
    resp = climate_env.request('GET', '/v1/leases/' + lease['id'],
                               persona='admin', project='ops')
    assert resp.status_int == 200
    [ctx] = seen_contexts
    assert (ctx.is_admin, ctx.project_id) == (True, 'ops')
