"""Lease trusts, the parts that need no Keystone.

Keystone itself (trusts really created, refused, deleted with the creator
disabled) is exercised in ``climate/tests/integration/test_trusts.py``.
Here: what the embedded default does (no trust), Keystone unreachable (an
``auth_url`` on a closed 127.0.0.1 port: 503, nothing written), how
Keystone's answers become API errors, and when the lease service creates
and deletes a trust.
"""

import sys
import time
from unittest import mock

from keystoneauth1 import exceptions as ks_exc
from oslo_config import cfg
from oslo_messaging._drivers import common as rpc_common
import pytest
import requests

from climate.api import errors
from climate.clients import keystone
from climate import context
from climate.db import api as db_api
from climate import exceptions
from climate.manager import trusts
from climate.plugins import base as plugin_base
from climate import rpc
from climate import states
from climate.tests import fixtures

CONF = cfg.CONF
FAR = {'start': '2090-01-01 00:00', 'end': '2090-01-02 00:00'}


@pytest.fixture
def env():
    try:
        with fixtures.ClimateEnvironment() as env:
            keystone.reset_service_sessions()
            yield env
    finally:
        keystone.reset_service_sessions()
        CONF.reset()
        CONF.unregister_opts(fixtures.password_auth_opts(),
                             group=keystone.GROUP)


def _closed_url():
    return 'http://127.0.0.1:%d/v3' % fixtures.closed_port()


def _as_keystone_deployment(env, auth_url):
    """The manager of ``env`` behaves as under auth_strategy = keystone.

    The API keeps its noauth identity headers (there is no Keystone to
    validate a token), which lets the test hand the manager a token.
    """
    CONF.register_opts(fixtures.password_auth_opts(), group=keystone.GROUP)
    for name, value in (('auth_type', 'password'), ('auth_url', auth_url),
                        ('username', 'climate'), ('password', 'secret'),
                        ('project_name', 'service'),
                        ('user_domain_name', 'Default'),
                        ('project_domain_name', 'Default'),
                        ('timeout', 5)):
        env._override(name, keystone.GROUP, value)
    env._override('auth_strategy', None, 'keystone')


def _create(env, name, headers=None):
    return env.request('POST', '/v1/leases', headers=headers,
                       body=fixtures.lease_body(name=name, start=FAR['start'],
                                                end=FAR['end']))


# -- embedded default --------------------------------------------------------

def test_noauth_lease_has_no_trust_and_needs_no_keystone(env):
    assert not trusts.enabled()
    resp = _create(env, 'embedded', headers={'X-Auth-Token': 'ignored'})
    assert resp.status_int == 201, resp.text
    assert resp.json['lease']['trust_id'] is None
    lease_id = resp.json['lease']['id']
    assert env.request('DELETE', '/v1/leases/%s' % lease_id).status_int == 204


# -- Keystone unreachable ----------------------------------------------------

def test_keystone_unreachable_at_create_is_503_and_writes_nothing(env):
    auth_url = _closed_url()
    _as_keystone_deployment(env, auth_url)
    before = env.snapshot()
    started = time.monotonic()
    resp = _create(env, 'no-keystone', headers={'X-Auth-Token': 'tok'})
    elapsed = time.monotonic() - started
    assert resp.status_int == 503, resp.text
    body = resp.json
    assert body['error_name'] == 'ServiceUnavailable'
    assert auth_url in body['error_message']
    assert 'could not be reached' in body['error_message']
    assert 'nothing was created' in body['error_message']
    assert env.snapshot() == before
    assert elapsed < 10  # refused at once, not an RPC timeout


def test_no_service_credentials_is_503(env):
    env._override('auth_strategy', None, 'keystone')
    before = env.snapshot()
    resp = _create(env, 'no-creds', headers={'X-Auth-Token': 'tok'})
    assert resp.status_int == 503, resp.text
    assert 'no service credentials' in resp.json['error_message']
    assert env.snapshot() == before


def test_keystone_deployment_without_token_is_401(env):
    _as_keystone_deployment(env, _closed_url())
    before = env.snapshot()
    resp = _create(env, 'no-token')
    assert resp.status_int == 401, resp.text
    assert resp.json['error_name'] == 'NotAuthenticated'
    assert env.snapshot() == before


def test_bad_input_is_refused_before_keystone_is_asked(env):
    _as_keystone_deployment(env, _closed_url())
    body = fixtures.lease_body(name='bad', start=FAR['start'], end=FAR['end'],
                               reservations=[{'resource_type': 'nope'}])
    resp = env.request('POST', '/v1/leases', body=body,
                       headers={'X-Auth-Token': 'tok'})
    assert resp.status_int == 400, resp.text  # not 503: input first


# -- Keystone's answers ------------------------------------------------------

def _http_error(cls, status, message):
    response = requests.Response()
    response.status_code = status
    response._content = (
        b'{"error": {"code": %d, "message": "%s", "title": "x"}}' %
        (status, message.encode()))
    response.headers['Content-Type'] = 'application/json'
    return cls(message='%s (HTTP %d)' % (message, status),
               response=response, http_status=status)


def _ctx():
    return context.RequestContext(auth_token='tok', project_id='p1',
                                  user_id='u1', roles=['member'])


@pytest.mark.parametrize('raised,expected,code,text', [
    (_http_error(ks_exc.Forbidden, 403,
                 'Delegated tokens cannot manage trusts.'),
     exceptions.TrustRefused, 403, 'Delegated tokens cannot manage trusts.'),
    (_http_error(ks_exc.NotFound, 404, 'Could not find role: r1.'),
     exceptions.TrustNotCreated, 409, 'Could not find role: r1.'),
    (_http_error(ks_exc.BadRequest, 400, 'Invalid input'),
     exceptions.TrustNotCreated, 409, 'Invalid input.'),
    (_http_error(ks_exc.Unauthorized, 401, 'The request you have made '
                 'requires authentication.'),
     exceptions.NotAuthenticated, 401, 'requires authentication'),
    (_http_error(ks_exc.ServiceUnavailable, 503, 'down'),
     exceptions.ServiceUnavailable, 503, 'could not be reached'),
    (ks_exc.ConnectFailure('refused'),
     exceptions.ServiceUnavailable, 503, 'refused'),
])
def test_trust_creation_errors_keep_keystones_reason(raised, expected, code,
                                                     text):
    conf = cfg.ConfigOpts()
    conf.register_opts([cfg.StrOpt('auth_strategy', default='keystone')])
    with mock.patch.object(keystone, 'service_user_id', return_value='s'), \
            mock.patch.object(keystone, 'user_session'), \
            mock.patch.object(keystone, 'create_trust', side_effect=raised):
        with pytest.raises(expected) as info:
            trusts.create(_ctx(), conf)
    assert info.value.code == code
    assert text in str(info.value)
    if code in (403, 409):
        assert 'project p1' in str(info.value)


def test_refused_service_credentials_are_the_operators_problem():
    conf = cfg.ConfigOpts()
    conf.register_opts([cfg.StrOpt('auth_strategy', default='keystone')])
    refused = _http_error(ks_exc.Unauthorized, 401, 'bad password')
    with mock.patch.object(keystone, 'service_user_id', side_effect=refused):
        with pytest.raises(exceptions.ServiceUnavailable) as info:
            trusts.create(_ctx(), conf)
    assert "Climate's service credentials" in str(info.value)
    assert 'bad password' not in str(info.value)  # not the user's business


@pytest.mark.parametrize('raised,expected,text', [
    (_http_error(ks_exc.NotFound, 404, 'Could not recognize Fernet token'),
     exceptions.NotAuthenticated, 'Could not recognize Fernet token.'),
    (_http_error(ks_exc.Forbidden, 403, 'You are not authorized'),
     exceptions.TrustRefused, 'You are not authorized.'),
    (ValueError('the token is scoped to project p2, not p1'),
     exceptions.NotAuthenticated, 'scoped to project p2'),
    (ks_exc.ConnectTimeout('slow'), exceptions.ServiceUnavailable, 'slow'),
])
def test_token_keystone_will_not_read_is_refused(raised, expected, text):
    conf = cfg.ConfigOpts()
    conf.register_opts([cfg.StrOpt('auth_strategy', default='keystone')])
    with mock.patch.object(keystone, 'service_user_id', return_value='s'), \
            mock.patch.object(keystone, 'user_session', side_effect=raised), \
            mock.patch.object(keystone, 'create_trust') as create_trust:
        with pytest.raises(expected) as info:
            trusts.create(_ctx(), conf)
    assert text in str(info.value)
    create_trust.assert_not_called()


def test_error_from_the_manager_reaches_the_user_without_traceback():
    """oslo.messaging re-raises a manager's error with its traceback in
    ``str()``: the API answers with the message alone."""
    try:
        raise exceptions.TrustRefused(project_id='p1', reason='no.')
    except exceptions.TrustRefused:
        failure = rpc_common.serialize_remote_exception(sys.exc_info())
    remote = rpc_common.deserialize_remote_exception(failure,
                                                     rpc.ALLOWED_EXMODS)
    assert 'Traceback' in str(remote)
    resp = errors.from_exception(remote)
    assert resp.status_int == 403
    assert resp.json == {
        'error_code': 403, 'error_name': 'TrustRefused',
        'error_message': 'Keystone refused the trust Climate needs to act '
                         'for you in project p1: no.'}


def test_delete_never_raises_and_says_whether_the_trust_is_gone():
    with mock.patch.object(keystone, 'service_session', return_value='svc'), \
            mock.patch.object(keystone, 'delete_trust') as delete:
        assert trusts.delete('t1', 'l1') is True
        # Climate's own session first: it needs no new authentication
        assert delete.call_args_list == [mock.call('t1', sess='svc',
                                                   conf=CONF)]
        delete.side_effect = ks_exc.ConnectFailure('down')
        assert trusts.delete('t1', 'l1') is False
        assert trusts.delete(None, 'l1') is True
    # a session Keystone refuses falls back to the default ones (the
    # trust's own, then the service session again)
    with mock.patch.object(keystone, 'delete_trust',
                           side_effect=[ks_exc.Forbidden('no'), None]) as d:
        assert trusts.delete('t1', 'l1', sess='user') is True
    assert d.call_args_list == [mock.call('t1', sess='user', conf=CONF),
                                mock.call('t1', conf=CONF)]
    # no service credentials at all: straight to the default ones
    with mock.patch.object(keystone, 'delete_trust') as d:
        assert trusts.delete('t1', 'l1') is True
    assert d.call_args_list == [mock.call('t1', conf=CONF)]


# -- the lease service's use of trusts --------------------------------------

@pytest.fixture
def with_trust(env):
    """Leases get trust 'trust-N'; deletions are recorded, not sent."""
    made, deleted = [], []

    def create(ctx):
        made.append('trust-%d' % len(made))
        return made[-1]

    def delete(trust_id, lease_id, conf=None, sess=None):
        deleted.append(trust_id)
        return trust_id != 'trust-stuck'

    with mock.patch.object(trusts, 'create', side_effect=create), \
            mock.patch.object(trusts, 'delete', side_effect=delete):
        yield made, deleted


def test_trust_id_is_stored_and_deleted_with_the_lease(env, with_trust):
    made, deleted = with_trust
    resp = _create(env, 'kept')
    assert resp.status_int == 201, resp.text
    lease = resp.json['lease']
    assert lease['trust_id'] == made[0]
    assert deleted == []
    # any member of the project, not only the creator
    other = {'X-User-Id': 'someone-else'}
    resp = env.request('DELETE', '/v1/leases/%s' % lease['id'], headers=other)
    assert resp.status_int == 204, resp.text
    assert deleted == [made[0]]


def test_trust_of_a_failed_create_is_deleted(env, with_trust):
    made, deleted = with_trust
    assert _create(env, 'taken').status_int == 201
    before = env.snapshot()
    resp = _create(env, 'taken')
    assert resp.status_int == 409, resp.text
    assert made == ['trust-0', 'trust-1']
    assert deleted == ['trust-1']  # no orphan; the first lease keeps its own
    assert env.snapshot() == before


def test_trust_of_a_create_failing_in_a_plugin_is_deleted(env, with_trust):
    made, deleted = with_trust
    before = env.snapshot()
    with mock.patch.object(env.plugin(), 'reserve',
                           side_effect=exceptions.Conflict(reason='full')):
        resp = _create(env, 'plugin-says-no')
    assert resp.status_int == 409, resp.text
    assert deleted == made == ['trust-0']
    assert env.snapshot() == before


def test_refused_delete_keeps_the_trust(env, with_trust):
    made, deleted = with_trust
    lease = _create(env, 'other-project').json['lease']
    resp = env.request('DELETE', '/v1/leases/%s' % lease['id'],
                       project='project-b')
    assert resp.status_int == 404
    resp = env.request('DELETE', '/v1/leases/%s' % lease['id'],
                       persona='reader')
    assert resp.status_int == 403
    assert deleted == []


def _wait_status(env, lease_id, status, timeout=20):
    deadline = time.monotonic() + timeout
    while True:
        lease = env.request('GET', '/v1/leases/%s' % lease_id,
                            persona='admin').json['lease']
        if lease['status'] == status:
            return lease
        assert time.monotonic() < deadline, lease
        time.sleep(0.1)


def test_trust_is_deleted_when_the_lease_ends(env, with_trust):
    made, deleted = with_trust
    body = fixtures.lease_body(name='short', start='now',
                               end=fixtures.iso(2))
    lease = env.request('POST', '/v1/leases', body=body).json['lease']
    assert lease['trust_id'] == 'trust-0'
    ended = _wait_status(env, lease['id'], states.TERMINATED)
    assert deleted == ['trust-0']
    assert ended['trust_id'] is None  # gone from Keystone, gone from the row


def test_lease_ends_even_when_its_trust_cannot_be_deleted(env, with_trust):
    _made, deleted = with_trust
    with mock.patch.object(trusts, 'create', return_value='trust-stuck'):
        body = fixtures.lease_body(name='stuck', start='now',
                                   end=fixtures.iso(2))
        lease = env.request('POST', '/v1/leases', body=body).json['lease']
    ended = _wait_status(env, lease['id'], states.TERMINATED)
    assert deleted == ['trust-stuck']
    assert ended['trust_id'] == 'trust-stuck'  # kept for the operator
    assert [e['status'] for e in ended['events']] == [states.DONE] * len(
        ended['events'])


# -- plugins -----------------------------------------------------------------

def test_plugin_user_session_needs_a_trust():
    with pytest.raises(exceptions.NoTrust) as info:
        plugin_base.ResourcePlugin.user_session(
            db_api.LeaseRef(id='l1', project_id='p1', trust_id=None))
    assert 'l1' in str(info.value)


def test_plugin_user_session_redeems_the_lease_trust():
    with mock.patch.object(keystone, 'trust_session') as trust_session:
        sess = plugin_base.ResourcePlugin.user_session(
            db_api.LeaseRef(id='l1', project_id='p1', trust_id='t1'))
    trust_session.assert_called_once_with('t1')
    assert sess is trust_session.return_value
