"""The API's plain-WSGI middleware: what the gabbi files cannot reach."""

import json

import pytest
import webob

from climate.api import middleware
from climate.tests import fixtures


@pytest.fixture(scope='module')
def env():
    with fixtures.ClimateEnvironment() as env:
        yield env


def _version_href(env, headers):
    resp = env.request('GET', '/', persona=None, headers=headers)
    return resp.json['versions'][0]['links'][0]['href']


PROXIED = {'X-Forwarded-Proto': 'https',
           'X-Forwarded-Host': 'cloud.example.org'}


def test_proxy_headers_are_ignored_unless_enabled(env):
    assert _version_href(env, PROXIED) == 'http://localhost/v1/'


def test_proxy_headers_are_honoured_when_enabled(env):
    fixtures.CONF.set_override('enable_proxy_headers_parsing', True,
                               group='oslo_middleware')
    try:
        assert _version_href(env, PROXIED) == (
            'https://cloud.example.org/v1/')
        assert _version_href(env, {
            'Forwarded': 'for=192.0.2.60;proto=https;host=rfc.example.org'
        }) == 'https://rfc.example.org/v1/'
    finally:
        fixtures.CONF.clear_override('enable_proxy_headers_parsing',
                                     group='oslo_middleware')


class _Closing:
    """An answer that is produced as it is iterated and must be closed."""

    def __init__(self, status, chunks,
                 content_type='text/plain; charset=UTF-8'):
        self.status, self.chunks = status, chunks
        self.content_type = content_type
        self.closed = 0

    def __call__(self, environ, start_response):
        self.start_response = start_response
        return self

    def __iter__(self):
        # start_response only once iterated, as WSGI allows
        self.start_response(self.status,
                            [('Content-Type', self.content_type)])
        yield from self.chunks

    def close(self):
        self.closed += 1


def _call(app, method='GET'):
    req = webob.Request.blank('/v1/x', method=method)
    return req, req.get_response(app)


def test_a_success_passes_through_as_it_was_answered():
    inner = _Closing('200 OK', [b'{"a": ', b'1}'], 'application/json')
    _, resp = _call(middleware.JsonErrors(inner))
    assert resp.status_int == 200 and resp.json == {'a': 1}
    assert inner.closed == 1


def test_a_text_error_becomes_a_json_error_body():
    inner = _Closing('404 Not Found', [b'The resource could not be found.'])
    _, resp = _call(middleware.JsonErrors(inner))
    assert resp.status_int == 404
    assert resp.json == {'error_code': 404, 'error_name': 'NotFound',
                         'error_message': 'The resource could not be found.'}
    assert inner.closed == 1


def test_microversion_headers_replace_the_applications_own():
    def app(environ, start_response):
        start_response('200 OK', [('Content-Type', 'application/json'),
                                  ('Vary', 'Accept'),
                                  ('OpenStack-API-Version', 'bogus')])
        return [json.dumps(str(environ['climate.microversion'])).encode()]

    req = webob.Request.blank('/v1/leases')
    req.headers['OpenStack-API-Version'] = 'reservation 1.1'
    resp = req.get_response(middleware.Microversion(app))
    assert resp.json == '1.1'
    assert resp.headers.getall('OpenStack-API-Version') == [
        'reservation 1.1']
    assert resp.headers.getall('Vary') == ['OpenStack-API-Version']
