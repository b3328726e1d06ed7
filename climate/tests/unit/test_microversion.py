"""climate.api.microversion and the middleware that negotiates it."""

import json

import pytest
import webob

from climate.api import microversion
from climate.api import middleware
from climate import exceptions

V = microversion.Version.parse


def headers(value=None):
    req = webob.Request.blank('/v1/leases')
    if value is not None:
        req.headers['OpenStack-API-Version'] = value
    return req.headers


def test_the_versions():
    assert microversion.VERSIONS == (
        '1.0', '1.1', '1.2', '1.3', '1.4', '1.5', '1.6', '1.7', '1.8',
        '1.9', '1.10', '1.11', '1.12', '1.13', '1.14', '1.15',
        '1.16', '1.17')
    assert (microversion.MIN, microversion.MAX) == ('1.0', '1.17')
    assert microversion.MIN_VERSION == (1, 0)
    assert microversion.MAX_VERSION == (1, 17)
    assert microversion.SERVICE_TYPE == 'reservation'
    assert microversion.HEADER == 'OpenStack-API-Version'


def test_version_parse_compare_and_print():
    assert V('1.1') == (1, 1)
    assert V('1.10') > V('1.9')
    assert V('2.0') > V('1.99')
    assert str(V('1.10')) == '1.10'
    assert isinstance(V('1.0'), microversion.Version)


@pytest.mark.parametrize('text', ['', None, '1', '1.', '.1', 'a.b', '1.1.1',
                                  '01.1', '1.01', ' 1.1', '-1.0', 'latest',
                                  '00.1'],
                         ids=lambda v: 'text-%r' % (v,))
def test_version_parse_refuses(text):
    with pytest.raises(ValueError):
        V(text)


@pytest.mark.parametrize('value,expected', [
    (None, (1, 0)),
    ('reservation 1.0', (1, 0)),
    ('reservation 1.1', (1, 1)),
    ('reservation latest', (1, 17)),
    ('RESERVATION 1.1', (1, 1)),
    ('compute 2.90', (1, 0)),
    ('compute 2.90, reservation 1.1', (1, 1)),
    ('reservation', (1, 0)),
], ids=['none', '1-0', '1-1', 'latest', 'upper-service', 'other-service',
        'several-services', 'service-only'])
def test_from_headers(value, expected):
    assert microversion.from_headers(headers(value)) == expected


@pytest.mark.parametrize('value', ['reservation 1.18', 'reservation 2.0',
                                   'reservation 99.0'],
                         ids=['1-18', '2-0', '99-0'])
def test_from_headers_out_of_range(value):
    with pytest.raises(LookupError) as info:
        microversion.from_headers(headers(value))
    assert info.value.args[0] == value.split()[1]


@pytest.mark.parametrize('value', ['reservation 1.a', 'reservation 1',
                                   'reservation newest', 'reservation 1.1.1'],
                         ids=['letter', 'no-minor', 'word', 'three-parts'])
def test_from_headers_malformed(value):
    with pytest.raises(ValueError):
        microversion.from_headers(headers(value))


def test_from_headers_zero_major_is_out_of_range():
    with pytest.raises(LookupError) as info:
        microversion.from_headers(headers('reservation 0.9'))
    assert info.value.args == ('0.9',)


def test_of_defaults_to_the_minimum():
    req = webob.Request.blank('/v1')
    assert microversion.of(req) == (1, 0)
    req.environ[microversion.ENVIRON_KEY] = V('1.1')
    assert microversion.of(req) == (1, 1)


# -- the middleware ----------------------------------------------------------

class Recorder:
    """A WSGI app that records the version it was given."""

    def __init__(self):
        self.seen = []

    def __call__(self, environ, start_response):
        self.seen.append(environ.get(microversion.ENVIRON_KEY))
        start_response('200 OK', [('Content-Type', 'application/json')])
        return [b'{}']


def call(path, value=None):
    inner = Recorder()
    req = webob.Request.blank(path)
    if value is not None:
        req.headers['OpenStack-API-Version'] = value
    return req.get_response(middleware.Microversion(inner)), inner.seen


def test_middleware_negotiates_and_echoes():
    resp, seen = call('/v1/leases', 'reservation latest')
    assert resp.status_int == 200
    assert seen == [(1, 17)]
    assert resp.headers['OpenStack-API-Version'] == 'reservation 1.17'
    assert resp.headers['Vary'] == 'OpenStack-API-Version'


def test_middleware_default():
    resp, seen = call('/v1')
    assert seen == [(1, 0)]
    assert resp.headers['OpenStack-API-Version'] == 'reservation 1.0'


def test_middleware_leaves_other_paths_alone():
    resp, seen = call('/', 'reservation nonsense')
    assert resp.status_int == 200
    assert seen == [None]
    assert 'OpenStack-API-Version' not in resp.headers


def test_middleware_400_for_malformed():
    resp, seen = call('/v1/leases', 'reservation 1.x')
    assert seen == []
    assert resp.status_int == 400
    assert json.loads(resp.text) == {
        'error_code': 400, 'error_name': 'InvalidAPIVersion',
        'error_message': 'API Version String 1.x is of invalid format. '
                         'Must be of format MajorNum.MinorNum. Invalid '
                         'OpenStack-API-Version header \'1.x\': '
                         'expected "reservation X.Y" or "reservation '
                         'latest"'}


def test_middleware_406_for_out_of_range():
    resp, seen = call('/v1/leases', 'reservation 1.18')
    assert seen == []
    assert resp.status_int == 406
    assert json.loads(resp.text) == {
        'error_code': 406, 'error_name': 'APIVersionNotAcceptable',
        'error_message': 'Version 1.18 is not supported by the API. Minimum '
                         'is 1.0 and maximum is 1.17.'}


@pytest.mark.parametrize('asked,needed', [
    (None, '1.1'), ('1.1', '1.2'), ('1.2', microversion.Version.parse('1.3')),
], ids=['default-1-1', '1-1-for-1-2', '1-2-for-1-3'])
def test_require_refuses_an_older_version(asked, needed):
    req = webob.Request.blank('/v1/some/route', method='POST')
    if asked is not None:
        req.environ[microversion.ENVIRON_KEY] = V(asked)
    with pytest.raises(exceptions.NotFound) as info:
        microversion.require(req, needed)
    assert info.value.code == 404
    assert str(info.value) == (
        '/v1/some/route needs microversion %s or later (send '
        '"OpenStack-API-Version: reservation %s").' % (needed, needed))


@pytest.mark.parametrize('asked', ['1.2', '1.3'])
def test_require_lets_the_version_and_later_pass(asked):
    req = webob.Request.blank('/v1/some/route', method='POST')
    req.environ[microversion.ENVIRON_KEY] = V(asked)
    assert microversion.require(req, '1.2') is None
