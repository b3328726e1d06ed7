"""auth_strategy = noauth: only where nobody else can reach it, and only
with identity headers that name someone.

``climate-api`` and ``climate-all`` refuse to start on a non-loopback
address, and the WSGI application (whose address is unknown to it) refuses
every request, unless ``[noauth] allow_remote = true``; the commands run as
subprocesses here, stopped by PID if they ever start.  An empty (or
unstorable) X-Project-Id / X-User-Id is a 400 that writes nothing.
"""

import json
import os
import subprocess
import sys
import textwrap
import types

import pytest

from climate.api import noauth
from climate.tests import fixtures

BIN = os.path.dirname(sys.executable)
TIMEOUT = 60


def _conf(strategy='noauth', allow_remote=False):
    return types.SimpleNamespace(
        auth_strategy=strategy,
        noauth=types.SimpleNamespace(allow_remote=allow_remote))


@pytest.mark.parametrize('host', ['127.0.0.1', '127.0.0.53', '::1',
                                  'localhost', 'LOCALHOST'])
def test_noauth_on_loopback_starts(host):
    noauth.check_exposure(_conf(), host)


@pytest.mark.parametrize('host', ['0.0.0.0', '::', '192.0.2.10',
                                  'api.example.org', None])
def test_noauth_elsewhere_is_refused(host):
    with pytest.raises(noauth.NoauthExposed) as caught:
        noauth.check_exposure(_conf(), host)
    message = str(caught.value)
    assert message.startswith('Refusing to serve auth_strategy = noauth ')
    assert '[noauth] allow_remote = true' in message
    if host is None:
        assert 'as a WSGI application' in message
    else:
        assert 'on %s, which is not a loopback address' % host in message


@pytest.mark.parametrize('host', ['0.0.0.0', None])
def test_allow_remote_says_the_operator_means_it(host, caplog):
    noauth.check_exposure(_conf(allow_remote=True), host)
    assert 'ANYONE who reaches the API can act as any project' in caplog.text


@pytest.mark.parametrize('host', ['0.0.0.0', None])
def test_keystone_is_never_refused(host):
    noauth.check_exposure(_conf(strategy='keystone'), host)


def _config(tmp_path, text):
    path = tmp_path / 'climate.conf'
    path.write_text(textwrap.dedent(text))
    return str(path)


def _run(argv, **kwargs):
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:  # it started: stop it, by its PID
        proc.kill()
        out, err = proc.communicate()
        pytest.fail('%s did not refuse to start:\n%s' % (argv[0], err))
    return proc.returncode, err


@pytest.mark.parametrize('command', ['climate-api', 'climate-all'])
def test_commands_refuse_noauth_on_every_address(tmp_path, command):
    conf = _config(tmp_path, '''
        [DEFAULT]
        host = 0.0.0.0
        port = %d
        auth_strategy = noauth
        state_path = %s
        transport_url = fake:/
        ''' % (fixtures.closed_port(), tmp_path))
    code, err = _run([os.path.join(BIN, command), '--config-file', conf],
                     cwd=str(tmp_path))
    assert code == 1, err
    assert ('climate: Refusing to serve auth_strategy = noauth on 0.0.0.0, '
            'which is not a loopback address') in err
    assert 'set [noauth] allow_remote = true' in err
    # refused before anything was created
    assert not (tmp_path / 'climate.sqlite').exists()


_WSGI_SCRIPT = '''
import io, json, sys
from climate.api import noauth
from climate.wsgi import api

def call(path):
    answered = []
    environ = {'REQUEST_METHOD': 'GET', 'PATH_INFO': path,
               'SERVER_NAME': 'x', 'SERVER_PORT': '80', 'QUERY_STRING': '',
               'wsgi.url_scheme': 'http', 'wsgi.input': io.BytesIO(),
               'wsgi.errors': sys.stderr, 'SERVER_PROTOCOL': 'HTTP/1.1'}
    body = b''.join(api.application(
        environ, lambda status, headers, exc=None: answered.append(status)))
    return answered[0], json.loads(body)

results = []
for _ in range(2):
    try:
        results.append(list(call('/')))
    except noauth.NoauthExposed as exc:
        results.append(['refused', str(exc)])
print('RESULTS ' + json.dumps(results))
'''


@pytest.mark.parametrize('allow_remote', [False, True])
def test_the_wsgi_application_refuses_noauth_unless_allowed(
        tmp_path, allow_remote):
    conf = _config(tmp_path, '''
        [DEFAULT]
        auth_strategy = noauth
        state_path = %s
        transport_url = fake:/
        [noauth]
        allow_remote = %s
        ''' % (tmp_path, allow_remote))
    env = dict(os.environ, OS_CLIMATE_CONFIG_FILES=conf)
    proc = subprocess.run([sys.executable, '-c', _WSGI_SCRIPT], env=env,
                          capture_output=True, text=True, timeout=TIMEOUT,
                          cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    # oslo.log writes to stdout too
    line, = [line for line in proc.stdout.splitlines()
             if line.startswith('RESULTS ')]
    results = json.loads(line[len('RESULTS '):])
    if allow_remote:
        # version discovery answers
        assert [status for status, _ in results] == [
            '300 Multiple Choices'] * 2
        assert 'ANYONE who reaches the API' in proc.stdout + proc.stderr
    else:
        # every request, not only the first
        assert [kind for kind, _ in results] == ['refused'] * 2
        assert results[0][1].startswith(
            'Refusing to serve auth_strategy = noauth as a WSGI application')


@pytest.fixture(scope='module')
def env():
    with fixtures.ClimateEnvironment() as env:
        yield env


@pytest.mark.parametrize('header,value,message', [
    ('X-Project-Id', '', 'The X-Project-Id header is empty.'),
    ('X-Project-Id', '   ', 'The X-Project-Id header is empty.'),
    ('X-User-Id', '', 'The X-User-Id header is empty.'),
    ('X-Project-Id', 'a\x01b', 'The X-Project-Id header contains a control '
                               'character.'),
    ('X-User-Id', 'u\tv', 'The X-User-Id header contains a control '
                          'character.'),
    ('X-Project-Id', 'p' * 256, 'The X-Project-Id header is longer than 255 '
                                'characters.'),
])
def test_identity_headers_that_name_nobody_are_400(env, header, value,
                                                   message):
    before = env.snapshot()
    resp = env.request('POST', '/v1/leases',
                       body=fixtures.lease_body(start=fixtures.iso(3600)),
                       headers={header: value})
    assert resp.status_int == 400, resp.text
    assert resp.json['error_name'] == 'BadRequest'
    assert resp.json['error_message'].startswith(message)
    assert env.snapshot() == before


def test_the_empty_project_message_says_what_to_do(env):
    resp = env.request('GET', '/v1/leases', headers={'X-Project-Id': ''})
    assert resp.json['error_message'] == (
        'The X-Project-Id header is empty. Under auth_strategy = noauth it '
        'names the project of the request: send one, or leave the header '
        'out to use [noauth] project_id.')


def test_absent_headers_still_take_the_noauth_defaults(env):
    resp = env.request('POST', '/v1/leases', persona=None,
                       body=fixtures.lease_body(name='defaults',
                                                start=fixtures.iso(3600)))
    assert resp.status_int == 201, resp.text
    assert resp.json['lease']['project_id'] == 'embedded'
    assert resp.json['lease']['user_id'] == 'embedded'
