"""auth_strategy = keystone: the real keystonemiddleware in front of the API,
with its Keystone on a closed 127.0.0.1 port.

What needs no Keystone is checked here: no token is a 401 in Climate's
error shape with the header that says where to authenticate, public paths
stay public, and a token that cannot be checked because Keystone is down is
a 503 saying so.  Tokens Keystone accepts or rejects are exercised in
``climate/tests/integration/test_identity.py``.
"""

from oslo_config import cfg
import pytest

from climate.api import app as api_app
from climate.tests import fixtures

CONF = cfg.CONF
GROUP = 'keystone_authtoken'


@pytest.fixture(scope='module')
def env():
    auth_url = 'http://127.0.0.1:%d/v3' % fixtures.closed_port()
    env = fixtures.ClimateEnvironment()
    try:
        with env:
            # keystonemiddleware's own options, then its password plugin's
            api_app.auth_token.AuthProtocol(lambda e, s: None,
                                            {'oslo_config_config': CONF})
            CONF.register_opts(fixtures.password_auth_opts(), group=GROUP)
            for name, value in (
                    ('www_authenticate_uri', auth_url),
                    ('auth_type', 'password'), ('auth_url', auth_url),
                    ('username', 'climate'), ('password', 'secret'),
                    ('project_name', 'service'),
                    ('user_domain_name', 'Default'),
                    ('project_domain_name', 'Default'),
                    ('http_request_max_retries', 0)):
                env._override(name, GROUP, value)
            env._override('auth_strategy', None, 'keystone')
            env.app = api_app.setup_app()
            env.auth_url = auth_url
            yield env
    finally:
        CONF.reset()
        CONF.unregister_opts(fixtures.password_auth_opts(), group=GROUP)


def _get(env, path, token=None):
    headers = {'X-Auth-Token': token} if token else {}
    return env.request('GET', path, persona=None, headers=headers)


def test_no_token_is_401_in_climates_error_shape(env):
    resp = _get(env, '/v1/leases')
    assert resp.status_int == 401, resp.text
    assert resp.json == {
        'error_code': 401,
        'error_message': 'The request you have made requires '
                         'authentication.',
        'error_name': 'Unauthorized'}
    assert resp.headers['WWW-Authenticate'] == (
        'Keystone uri="%s"' % env.auth_url)


def test_identity_headers_are_not_trusted(env):
    """noauth's headers mean nothing here: keystonemiddleware drops them."""
    resp = env.request('GET', '/v1/leases', persona='admin')
    assert resp.status_int == 401, resp.text


def test_version_discovery_and_healthcheck_need_no_token(env):
    assert _get(env, '/').status_int == 300
    assert _get(env, '/healthcheck').status_int == 200


def test_token_while_keystone_is_unreachable_is_503(env):
    resp = _get(env, '/v1/leases', token='gAAAAAB-some-token')
    assert resp.status_int == 503, resp.text
    assert resp.json == {
        'error_code': 503,
        'error_message': 'The Keystone service is temporarily unavailable.',
        'error_name': 'ServiceUnavailable'}
