"""climate.api.v1.types: JSON bodies to plain dicts, checked for shape."""

import json

import pytest
import webob

from climate.api import middleware
from climate.api.v1 import types
from climate import exceptions


def request(body, content_type='application/json'):
    req = webob.Request.blank('/v1/leases', method='POST')
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
    req.body = body.encode() if isinstance(body, str) else body
    if content_type is not None:
        req.content_type = content_type
    # what climate.api.middleware.JsonBody does before the controllers
    req.environ[middleware.JSON_BODY] = middleware.decode_json_body(
        req, types.MAX_BODY)
    return req


def create(body, **kw):
    return types.parse(request(body, **kw), types.LeaseCreate)


def update(body):
    return types.parse(request(body), types.LeaseUpdate)


def refused(func, body, exc=exceptions.InvalidInput, **kw):
    with pytest.raises(exc) as info:
        func(body, **kw)
    assert info.value.code == 400
    return str(info.value)


def test_a_full_create_body():
    body = {'name': 'l', 'start_date': 'now', 'end_date': '2030-01-01 00:00',
            'before_end_date': '2029-12-31 23:00',
            'reservations': [{'resource_type': 'noop', 'n': 1, 'f': 1.5,
                              'b': True, 'z': None, 's': 'x'}],
            'events': []}
    assert create(body) == body


def test_only_given_fields_come_back():
    assert create({'name': 'l'}) == {'name': 'l'}
    assert create({}) == {}
    assert update({'prolong_for': '1h'}) == {'prolong_for': '1h'}


def test_nulls_are_kept_for_the_manager_to_judge():
    assert create({'name': None, 'reservations': None}) == {
        'name': None, 'reservations': None}


def test_a_full_update_body():
    body = {'name': 'l', 'start_date': 'now', 'end_date': 'now',
            'before_end_date': 'now', 'prolong_for': '1h', 'reduce_by': '1h',
            'defer_by': '1h', 'advance_by': '1h',
            'reservations': [{'id': 'r', 'x': 1}], 'events': []}
    assert update(body) == body


def test_a_missing_content_type_means_json():
    assert create('{"name": "l"}', content_type=None) == {'name': 'l'}


@pytest.mark.parametrize('raw,message', [
    ('{"name": ', 'not JSON'),
    ('[]', 'the body must be a JSON object'),
    ('"text"', 'the body must be a JSON object'),
    ('null', 'the body must be a JSON object'),
    ('12', 'the body must be a JSON object'),
    ('{"name": "' + 'x' * types.MAX_BODY + '"}',
     'the body is larger than 1048576 bytes'),
], ids=['truncated', 'list', 'string', 'null', 'number', 'huge'])
def test_malformed_bodies(raw, message):
    text = refused(create, raw, exc=exceptions.MalformedRequestBody)
    assert text.startswith('Malformed request body: ' + message)


def test_other_content_types_are_refused():
    assert refused(create, '{}', exc=exceptions.MalformedRequestBody,
                   content_type='text/plain') == (
        # Blazar's sentence first (blazar.api.v1.utils.request_data)
        "Content type 'text/plain' isn't supported. Send the body as "
        "application/json.")


@pytest.mark.parametrize('content_type', ['application/json', 'text/plain',
                                          None])
def test_an_empty_body_reads_as_an_empty_object(content_type):
    # as in Blazar: the route then names what is missing
    assert create('', content_type=content_type) == {}


def test_unknown_fields_are_named_sorted():
    assert refused(create, {'name': 'l', 'zeta': 1, 'alpha': 2}) == (
        'Invalid input: unknown field(s) alpha, zeta')


@pytest.mark.parametrize('field', ['prolong_for', 'reduce_by', 'defer_by',
                                   'advance_by'])
def test_update_only_fields_are_unknown_to_create(field):
    assert refused(create, {field: '1h'}) == (
        'Invalid input: unknown field(s) %s' % field)


@pytest.mark.parametrize('body,message', [
    ({'name': 5}, 'name: Value should be string'),
    ({'name': ['l']}, 'name: Value should be string'),
    ({'name': True}, 'name: Value should be string'),
    ({'start_date': 1}, 'start_date: Value should be string'),
    ({'end_date': {'at': 1}}, 'end_date: Value should be string'),
    ({'reservations': 'noop'}, 'reservations must be a list'),
    ({'reservations': {'resource_type': 'noop'}},
     'reservations must be a list'),
    ({'reservations': ['noop']}, 'reservations[0] must be an object'),
    ({'reservations': [{}, [1]]}, 'reservations[1] must be an object'),
    ({'reservations': [{'resource_type': 'noop', 'x': [1]}]},
     'reservations[0].x must be a string, number, boolean or null, not '
     'list'),
    ({'reservations': [{'resource_type': 'noop'}, {'x': {'y': 1}}]},
     'reservations[1].x must be a string, number, boolean or null, not '
     'dict'),
    ({'events': 'none'}, 'events must be a list'),
    ({'events': [1]}, 'events[0] must be an object'),
    ({'events': [{'time': ['now']}]},
     'events[0].time must be a string, number, boolean or null, not list'),
], ids=['name-int', 'name-list', 'name-bool', 'start-int', 'end-dict',
        'res-string', 'res-object', 'res-item-string', 'res-item-list',
        'param-list', 'param-dict', 'events-string', 'events-item-int',
        'event-param-list'])
def test_wrong_types_name_the_place(body, message):
    assert refused(create, body) == 'Invalid input: ' + message


@pytest.mark.parametrize('field,limit', [
    ('name', 255), ('start_date', 64), ('end_date', 64),
    ('before_end_date', 64)])
def test_string_lengths(field, limit):
    assert create({field: 'x' * limit}) == {field: 'x' * limit}
    assert refused(create, {field: 'x' * (limit + 1)}) == (
        'Invalid input: %s: Value should have a maximum character '
        'requirement of %d' % (field, limit))


@pytest.mark.parametrize('field', ['prolong_for', 'reduce_by', 'defer_by',
                                   'advance_by'])
def test_duration_lengths_and_types(field):
    assert update({field: 'x' * 32}) == {field: 'x' * 32}
    assert 'maximum character requirement of 32' in refused(
        update, {field: 'x' * 33})
    assert refused(update, {field: 60}) == (
        'Invalid input: %s: Value should be string' % field)


@pytest.mark.parametrize('value', ['s', 1, 1.5, True, None],
                         ids=['str', 'int', 'float', 'bool', 'null'])
def test_json_scalar_accepts(value):
    assert types.json_scalar.validate(value) is value


@pytest.mark.parametrize('value', [[1], {'a': 1}, object()],
                         ids=['list', 'dict', 'object'])
def test_json_scalar_refuses(value):
    with pytest.raises(ValueError) as info:
        types.json_scalar.validate(value)
    assert str(info.value) == (
        'must be a string, number, boolean or null, not %s' %
        type(value).__name__)
