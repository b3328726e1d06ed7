"""Property-based fuzzing of every route: nothing a client sends is a 5xx,
and a refused request (4xx) writes nothing.

Hypothesis builds requests for every v1 route (leases, hosts, allocations,
properties, availability and timeline), the version documents and
``/healthcheck``: valid bodies with fields replaced by odd values (NUL
characters, unpaired surrogates, huge numbers, deep nesting, wrong types,
dates beyond the calendar...), odd path ids and query strings, raw bytes
for bodies and odd microversion headers.  They run against a whole Climate
in this process (``ClimateEnvironment``, SQLite) whose event engine is
stopped, so that every row change comes from the request under test.

The examples are derandomized (the same on every run) and bounded in
number; ``FUZZ_EXAMPLES`` in the environment scales them for a longer hunt.
"""

import json
import os
import urllib.parse

from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import pytest

from climate.db import api as db_api
from climate.db import models
from climate.tests import fixtures

#: Examples per test (each test covers one group of routes).
EXAMPLES = int(os.environ.get('FUZZ_EXAMPLES', '150'))

FUZZ = settings(derandomize=True, deadline=None, database=None,
                max_examples=EXAMPLES, print_blob=True,
                suppress_health_check=list(HealthCheck))

FAR_START = '2090-01-01 00:00'
FAR_END = '2090-01-02 00:00'

# -- values -------------------------------------------------------------------

#: Text that broke, or could break, a layer below the API: NUL, unpaired
#: surrogates, numbers beyond any column, dates beyond the calendar, filter
#: syntax, very long text.
ODD_TEXT = [
    '', ' ', 'now', 'NOW ', '\x00', 'a\x00b', '\ud800', 'x\udfff',
    '\U0001f600',
    '\u202e', '%00', '%', '..', '/', '\\', "'", '"', ';--', 'null', 'true',
    '0', '-1', '1', '1.5', '1e309', '01', '1_0', '\u0661', '2147483648',
    '99999999999999999999', '-99999999999999999999', 'a' * 256, 'b' * 5000,
    '2090-01-01 00:00', '2090-01-01T00:00:00+14:00', '2090-13-01 00:00',
    '9999-12-31 23:59', '9999-12-31T23:59:59-14:00', '0001-01-01 00:00',
    '1969-12-31 23:59', '2090-01-01T00:00:00Z', '2h', '99999999999w',
    '$gpu', '["=", "$gpu", "True"]', '[">=", "$vcpus", "4"]',
    '["and", ["=", "$a", "1"], ["or", ["!=", "$b", "\\u0000"]]]',
    '["in", "$a", []]', '["=", "$\\ud800", "1"]', '[' * 3000,
    'physical:host', 'noop', 'virtual:instance', 'default', 'snapshot',
]

ODD_NUMBERS = [0, -1, 1, 2, 10000, 10001, 2 ** 31, 2 ** 63, 2 ** 64, -2 ** 63,
               10 ** 30, 1.5, -0.0, float('inf'), float('nan'), 1e308]

texts = st.one_of(st.sampled_from(ODD_TEXT), st.text(max_size=20))
scalars = st.one_of(st.none(), st.booleans(), st.sampled_from(ODD_NUMBERS),
                    st.integers(), st.floats(), texts)


def _deep(depth):
    value = 1
    for _ in range(depth):
        value = [value]
    return value


json_values = st.one_of(
    st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(texts, inner, max_size=3)), max_leaves=6),
    st.sampled_from([_deep(50), _deep(400), {'a': _deep(100)}]))


def _mutated(base, fields):
    """``base`` with some fields replaced by odd values, some dropped, and
    sometimes an unknown key added."""
    return st.tuples(
        st.dictionaries(st.sampled_from(fields), json_values, max_size=3),
        st.lists(st.sampled_from(fields), max_size=2),
        st.dictionaries(texts, json_values, max_size=2),
    ).map(lambda parts: _apply(base, *parts))


def _apply(base, replaced, dropped, extra):
    body = dict(base)
    body.update(replaced)
    for key in dropped:
        body.pop(key, None)
    body.update(extra)
    return body


# -- bodies of each route ---------------------------------------------------

HOST_RESERVATION = {'resource_type': 'physical:host', 'min': 1, 'max': 1,
                    'hypervisor_properties': '',
                    'resource_properties': '["=", "$gpu", "True"]',
                    'before_end': 'default'}
reservations = st.one_of(
    _mutated(HOST_RESERVATION, sorted(HOST_RESERVATION)),
    _mutated({'resource_type': 'noop'}, ['resource_type']),
    json_values)


def _lease(name, reservation_list, events):
    return {'name': name, 'start_date': FAR_START, 'end_date': FAR_END,
            'reservations': reservation_list, 'events': events}


lease_creates = st.builds(
    _lease, texts, st.one_of(st.lists(reservations, max_size=2),
                             json_values),
    st.one_of(st.just([]), json_values,
              st.lists(st.fixed_dictionaries({
                  'event_type': texts, 'time': texts}), max_size=2))
).flatmap(lambda base: _mutated(base, sorted(base)))

LEASE_UPDATE_FIELDS = ['name', 'start_date', 'end_date', 'before_end_date',
                       'reservations', 'events', 'prolong_for', 'reduce_by',
                       'defer_by', 'advance_by']
lease_updates = st.one_of(
    st.dictionaries(st.sampled_from(LEASE_UPDATE_FIELDS), json_values,
                    max_size=3),
    st.builds(lambda r: {'reservations': [r]}, reservations))

HOST_CREATE = {'name': 'fuzz-host', 'gpu': 'True'}
host_creates = _mutated(HOST_CREATE, ['name', 'gpu', 'id', 'status',
                                      'vcpus', 'memory_mb', 'trust_id',
                                      'hypervisor_hostname', 'x' * 65])
host_updates = st.one_of(
    st.dictionaries(texts, json_values, max_size=3),
    st.builds(lambda v: {'values': v}, json_values))
property_patches = st.one_of(
    st.fixed_dictionaries({'private': json_values}),
    st.dictionaries(texts, json_values, max_size=2))
AVAILABILITY = {'count': 1, 'duration': '1h',
                'earliest_start': '2090-01-01T00:00:00',
                'latest_end': '2090-02-01T00:00:00',
                'resource_properties': '["=", "$gpu", "True"]',
                'hypervisor_properties': '', 'limit': 3}
TIMELINE = {'time_from': '2090-01-01T00:00:00',
            'time_to': '2090-01-03T00:00:00',
            'resource_properties': '', 'hypervisor_properties': ''}


def _body_or_raw(bodies):
    """A JSON body from ``bodies``, or raw bytes, or nothing."""
    return st.one_of(
        bodies.map(lambda b: ('json', b)),
        st.binary(max_size=40).map(lambda b: ('raw', b)),
        st.sampled_from([('raw', b''), ('raw', b'{"a": '),
                         ('raw', b'{"name": "\\u0000"}'),
                         ('raw', b'{"name": "\\ud800"}'),
                         ('raw', b'[' * 5000 + b']' * 5000),
                         ('raw', b'{"a": NaN}'), ('raw', b'\xff\xfe'),
                         ('none', None)]))


# -- paths, queries, headers --------------------------------------------------

def _segment(text):
    """``text`` percent-encoded as one path segment (surrogates kept as
    their would-be UTF-8 bytes, which is what a client can send)."""
    return urllib.parse.quote(text.encode('utf-8', 'surrogatepass'), safe='')


ODD_IDS = ['0', '-1', '1_0', '01', ' 1', '99999999999999999999', '2147483648',
           '\x00', 'a\x00', '\ud800', '%',
           '00000000-0000-0000-0000-000000000000',
           'a' * 300, '..', '.', 'allocations', 'properties', 'availability']
ids = st.one_of(st.sampled_from(ODD_IDS), st.text(min_size=1, max_size=12))

queries = st.dictionaries(
    st.one_of(st.sampled_from(['lease_id', 'reservation_id', 'detail', 'all',
                               'limit', 'marker', 'status', 'sort_key',
                               'sort_dir', 'project_id']), texts),
    st.one_of(texts, st.sampled_from(ODD_IDS)), max_size=3)

versions = st.one_of(
    st.none(),
    st.sampled_from(['reservation 1.0', 'reservation 1.1', 'reservation 1.2',
                     'reservation latest', 'reservation 9.9',
                     'reservation 1.99999999999999999999', 'reservation',
                     'compute 2.1', '']),
    texts)

#: paths that answer GET and HEAD only
READ_ONLY_PATHS = frozenset(['/', '/v1', '/v1/', '/healthcheck'])
METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS',
           'TRACE']
personas = st.sampled_from(['admin', 'admin', 'admin', 'member', None])


def _query_string(params):
    if not params:
        return ''
    return '?' + '&'.join(
        '%s=%s' % (_segment(k), _segment(v)) for k, v in params.items())


# -- the environment and the check --------------------------------------------

@pytest.fixture(scope='module')
def env():
    """One Climate for the module, its event engine stopped: no row
    changes but the requests'.  A host with a capability and a lease
    holding it give the id routes something to find."""
    with fixtures.ClimateEnvironment() as climate:
        climate.manager.engine.stop()
        made = climate.request('POST', '/v1/os-hosts', persona='admin',
                               body={'name': 'compute-1', 'gpu': 'True'})
        assert made.status_int == 201, made.text
        lease = climate.request(
            'POST', '/v1/leases', persona='admin',
            body=_lease('fuzz-lease', [dict(HOST_RESERVATION)], []))
        assert lease.status_int == 201, lease.text
        climate.fuzz_lease_id = lease.json['lease']['id']
        yield climate


#: Tables a manager writes on its own (its heartbeat).
BACKGROUND_TABLES = ('managers',)


def _rows():
    """Every row of every table but the heartbeats', sorted: equal results
    mean nothing was written (one plain SELECT per table, far cheaper than
    the ORM)."""
    with db_api.get_engine().connect() as conn:
        return {table.name: sorted(
            (tuple(repr(v) for v in row)
             for row in conn.execute(table.select())))
            for table in models.Base.metadata.sorted_tables
            if table.name not in BACKGROUND_TABLES}


def _send(env, method, path, payload, persona, version):
    kind, body = payload
    headers = {}
    if version is not None:
        headers['OpenStack-API-Version'] = version
    raw = None
    if kind == 'json':
        try:
            raw = json.dumps(body)
        except (UnicodeEncodeError, ValueError):
            raw = json.dumps(body, ensure_ascii=True)
    elif kind == 'raw':
        raw = body
    before = _rows()
    resp = env.request(method, path, raw=raw, headers=headers,
                       persona=persona, project='project-a')
    where = '%s %r body=%r version=%r persona=%r' % (
        method, path, (raw or b'')[:300], version, persona)
    assert resp.status_int < 500, '%s -> %s %s' % (
        where, resp.status, resp.text[:500])
    if 400 <= resp.status_int < 500:
        assert _rows() == before, (
            '%s -> %s wrote rows: %s' % (where, resp.status, resp.text[:300]))
    return resp


def _lease_path(env, ident):
    return ident if ident is not None else env.fuzz_lease_id


# -- the tests, one per group of routes ---------------------------------------

@FUZZ
@given(payload=_body_or_raw(lease_creates), persona=personas,
       version=versions)
def test_lease_create(env, payload, persona, version):
    _send(env, 'POST', '/v1/leases', payload, persona, version)


@FUZZ
@given(ident=st.one_of(st.none(), ids), method=st.sampled_from(METHODS),
       payload=_body_or_raw(lease_updates), persona=personas,
       version=versions)
def test_lease_by_id(env, ident, method, payload, persona, version):
    path = '/v1/leases/%s' % _segment(_lease_path(env, ident))
    if method == 'DELETE' and ident is None:
        method = 'GET'  # keep the lease the other examples work on
    _send(env, method, path, payload, persona, version)


@FUZZ
@given(method=st.sampled_from(METHODS), params=queries, persona=personas,
       version=versions)
def test_lease_list(env, method, params, persona, version):
    if method in ('POST',):
        method = 'GET'
    _send(env, method, '/v1/leases' + _query_string(params), ('none', None),
          persona, version)


@FUZZ
@given(payload=_body_or_raw(host_creates), persona=personas,
       version=versions)
def test_host_create(env, payload, persona, version):
    _send(env, 'POST', '/v1/os-hosts', payload, persona, version)


@FUZZ
@given(ident=st.one_of(st.just('1'), ids), method=st.sampled_from(METHODS),
       payload=_body_or_raw(host_updates), persona=personas,
       version=versions, tail=st.sampled_from(['', '/allocation', '/x']))
def test_host_by_id(env, ident, method, payload, persona, version, tail):
    if method == 'DELETE' and ident == '1':
        method = 'PUT'  # keep the host the lease holds (it is refused anyway)
    path = '/v1/os-hosts/%s%s' % (_segment(ident), tail)
    _send(env, method, path, payload, persona, version)


@FUZZ
@given(route=st.sampled_from(['', '/allocations', '/properties']),
       method=st.sampled_from(METHODS), params=queries, persona=personas,
       version=versions)
def test_host_collections(env, route, method, params, persona, version):
    path = '/v1/os-hosts%s%s' % (route, _query_string(params))
    payload = ('none', None)
    if method == 'POST' and route == '':
        payload = ('json', {'name': 'fuzz-collection-%d' % len(params)})
    _send(env, method, path, payload, persona, version)


@FUZZ
@given(name=st.one_of(st.just('gpu'), ids, st.none()),
       method=st.sampled_from(['PATCH', 'PATCH', 'GET', 'PUT', 'DELETE']),
       payload=_body_or_raw(property_patches), persona=personas,
       version=versions)
def test_host_properties(env, name, method, payload, persona, version):
    path = '/v1/os-hosts/properties'
    if name is not None:
        path += '/' + _segment(name)
    _send(env, method, path, payload, persona, version)


@FUZZ
@given(route=st.sampled_from(['availability', 'timeline']),
       data=st.data(), persona=personas,
       version=st.one_of(st.just('reservation 1.2'), versions))
def test_availability_and_timeline(env, route, data, persona, version):
    base = AVAILABILITY if route == 'availability' else TIMELINE
    payload = data.draw(_body_or_raw(_mutated(base, sorted(base))))
    _send(env, 'POST', '/v1/os-hosts/%s' % route, payload, persona, version)


@FUZZ
@given(path=st.sampled_from(['/', '/v1', '/v1/', '/healthcheck',
                             '/healthcheck/', '/v2', '/v1/nothing',
                             '/v1/leases/', '/%00', '/v1/%ED%A0%80']),
       method=st.sampled_from(METHODS), payload=_body_or_raw(json_values),
       persona=personas, version=versions, params=queries)
def test_versions_and_healthcheck(env, path, method, payload, persona,
                                  version, params):
    query = _query_string(params)
    resp = _send(env, method, path + query, payload, persona, version)
    if path in READ_ONLY_PATHS and method not in ('GET', 'HEAD'):
        # a version document or /healthcheck refuses any other method,
        # unless the request was refused before (an odd query string, which
        # the input guard refuses first, or a missing identity on /v1)
        refused_before = (query and resp.status_int == 400) or (
            path.startswith('/v1') and persona is None and
            resp.status_int in (400, 401, 403))
        assert refused_before or resp.status_int == 405, '%s %s -> %s %s' % (
            method, path + query, resp.status, resp.text[:300])
        if resp.status_int == 405:
            assert resp.headers['Allow'] == 'GET, HEAD'
