"""Odd input refused at the API's edge, before any controller or database.

Bodies: a NUL character or an unpaired UTF-16 surrogate in any string (key
or value, at any depth) and nesting deeper than ``MAX_DEPTH``, on POST, PUT
and PATCH alike (and on any other method whose JSON body pecan would
decode).  URLs: NUL in the path (404) or the query (400), paths and
queries that are not UTF-8 (400).  Bodies over ``[api]
max_request_body_size`` (413), read no further than the limit whatever the
server hands over.  /healthcheck: GET and HEAD only.  Each refusal writes
nothing.
"""

import io
import json

import pytest
import webob

from climate.api import app as api_app
from climate.api import middleware
from climate import exceptions
from climate.tests import fixtures


@pytest.fixture(scope='module')
def env():
    with fixtures.ClimateEnvironment() as env:
        resp = env.request('POST', '/v1/os-hosts', persona='admin',
                           body={'name': 'compute-1', 'rack': 'r1'})
        assert resp.status_int == 201, resp.text
        env.host_id = resp.json['host']['id']
        # in the future: nothing of it changes while the tests compare
        # snapshots of the database
        resp = env.request('POST', '/v1/leases', body=fixtures.lease_body(
            start=fixtures.iso(3600)))
        assert resp.status_int == 201, resp.text
        env.lease_id = resp.json['lease']['id']
        yield env


def _routes(env):
    """(method, path) of every route taking a JSON body."""
    return [('POST', '/v1/leases'),
            ('PUT', '/v1/leases/%s' % env.lease_id),
            ('POST', '/v1/os-hosts'),
            ('PUT', '/v1/os-hosts/%s' % env.host_id),
            ('PATCH', '/v1/os-hosts/properties/rack'),
            ('POST', '/v1/os-hosts/availability'),
            ('POST', '/v1/os-hosts/timeline')]


ROUTE_IDS = ['create-lease', 'update-lease', 'create-host', 'update-host',
             'patch-property', 'availability', 'timeline']

#: (raw JSON body, what the error message says)
ODD_BODIES = {
    'nul-value': ('{"name": "a\\u0000b"}',
                  'the string at name contains a NUL character (U+0000)'),
    'surrogate-value': ('{"name": "\\ud800"}',
                        'the string at name contains an unpaired UTF-16 '
                        'surrogate (U+D800)'),
    'low-surrogate-value': ('{"name": "x\\udfffy"}',
                            'the string at name contains an unpaired UTF-16 '
                            'surrogate (U+DFFF)'),
    'nul-key': ('{"na\\u0000me": "a"}',
                'the key "na\\u0000me" contains a NUL character'),
    'deep-surrogate': (
        '{"reservations": [{"resource_type": "noop", "x": ["\\ud83d"]}]}',
        'the string at reservations[0].x[0] contains an unpaired UTF-16 '
        'surrogate (U+D83D)'),
    'deep-key': ('{"values": {"a": {"\\udc00": 1}}}',
                 'the key "\\udc00" in values.a contains an unpaired UTF-16 '
                 'surrogate (U+DC00)'),
    'nested-40': ('{"a": ' + '[' * 40 + ']' * 40 + '}',
                  'the body is nested too deeply (more than 32 levels)'),
    'nested-100000': ('{"a": ' + '[' * 100000 + ']' * 100000 + '}',
                      'the body is nested too deeply'),
}


@pytest.mark.parametrize('route', range(len(ROUTE_IDS)), ids=ROUTE_IDS)
@pytest.mark.parametrize('case', sorted(ODD_BODIES))
def test_odd_strings_and_deep_nesting_are_400_and_write_nothing(
        env, route, case):
    method, path = _routes(env)[route]
    raw, message = ODD_BODIES[case]
    before = env.snapshot()
    resp = env.request(method, path, raw=raw, persona='admin', version='1.2')
    assert resp.status_int == 400, resp.text
    assert resp.json['error_name'] == 'MalformedRequestBody'
    assert message in resp.json['error_message'], resp.text
    assert env.snapshot() == before


def test_a_complete_surrogate_pair_is_an_ordinary_character(env):
    resp = env.request('POST', '/v1/leases', body=fixtures.lease_body(
        name='\U0001F600', start=fixtures.iso(3600)))
    assert resp.status_int == 201, resp.text
    assert resp.json['lease']['name'] == '\U0001F600'
    # the same, escaped as JSON escapes it
    raw = json.dumps(fixtures.lease_body(name='smile \U0001F601',
                                         start=fixtures.iso(3600)))
    assert '\\ud83d\\ude01' in raw
    resp = env.request('POST', '/v1/leases', raw=raw)
    assert resp.status_int == 201, resp.text


def test_32_levels_are_accepted_and_33_refused():
    value = {'a': 1}
    for _ in range(30):
        value = [value]
    middleware.check_json_value({'x': value})  # 32 levels with the body's
    with pytest.raises(exceptions.MalformedRequestBody,
                       match='nested too deeply'):
        middleware.check_json_value({'x': [value]})


def test_patch_without_a_body_where_patch_is_no_route_stays_405(env):
    resp = env.request('PATCH', '/v1/leases/%s' % env.lease_id)
    assert resp.status_int == 405, resp.text


def test_patch_with_a_form_body_is_refused(env):
    before = env.snapshot()
    req = webob.Request.blank('/v1/os-hosts/properties/rack',
                              method='PATCH', body=b'private=1')
    req.headers.update(fixtures.identity('admin'))
    req.content_type = 'application/x-www-form-urlencoded'
    resp = req.get_response(env.app)
    assert resp.status_int == 400, resp.text
    assert 'application/json' in resp.json['error_message']
    assert env.snapshot() == before


def test_a_deep_json_body_on_delete_is_400_not_500(env):
    before = env.snapshot()
    resp = env.request('DELETE', '/v1/leases/%s' % env.lease_id,
                       raw='{"a": ' + '[' * 5000 + ']' * 5000 + '}')
    assert resp.status_int == 400, resp.text
    assert 'nested too deeply' in resp.json['error_message']
    resp = env.request('DELETE', '/v1/leases/%s' % env.lease_id,
                       raw='{"lease_id": "\\u0000"}')
    assert resp.status_int == 400, resp.text
    assert env.snapshot() == before


def test_a_body_that_is_not_json_on_delete_is_ignored_as_pecan_does(env):
    resp = env.request('DELETE', '/v1/leases/no-such-lease', raw='not json')
    assert resp.status_int == 404, resp.text


@pytest.mark.parametrize('method', ['GET', 'PUT', 'DELETE', 'PATCH'])
@pytest.mark.parametrize('path', ['/v1/leases/%00', '/v1/leases/a%00b',
                                  '/v1/os-hosts/%00',
                                  '/v1/os-hosts/properties/%00'])
def test_a_nul_in_the_path_is_404(env, method, path):
    before = env.snapshot()
    resp = env.request(method, path, persona='admin',
                       body={'private': True} if method != 'GET' else None)
    assert resp.status_int == 404, resp.text
    assert resp.json == {'error_code': 404, 'error_name': 'NotFound',
                         'error_message': 'The resource could not be found.'}
    assert env.snapshot() == before


@pytest.mark.parametrize('query', ['name=%00', 'status=ACTIVE&x%00=1',
                                   'limit=1%00'])
def test_a_nul_in_the_query_is_400(env, query):
    resp = env.request('GET', '/v1/leases?' + query, version='1.1')
    assert resp.status_int == 400, resp.text
    assert 'NUL character' in resp.json['error_message']


@pytest.mark.parametrize('path,what', [
    ('/v1/leases/%FF', 'URL path'),
    ('/v1/leases/%ED%A0%80', 'URL path'),  # a surrogate, UTF-8 encoded
    ('/v1/leases?name=%FF', 'query string')])
def test_a_url_that_is_not_utf8_is_400(env, path, what):
    resp = env.request('GET', path)
    assert resp.status_int == 400, resp.text
    assert resp.json['error_message'] == 'The %s is not valid UTF-8.' % what


@pytest.mark.parametrize('terminated', [False, True],
                         ids=['cheroot', 'gunicorn'])
def test_a_declared_body_over_the_limit_is_413_unread(env, terminated):
    class Unreadable:
        def read(self, *args):
            raise AssertionError('the body was read')

    req = webob.Request.blank('/v1/leases', method='POST')
    req.headers.update(fixtures.identity('member'))
    req.environ['wsgi.input'] = Unreadable()
    # some servers mark every input terminated, a length or not
    req.environ['wsgi.input_terminated'] = terminated
    req.environ['CONTENT_LENGTH'] = str(1024 * 1024 + 1)
    req.content_type = 'application/json'
    resp = req.get_response(env.app)
    assert resp.status_int == 413, resp.text
    assert resp.json == {
        'error_code': 413, 'error_name': 'RequestEntityTooLarge',
        'error_message': 'The request body is larger than 1048576 bytes.'}


class _EndlessInput:
    """A terminated ``wsgi.input`` (chunked, as servers hand it over) that
    never ends, counting what was read of it."""

    def __init__(self):
        self.read_bytes = 0

    def read(self, size=-1):
        assert size is not None and size > 0, 'asked to read it all'
        self.read_bytes += size
        return b' ' * size


def test_an_endless_chunked_body_is_read_up_to_the_limit_only(env):
    stream = _EndlessInput()
    req = webob.Request.blank('/v1/leases', method='POST')
    req.headers.update(fixtures.identity('member'))
    req.headers['Transfer-Encoding'] = 'chunked'
    req.environ['wsgi.input'] = stream
    req.environ['wsgi.input_terminated'] = True
    req.environ.pop('CONTENT_LENGTH', None)
    req.content_type = 'application/json'
    resp = req.get_response(env.app)
    assert resp.status_int == 413, resp.text
    assert stream.read_bytes == 1024 * 1024 + 1


def test_a_chunked_body_under_the_limit_reaches_the_controllers(env):
    body = json.dumps(fixtures.lease_body(
        name='chunked', start=fixtures.iso(3600))).encode()
    req = webob.Request.blank('/v1/leases', method='POST')
    req.headers.update(fixtures.identity('member'))
    req.headers['Transfer-Encoding'] = 'chunked'
    req.environ['wsgi.input'] = io.BytesIO(body)
    req.environ['wsgi.input_terminated'] = True
    req.environ.pop('CONTENT_LENGTH', None)
    req.content_type = 'application/json'
    resp = req.get_response(env.app)
    assert resp.status_int == 201, resp.text
    assert resp.json['lease']['name'] == 'chunked'


def test_the_body_limit_is_configurable(env):
    fixtures.CONF.set_override('max_request_body_size', 2048, group='api')
    original = env.app
    try:
        env.app = api_app.setup_app()
        before = env.snapshot()
        resp = env.request('POST', '/v1/leases', body=fixtures.lease_body(
            name='big', filler='x' * 2100))
        assert resp.status_int == 413, resp.text
        assert resp.json['error_message'] == (
            'The request body is larger than 2048 bytes.')
        assert env.snapshot() == before
    finally:
        env.app = original
        fixtures.CONF.clear_override('max_request_body_size', group='api')


@pytest.mark.parametrize('method', ['PUT', 'POST', 'DELETE', 'TRACE',
                                    'OPTIONS', 'PATCH'])
def test_healthcheck_answers_only_get_and_head(env, method):
    resp = env.request(method, '/healthcheck', persona=None)
    assert resp.status_int == 405, resp.text
    assert resp.headers['Allow'] == 'GET, HEAD'
    assert resp.json == {
        'error_code': 405, 'error_name': 'MethodNotAllowed',
        'error_message': 'Method %s is not allowed here; allowed: GET, '
                         'HEAD.' % method}


@pytest.mark.parametrize('method', ['GET', 'HEAD'])
def test_healthcheck_get_and_head_still_answer(env, method):
    resp = env.request(method, '/healthcheck', persona=None)
    assert 200 <= resp.status_int < 300, resp.text
