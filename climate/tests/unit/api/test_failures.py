"""A failure never half-writes, and nothing a user sends is a 500.

Through the real API (in-process, SQLite): a refused create leaves no row
in any table, a refused update leaves the lease and every row of the
database exactly as they were, including the noop plugin's action log.
"""

import datetime
import json

import pytest

from climate.db import models
from climate import exceptions
from climate.tests import fixtures
from climate.tests.fixtures import climate_env  # noqa: F401 - pytest fixture

FAR = {'start': '2090-01-01 00:00', 'end': '2090-01-02 00:00'}


def _body(name, **extra):
    return fixtures.lease_body(name=name, start=FAR['start'], end=FAR['end'],
                               **extra)


def _create(env, name, **extra):
    resp = env.request('POST', '/v1/leases', body=_body(name, **extra))
    assert resp.status_int == 201, resp.text
    return resp.json['lease']


def _without(key):
    body = _body('missing-%s' % key)
    del body[key]
    return body


def _assert_error(resp, status):
    assert resp.status_int == status, resp.text
    assert resp.content_type == 'application/json'
    body = resp.json
    assert set(body) == {'error_code', 'error_message', 'error_name'}
    assert body['error_code'] == status
    assert body['error_message']
    return body


# -- create ------------------------------------------------------------------

BAD_CREATES = [
    ('malformed-json', None, '{"name": ', 'not JSON'),
    ('empty-body', None, '', 'Missing parameter name, start_date, end_date'),
    ('not-an-object', None, '[1, 2]', 'the body must be a JSON object'),
    ('unknown-field', _body('u', colour='red'), None, 'colour'),
    ('no-name', _without('name'), None, 'Missing parameter name'),
    ('no-start', _without('start_date'), None,
     'Missing parameter start_date'),
    ('no-end', _without('end_date'), None, 'Missing parameter end_date'),
    ('name-not-string', dict(_body('x'), name=5), None, 'name'),
    ('start-not-string', dict(_body('x'), start_date=5), None, 'start_date'),
    ('bad-date', dict(_body('x'), end_date='2090-01-32 00:00'), None,
     "Invalid end_date '2090-01-32 00:00'"),
    ('end-before-start', dict(_body('x'), end_date='2089-01-01 00:00'),
     None, 'End date must be later than start date.'),
    ('start-in-past', dict(_body('x'), start_date='2001-01-01 00:00'), None,
     'start_date 2001-01-01 00:00 is in the past'),
    ('unknown-type', _body('x', reservations=[
        {'resource_type': 'noop'}, {'resource_type': 'storage:tape'}]),
     None, "The storage:tape resource type is not supported"),
    ('long-name', _body('n' * 81), None, 'name is longer than 80'),
    ('longer-name', _body('n' * 256), None, 'name'),
    ('long-param', _body('x', reservations=[
        {'resource_type': 'noop', 'note': 'x' * 256}]), None,
     'reservations.note is longer than 255 characters'),
    ('nested-param', _body('x', reservations=[
        {'resource_type': 'noop', 'a': [1]}]), None, 'reservations[0].a'),
    ('events', _body('x', events=[{'event_type': 'start_lease'}]), None,
     'events[0].event_type start_lease is made by Climate'),
]


@pytest.mark.parametrize('body,raw,message',
                         [case[1:] for case in BAD_CREATES],
                         ids=[case[0] for case in BAD_CREATES])
def test_refused_create_writes_nothing(climate_env, body, raw, message):
    before = climate_env.snapshot()
    resp = climate_env.request('POST', '/v1/leases', body=body, raw=raw)
    error = _assert_error(resp, 400)
    assert message in error['error_message']
    assert climate_env.snapshot() == before


def test_plugin_failure_rolls_the_whole_create_back(climate_env,
                                                    monkeypatch):
    """The second reservation's plugin refuses after the lease, both
    reservations, the events and the first noop action were written in
    the transaction: all of it is rolled back."""
    plugin = climate_env.plugin()
    reserve = plugin.reserve
    calls = []

    def reserve_then_refuse(ctx, lease, reservation):
        calls.append(reservation.id)
        reserve(ctx, lease, reservation)  # records a noop action
        if len(calls) == 2:
            raise exceptions.Conflict(reason='no capacity left')

    monkeypatch.setattr(plugin, 'reserve', reserve_then_refuse)
    before = climate_env.snapshot()
    resp = climate_env.request('POST', '/v1/leases', body=_body(
        'rolled-back', reservations=[{'resource_type': 'noop'},
                                     {'resource_type': 'noop'}]))
    error = _assert_error(resp, 409)
    assert error == {'error_code': 409, 'error_name': 'Conflict',
                     'error_message': 'Conflict: no capacity left'}
    assert len(calls) == 2
    assert climate_env.snapshot() == before
    # the name is free: nothing of the failed lease survived
    monkeypatch.setattr(plugin, 'reserve', reserve)
    lease = _create(climate_env, 'rolled-back')
    assert climate_env.noop_actions(lease['id']) == [('reserve',
                                                      lease['id'])]


def test_duplicate_name_writes_nothing(climate_env):
    _create(climate_env, 'taken')
    before = climate_env.snapshot()
    resp = climate_env.request('POST', '/v1/leases', body=_body('taken'))
    error = _assert_error(resp, 409)
    assert error['error_name'] == 'LeaseNameAlreadyExists'
    assert climate_env.snapshot() == before


def test_policy_refusal_writes_nothing(climate_env):
    before = climate_env.snapshot()
    resp = climate_env.request('POST', '/v1/leases', body=_body('reader'),
                               persona='reader')
    error = _assert_error(resp, 403)
    assert 'climate:leases:create' in error['error_message']
    assert climate_env.snapshot() == before


# -- update ------------------------------------------------------------------

BAD_UPDATES = [
    ('malformed-json', None, '{"name"', 400, 'not JSON'),
    ('unknown-field', {'name': 'x', 'status': 'ACTIVE'}, None, 400,
     'unknown field(s) status'),
    ('duplicate-name', {'name': 'neighbour'}, None, 409,
     'The lease with name: neighbour already exists'),
    ('name-and-bad-date', {'name': 'renamed', 'end_date': 'later'}, None,
     400, "Invalid end_date 'later'"),
    ('end-before-start', {'name': 'renamed', 'end_date': '2089-12-31 00:00'},
     None, 400, 'End date must be later than current and start date'),
    ('reduce-too-much', {'reduce_by': '2d'}, None, 400,
     'End date must be later than current and start date'),
    ('bad-duration', {'prolong_for': 'soon'}, None, 400,
     'prolong_for must be a whole number'),
    ('both-end-fields', {'prolong_for': '1h', 'end_date': '2090-01-03 00:00'},
     None, 400, 'end_date and prolong_for cannot be combined'),
    ('start-in-past', {'start_date': '2001-01-01 00:00'}, None, 400,
     'is in the past'),
    ('before-end-outside', {'before_end_date': '2090-01-05 00:00'}, None,
     403, 'Datetime is out of lease limits'),
    ('unknown-reservation', {'name': 'renamed', 'reservations': [
        {'id': 'nope', 'size': 2}]}, None, 400,
     'Please enter valid reservation IDs. Invalid reservation IDs are: '
     'nope'),
    ('other-resource-type', 'RESOURCE_TYPE', None, 409,
     'resource_type cannot be updated'),
    ('long-param', 'RESERVATION', None, 400,
     'reservations.note is longer than 255 characters'),
    ('events', {'events': [{'event_type': 'end_lease'}]}, None, 400,
     "a lease's events are given when it is created"),
]


@pytest.fixture
def target(climate_env):
    """A lease to update, and a neighbour whose name is taken."""
    resp = climate_env.request('GET', '/v1/leases')
    for lease in resp.json['leases']:
        if lease['name'] in ('target', 'neighbour', 'renamed'):
            climate_env.request('DELETE', '/v1/leases/' + lease['id'])
    lease = _create(climate_env, 'target', reservations=[
        {'resource_type': 'noop', 'size': 1}])
    _create(climate_env, 'neighbour')
    return lease


@pytest.mark.parametrize('body,raw,status,message',
                         [case[1:] for case in BAD_UPDATES],
                         ids=[case[0] for case in BAD_UPDATES])
def test_refused_update_leaves_the_lease_as_it_was(climate_env, target,
                                                   body, raw, status,
                                                   message):
    url = '/v1/leases/' + target['id']
    if body == 'RESERVATION':
        body = {'name': 'renamed', 'reservations': [
            {'id': target['reservations'][0]['id'], 'note': 'x' * 256}]}
    elif body == 'RESOURCE_TYPE':
        body = {'name': 'renamed', 'reservations': [
            {'id': target['reservations'][0]['id'],
             'resource_type': 'physical:host'}]}
    shown = climate_env.request('GET', url).json['lease']
    before = climate_env.snapshot()
    resp = climate_env.request('PUT', url, body=body, raw=raw)
    error = _assert_error(resp, status)
    assert message in error['error_message']
    assert climate_env.request('GET', url).json['lease'] == shown
    assert climate_env.snapshot() == before


def test_plugin_failure_rolls_the_whole_update_back(climate_env, target,
                                                    monkeypatch):
    """The name, the dates, the moved events and the plugin's own write
    all roll back when the plugin refuses the new dates."""
    plugin = climate_env.plugin()
    update = plugin.update

    def update_then_refuse(ctx, old_lease, lease, reservation, params):
        update(ctx, old_lease, lease, reservation, params)  # records
        assert lease.name == 'renamed'
        assert lease.end_date == datetime.datetime(2090, 1, 3)
        raise exceptions.Conflict(reason='host busy then')

    monkeypatch.setattr(plugin, 'update', update_then_refuse)
    url = '/v1/leases/' + target['id']
    shown = climate_env.request('GET', url).json['lease']
    before = climate_env.snapshot()
    resp = climate_env.request('PUT', url, body={'name': 'renamed',
                                                 'prolong_for': '1d'})
    assert _assert_error(resp, 409)['error_message'] == (
        'Conflict: host busy then')
    assert climate_env.request('GET', url).json['lease'] == shown
    assert shown['name'] == 'target'
    assert shown['end_date'] == '2090-01-02T00:00:00.000000'
    assert climate_env.snapshot() == before
    assert climate_env.noop_actions(target['id']) == [('reserve',
                                                       target['id'])]


def test_successful_update_is_what_the_database_holds(climate_env, target):
    """The control for the tests above: an accepted update does write."""
    url = '/v1/leases/' + target['id']
    before = climate_env.snapshot()
    resp = climate_env.request('PUT', url, body={'name': 'renamed',
                                                 'prolong_for': '1d'})
    assert resp.status_int == 200, resp.text
    assert climate_env.snapshot() != before
    shown = climate_env.request('GET', url).json['lease']
    assert (shown['name'], shown['end_date']) == (
        'renamed', '2090-01-03T00:00:00.000000')
    assert [e['time'] for e in shown['events']] == [
        '2090-01-01T00:00:00.000000', '2090-01-02T23:00:00.000000',
        '2090-01-03T00:00:00.000000']
    assert climate_env.noop_actions(target['id']) == [
        ('reserve', target['id']), ('update', target['id'])]


def test_refused_delete_writes_nothing(climate_env, target):
    before = climate_env.snapshot()
    resp = climate_env.request('DELETE', '/v1/leases/' + target['id'],
                               persona='member', project='project-b')
    assert _assert_error(resp, 404)['error_name'] == 'LeaseNotFound'
    assert climate_env.snapshot() == before


# -- nothing a user sends is a 500 -------------------------------------------

NO_500 = [
    pytest.param('POST', '', '[' * 100000, id='deeply-nested-json'),
    pytest.param('POST', '', b'{"name": "\xff\xfe"}', id='invalid-utf8'),
    pytest.param('POST', '', {'name': 'x', 'start_date': 'now',
                              'end_date': '9999-12-31T23:59:59-01:00',
                              'reservations': [{'resource_type': 'noop'}]},
                 id='date-overflows-after-offset'),
    pytest.param('POST', '', {'name': 'x', 'start_date': 'now',
                              'end_date': '0001-01-01T00:00:00+01:00',
                              'reservations': [{'resource_type': 'noop'}]},
                 id='date-underflows-after-offset'),
    pytest.param('POST', '', {'name': '\x00', 'start_date': 'now',
                              'end_date': '2090-01-01 00:00',
                              'reservations': [{'resource_type': 'noop'}],
                              'events': None, 'before_end_date': None},
                 id='nul-name-and-nulls'),
    pytest.param('POST', '', {'name': 'x', 'start_date': '',
                              'end_date': '', 'reservations': [{}]},
                 id='empty-strings'),
    pytest.param('PUT', '/LEASE', {'prolong_for': '3000000d'},
                 id='prolong-beyond-year-9999'),
    pytest.param('PUT', '/LEASE', {'prolong_for': '99999999999w'},
                 id='duration-overflows-timedelta'),
    pytest.param('PUT', '/LEASE', {'advance_by': '99999999d'},
                 id='advance-before-year-1'),
    pytest.param('PUT', '/LEASE', {'reservations': 'x'}, id='update-res-str'),
    pytest.param('PUT', '/LEASE', {'reservations': [None]},
                 id='update-res-null-item'),
    pytest.param('PUT', '/' + 'x' * 5000, {'name': 'y'}, id='long-id'),
    pytest.param('GET', '?marker=' + 'x' * 5000, None, id='long-marker'),
    pytest.param('GET', '?limit=', None, id='empty-limit'),
    pytest.param('GET', '?marker=', None, id='empty-marker'),
    pytest.param('GET', '?time_from=9999-12-31T23:59:59-01:00', None,
                 id='time-from-overflow'),
    pytest.param('GET', '?sort_key=name&sort_key=id', None,
                 id='repeated-sort-key'),
    pytest.param('DELETE', '/%00', None, id='nul-id'),
    pytest.param('PUT', '', {'name': 'x'}, id='put-on-collection'),
    pytest.param('DELETE', '/', None, id='delete-on-collection'),
]


@pytest.mark.parametrize('method,suffix,payload', NO_500)
def test_no_500_for_user_input(climate_env, method, suffix, payload):
    lease = _create(climate_env, 'no-500-%s' % len(
        climate_env.rows(models.Lease)))
    path = '/v1/leases' + suffix.replace('/LEASE', '/' + lease['id'])
    kwargs = {'raw': payload} if isinstance(payload, (str, bytes)) else {
        'body': payload}
    resp = climate_env.request(method, path, version='1.1', **kwargs)
    assert resp.status_int < 500, resp.text
    if resp.status_int >= 400:
        _assert_error(resp, resp.status_int)


def test_invalid_utf8_names_the_problem(climate_env):
    resp = climate_env.request('POST', '/v1/leases',
                               raw=b'{"name": "\xff"}')
    error = _assert_error(resp, 400)
    assert 'UTF-8' in error['error_message'] or 'utf-8' in (
        error['error_message'])



def test_json_error_body_for_every_status(climate_env):
    for method, path, status in (('PATCH', '/v1/leases', 405),
                                 ('GET', '/v1/nope', 404),
                                 ('GET', '/v1/leases/nope', 404)):
        resp = climate_env.request(method, path)
        body = _assert_error(resp, status)
        assert json.loads(resp.text) == body
