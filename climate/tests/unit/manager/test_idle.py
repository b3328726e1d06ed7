"""Idle reclaim (microversion 1.17): the rules (``climate.lease.idle``)
and a lease's life through the in-process API on SQLite with a host
backend that reads servers: warned once, ended once, a lease used again
not, one kept never."""

import datetime

import pytest

from climate import context
from climate import dates
from climate.db import api as db_api
from climate.db import lease_json
from climate.db import models
from climate import exceptions
from climate.lease import idle as idle_rules
from climate.manager.workers import idle as idle_worker
from climate import states
from climate.tests import fixtures

V = '1.17'
NOW = datetime.datetime(2030, 1, 1, 12, 0, 0)
HOUR = datetime.timedelta(hours=1)


# -- the rules ---------------------------------------------------------------

@pytest.mark.parametrize('body, message', [
    ({}, 'warn_after'),
    ({'warn_after': 0}, 'at least 1'),
    ({'warn_after': '3600'}, "not '3600'"),
    ({'warn_after': 3600, 'end_after': 3600}, 'at least 3601'),
    ({'warn_after': 3600, 'resource_types': []}, 'resource_types'),
    ({'warn_after': 3600, 'colour': 'red'}, 'colour: not a field'),
])
def test_a_policy_is_checked(body, message):
    with pytest.raises((exceptions.InvalidInput,
                        exceptions.MissingParameter)) as err:
        idle_rules.parse_policy(body)
    assert message in str(err.value)


def test_decide():
    policy = idle_rules.Policy(None, 6 * 3600, 9 * 3600)
    start = NOW - 7 * HOUR

    def decide(readings, last_used=None, warned=None, now=NOW):
        return idle_rules.decide(policy, readings, last_used, start, warned,
                                 now).action
    assert decide([None]) == idle_rules.UNKNOWN
    assert decide([]) == idle_rules.UNKNOWN
    assert decide([False, True]) == idle_rules.USED
    assert decide([False]) == idle_rules.WARN
    # idle counts from the last use
    assert decide([False], last_used=NOW - 2 * HOUR) == idle_rules.WAIT
    assert decide([False], warned=NOW) == idle_rules.WAIT
    assert decide([False], warned=NOW, now=NOW + 2 * HOUR) == \
        idle_rules.END
    # warned only, never ended, without end_after
    warn_only = idle_rules.Policy(None, 60, 0)
    assert idle_rules.decide(warn_only, [False], None, start, NOW,
                             NOW + 100 * HOUR).action == idle_rules.WAIT
    assert idle_rules.covers(idle_rules.Policy(['physical:host'], 60, 0),
                             'physical:host')
    assert not idle_rules.covers(idle_rules.Policy(['physical:host'], 60,
                                                   0), 'noop')


# -- through the service -------------------------------------------------------

@pytest.fixture
def env():
    with fixtures.ClimateEnvironment() as environment:
        for name in ('compute-1', 'compute-2'):
            resp = environment.request('POST', '/v1/os-hosts',
                                       persona='admin', body={'name': name})
            assert resp.status_int == 201, resp.text
        yield environment


class Servers:
    """The hosts backend's reading of servers, as the test sets it."""

    def __init__(self, env, monkeypatch):
        self.running = False
        backend = env.plugin('physical:host').backend
        monkeypatch.setattr(backend, 'reports_servers', True)
        monkeypatch.setattr(backend, 'host_has_servers',
                            lambda host: self.running)


def started(env, name, **extra):
    body = dict({'name': name, 'start_date': fixtures.iso(60),
                 'end_date': fixtures.iso(48 * 3600),
                 'reservations': [{'resource_type': 'physical:host',
                                   'min': 1, 'max': 1}]}, **extra)
    resp = env.request('POST', '/v1/leases', body=body, version=V)
    assert resp.status_int == 201, resp.text
    lease = resp.json['lease']
    with db_api.writer(context.admin_context()) as session:
        session.query(models.Lease).filter_by(id=lease['id']).update(
            {'status': states.ACTIVE})
        session.query(models.Reservation).filter_by(
            lease_id=lease['id']).update({'status': states.RES_ACTIVE})
        lease_json.changed(session, (lease['id'],))
    return lease


def get(env, lease_id):
    return env.request('GET', '/v1/leases/' + lease_id,
                       version=V).json['lease']


def set_policy(env, project='project-a', **body):
    resp = env.request('PUT', '/v1/idle-policies/' + project, body=body,
                       persona='admin', version=V)
    assert resp.status_int == 200, resp.text
    return resp.json['idle_policy']


def test_an_idle_lease_is_warned_once_then_ended_once(env, monkeypatch):
    servers = Servers(env, monkeypatch)
    lease = started(env, 'idle')
    kept = started(env, 'kept', keep_idle=True)
    assert kept['keep_idle'] is True and lease['keep_idle'] is False
    worker = idle_worker.IdleWorker(env.manager.idle)
    ctx = context.admin_context()
    # no policy: not watched
    assert worker.run_pass(ctx) == {}
    set_policy(env, warn_after=6 * 3600, end_after=9 * 3600)
    now = dates.utcnow()
    assert worker.run_pass(ctx, now + 2 * HOUR) == {
        lease['id']: idle_rules.WAIT}
    done = worker.run_pass(ctx, now + 7 * HOUR)
    assert done == {lease['id']: idle_rules.WARN}
    warned = get(env, lease['id'])
    assert warned['idle_warned_at'] is not None
    assert warned['status_reason'].startswith('idle since ')
    assert 'it ends at' in warned['status_reason']
    assert [e['event_type'] for e in warned['events']].count(
        'notification') == 1
    # a second manager, or the same again: warned once
    assert worker.run_pass(ctx, now + 7 * HOUR) == {
        lease['id']: idle_rules.WAIT}
    assert [e['event_type'] for e in get(env, lease['id'])['events']
            ].count('notification') == 1
    assert env.manager.idle.check(ctx, lease['id'], now + 10 * HOUR) == \
        idle_rules.END
    ended = get(env, lease['id'])
    assert ended['status_reason'].startswith('ended early by idle reclaim')
    end = dates.parse_output(ended['end_date'])
    assert end - (now + 10 * HOUR) <= datetime.timedelta(seconds=1)
    assert ended['idle_ended_at'] is not None
    # once, whatever the other managers' clocks: one whose pass began
    # earlier does not move the end again
    assert env.manager.idle.check(ctx, lease['id'], now + 10 * HOUR) is None
    assert env.manager.idle.check(
        ctx, lease['id'], now + 10 * HOUR - datetime.timedelta(
            seconds=5)) is None
    assert get(env, lease['id'])['end_date'] == ended['end_date']
    # the kept lease was never looked at
    assert get(env, kept['id'])['idle_warned_at'] is None
    assert servers.running is False


def test_a_lease_used_again_is_not_reclaimed(env, monkeypatch):
    servers = Servers(env, monkeypatch)
    lease = started(env, 'used')
    set_policy(env, warn_after=3600, end_after=7200,
               resource_types=['physical:host'])
    worker = idle_worker.IdleWorker(env.manager.idle)
    ctx = context.admin_context()
    now = dates.utcnow()
    assert worker.run_pass(ctx, now + 2 * HOUR)[lease['id']] == \
        idle_rules.WARN
    servers.running = True
    assert worker.run_pass(ctx, now + 2 * HOUR + HOUR / 2)[lease['id']] == \
        idle_rules.USED
    shown = get(env, lease['id'])
    assert shown['idle_warned_at'] is None and shown['status_reason'] is None
    assert shown['last_used_at'] is not None
    servers.running = False
    # idle counts from the last use again: not yet
    assert worker.run_pass(ctx, now + 3 * HOUR)[lease['id']] == \
        idle_rules.WAIT


def test_a_backend_that_knows_no_servers_reclaims_nothing(env):
    lease = started(env, 'static')
    set_policy(env, warn_after=60)
    worker = idle_worker.IdleWorker(env.manager.idle)
    done = worker.run_pass(context.admin_context(),
                           dates.utcnow() + 10 * HOUR)
    assert done == {lease['id']: idle_rules.UNKNOWN}


def test_policies_through_the_api(env):
    assert env.request('GET', '/v1/idle-policies/project-a',
                       version='1.16').status_int == 404
    resp = env.request('GET', '/v1/idle-policies/project-a', version=V)
    assert resp.status_int == 404
    assert 'never reclaimed' in resp.json['error_message']
    resp = env.request('PUT', '/v1/idle-policies/project-a', version=V,
                       body={'warn_after': 3600})
    assert resp.status_int == 403  # a member does not set it
    shown = set_policy(env, warn_after=3600)
    assert (shown['warn_after'], shown['end_after'],
            shown['resource_types'], shown['default']) == (
                3600, 0, None, False)
    mine = env.request('GET', '/v1/idle-policies/project-a',
                       version=V).json['idle_policy']
    assert mine['warn_after'] == 3600
    assert env.request('GET', '/v1/idle-policies/project-a', version=V,
                       project='project-b').status_int in (403, 404)
    listed = env.request('GET', '/v1/idle-policies', version=V,
                         persona='admin').json['idle_policies']
    assert [p['project_id'] for p in listed] == ['project-a']
    resp = env.request('POST', '/v1/leases', version='1.16', body={
        'name': 'x', 'start_date': fixtures.iso(3600),
        'end_date': fixtures.iso(7200), 'keep_idle': True,
        'reservations': [{'resource_type': 'noop'}]})
    assert resp.status_int == 400
    assert 'keep_idle needs microversion 1.17' in resp.json['error_message']
    resp = env.request('POST', '/v1/leases', version=V, body={
        'name': 'x', 'start_date': fixtures.iso(3600),
        'end_date': fixtures.iso(7200), 'keep_idle': 'yes',
        'reservations': [{'resource_type': 'noop'}]})
    assert resp.status_int == 400
    assert "keep_idle is true or false, not 'yes'" in \
        resp.json['error_message']
    assert env.request('DELETE', '/v1/idle-policies/project-a', version=V,
                       persona='admin').status_int == 204
    assert env.request('DELETE', '/v1/idle-policies/project-a', version=V,
                       persona='admin').status_int == 404
