"""Command-line values into request values."""

import datetime

import pytest

from climate.cli import client
from climate.cli import parsing


def test_key_values_types_and_json_commas():
    assert parsing.key_values(
        'resource_type=physical:host,min=1,max=20,'
        'hypervisor_properties=[">=", "$vcpus", "4"],'
        'resource_properties=["and", ["=", "$a", "x,y"], ["=", "$b", "1"]],'
        'note=-3', '--reservation') == {
        'resource_type': 'physical:host', 'min': 1, 'max': 20,
        'hypervisor_properties': '[">=", "$vcpus", "4"]',
        'resource_properties': '["and", ["=", "$a", "x,y"], '
                               '["=", "$b", "1"]]',
        'note': -3}


@pytest.mark.parametrize('text, message', [
    ('resource_type=noop,oops', "--reservation 'resource_type=noop,oops': "
                                "'oops' is not a key=value pair (expected "
                                "key=value[,key=value...])"),
    ('a=1,a=2', "--reservation 'a=1,a=2': key 'a' is given twice"),
    ('', '--reservation is empty: expected key=value[,key=value...]'),
    ('1a=2', "--reservation '1a=2': '1a=2' is not a key=value pair "
             "(expected key=value[,key=value...])"),
])
def test_key_values_errors(text, message):
    with pytest.raises(parsing.BadArgument) as exc:
        parsing.key_values(text, '--reservation')
    assert str(exc.value) == message


def test_reservation_needs_a_type():
    assert parsing.reservation('resource_type=noop') == {
        'resource_type': 'noop'}
    with pytest.raises(parsing.BadArgument, match='resource_type is '
                                                  'required'):
        parsing.reservation('min=1')


def test_reservation_change_picks_the_only_reservation():
    lease = {'id': 'L', 'reservations': [{'id': 'R'}]}
    assert parsing.reservation_change('max=3', lease) == {'id': 'R',
                                                          'max': 3}
    assert parsing.reservation_change('id=X,max=3', lease) == {'id': 'X',
                                                               'max': 3}
    lease['reservations'].append({'id': 'S'})
    with pytest.raises(parsing.BadArgument) as exc:
        parsing.reservation_change('max=3', lease)
    assert str(exc.value) == ("--reservation 'max=3': give id=<reservation "
                              "id>: lease L has 2 reservations")


def test_extras_dates_durations():
    assert parsing.extras(['a=1', 'b=x=y']) == {'a': '1', 'b': 'x=y'}
    with pytest.raises(parsing.BadArgument):
        parsing.extras(['nokey'])
    now = datetime.datetime(2030, 1, 1, 12, 0)
    assert parsing.date('now', '--start', now) == now
    assert parsing.date('2030-01-02T10:00:00+02:00', '--start') == \
        datetime.datetime(2030, 1, 2, 8, 0)
    with pytest.raises(parsing.BadArgument) as exc:
        parsing.date('soon', '--start')
    assert str(exc.value).startswith("Invalid --start 'soon': use ")
    assert parsing.duration('2h', '--prolong-for') == datetime.timedelta(
        hours=2)
    with pytest.raises(parsing.BadArgument) as exc:
        parsing.duration('2x', '--prolong-for')
    assert str(exc.value) == ("--prolong-for must be a whole number followed "
                              "by s, m, h, d or w (e.g. '2h'), not '2x'")


@pytest.mark.parametrize('url, root', [
    ('http://127.0.0.1:1234', 'http://127.0.0.1:1234/v1'),
    ('http://127.0.0.1:1234/', 'http://127.0.0.1:1234/v1'),
    ('http://h:1234/v1', 'http://h:1234/v1'),
    ('http://h/reservation/v1/', 'http://h/reservation/v1'),
    ('http://h/reservation', 'http://h/reservation/v1'),
])
def test_normalize_endpoint(url, root):
    assert client.normalize_endpoint(url) == root


def test_api_error_text():
    err = client.APIError(404, 'Lease x could not be found.',
                          'LeaseNotFound', 'req-1')
    assert str(err) == ('Lease x could not be found. (HTTP 404) '
                        '(Request-ID: req-1)')
    assert str(client.APIError(500, 'boom')) == 'boom (HTTP 500)'


def test_reservation_as_a_json_object():
    assert parsing.reservation(
        '{"resource_type": "virtual:instance", "server": {"name": "a,b"}}'
    ) == {'resource_type': 'virtual:instance', 'server': {'name': 'a,b'}}
    for text in ('{"resource_type": ', '{"a": 1}'):
        with pytest.raises(parsing.BadArgument):
            parsing.reservation(text)
    assert client._version_of({'reservations': [
        {'resource_type': 'virtual:instance', 'server_id': 'x'}]}) == '1.4'
    assert client._version_of({'reservations': [
        {'resource_type': 'virtual:instance', 'amount': 1}]}) is None
