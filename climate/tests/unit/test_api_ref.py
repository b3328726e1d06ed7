"""The API reference (api-ref/source) against the API itself.

- Every route the controllers serve (``climate.tests.api_routes``) is a
  ``.. rest_method::`` of the reference, and the reference documents no
  route that is not served: a new route without its documentation fails.
- Each route read from the controllers is one the running application
  answers (neither its routing 404 nor a 405): the reading of the
  controllers is pecan's own.
- Each committed sample (api-ref/source/samples) is what the running API
  answers to the conversation of ``climate.tests.api_samples``, keys and
  kinds of values alike (ids and dates aside): a change of a route's
  answer fails until ``tools/api-ref-samples.py`` writes them again.
- Each sample is shown by a page, and each sample a page shows exists.
"""

import glob
import os
import re

import pecan
from pecan import rest
import pytest

from climate.tests import api_routes
from climate.tests import api_samples
from climate.tests import fixtures

SOURCE = os.path.join(api_samples.ROOT, 'api-ref', 'source')
_REST_METHOD = re.compile(r'^\.\. rest_method::\s+(\S+)\s+(\S+)\s*$',
                          re.MULTILINE)
_INCLUDE = re.compile(r'^\s*\.\. literalinclude::\s+(\S+)\s*$',
                      re.MULTILINE)
_PARAM = re.compile(r'{[^}]*}')
#: pecan's answer to a path that no controller has
_NO_ROUTE = 'The resource could not be found.'


def _pages():
    return sorted(glob.glob(os.path.join(SOURCE, '*.rst')))


def _normal(path):
    path = _PARAM.sub(api_routes.ITEM, path)
    return path.rstrip('/') or '/'


def documented(pages=None):
    """The (method, path) of every ``.. rest_method::`` of the pages."""
    found = set()
    for page in pages or _pages():
        with open(page, encoding='utf-8') as source:
            text = source.read()
        found |= {(method, _normal(path))
                  for method, path in _REST_METHOD.findall(text)}
    return found


def _difference(served, documented):
    return (sorted(set(served) - documented),
            sorted(documented - set(served)))


def test_every_route_is_documented():
    undocumented, not_served = _difference(api_routes.served(), documented())
    assert not undocumented, (
        'routes served but missing from api-ref/source (add a '
        '".. rest_method::" for each): %s' % undocumented)
    assert not not_served, (
        'api-ref/source documents routes the API does not serve: %s' %
        not_served)


def test_a_route_without_its_documentation_fails():
    # the check above can fail: the reference less one page misses the
    # routes of that page
    pages = [p for p in _pages() if not p.endswith('webhooks.rst')]
    undocumented, _ = _difference(api_routes.served(), documented(pages))
    assert ('POST', '/v1/webhooks') in undocumented
    assert ('GET', '/v1/webhooks/{}/deliveries') in undocumented


class _Deliveries(rest.RestController):
    @pecan.expose('json')
    def get_all(self, parent_id):
        return {}


class _Things(rest.RestController):
    deliveries = _Deliveries()
    _custom_actions = {'search': ['POST']}

    @pecan.expose('json')
    def get_all(self):
        return {}

    @pecan.expose('json')
    def get_one(self, thing_id):
        return {}

    @pecan.expose('json')
    def put(self):
        return {}

    @pecan.expose(content_type='application/json')
    def delete(self, thing_id=None):
        return ''


class _Health:
    @pecan.expose(generic=True, template='json')
    def index(self):
        pass

    @index.when(method='GET', template='json')
    def index_get(self):
        return {}


class _Root:
    things = _Things()
    health = _Health()

    @pecan.expose('json')
    def index(self):
        return {}


def test_the_walk_reads_pecan_conventions():
    assert api_routes.walk(_Root()) == {
        ('GET', '/'), ('GET', '/health'),
        ('GET', '/things'), ('GET', '/things/{}'), ('PUT', '/things'),
        ('DELETE', '/things/{}'), ('POST', '/things/search'),
        ('GET', '/things/{}/deliveries')}


def _probe(env, method, path):
    path = path.replace(api_routes.ITEM, 'x')
    body = {} if method in ('POST', 'PUT', 'PATCH') else None
    return env.request(method, path, body=body, persona='admin',
                       version='latest')


@pytest.fixture(scope='module')
def env():
    with fixtures.ClimateEnvironment() as env:
        yield env


@pytest.fixture(scope='module')
def answered(env):
    """The samples of the conversation, run first on the module's
    environment (the probes below change nothing it shows)."""
    return api_samples.run(env)


def test_every_route_read_from_the_controllers_is_served(env, answered):
    for method, path in api_routes.served():
        resp = _probe(env, method, path)
        assert resp.status_int != 405, (method, path, resp.text)
        assert not (resp.status_int == 404 and
                    resp.json['error_message'] == _NO_ROUTE), (
            method, path, resp.text)
    # and the probe tells an unserved route
    resp = _probe(env, 'GET', '/v1/leases/{}/nothing')
    assert resp.json['error_message'] == _NO_ROUTE


def _committed():
    names = {}
    for path in sorted(glob.glob(os.path.join(api_samples.SAMPLES_DIR, '**',
                                              '*.*'), recursive=True)):
        with open(path, encoding='utf-8', newline='') as sample:
            names[os.path.relpath(path, api_samples.SAMPLES_DIR)] = \
                sample.read()
    return names


def test_samples_are_what_the_api_answers(answered):
    committed = _committed()
    hint = ' (run tools/api-ref-samples.py)'
    assert sorted(committed) == sorted(answered), (
        'samples committed and samples the API gives differ' + hint)
    changed = [name for name in sorted(answered)
               if api_samples.shape_of_text(name, answered[name]) !=
               api_samples.shape_of_text(name, committed[name])]
    assert not changed, 'the API answers these samples otherwise%s: %s' % (
        hint, changed)


def test_shape_tells_a_changed_answer():
    lease = {'lease': {'id': 'a', 'reservations': [{'id': 'b'}]}}
    same = {'lease': {'id': 'c', 'reservations': [{'id': None}]}}
    more = {'lease': {'id': 'c', 'reservations': [{'id': 'd', 'x': 1}]}}
    assert api_samples.shape(lease) == api_samples.shape(same)
    assert api_samples.shape(lease) != api_samples.shape(more)
    assert api_samples.shape([]) != api_samples.shape([lease])


def test_every_sample_is_shown_and_every_shown_sample_exists():
    included = set()
    for page in _pages():
        with open(page, encoding='utf-8') as source:
            included |= {os.path.normpath(name)
                         for name in _INCLUDE.findall(source.read())}
    samples = {os.path.join('samples', name) for name in _committed()}
    assert not sorted(included - samples), 'included, but no such sample'
    assert not sorted(samples - included), 'samples no page shows'
