"""What the panels show of the API's values and accept of the user's."""

import pytest
from django.core import exceptions as django_exceptions

from climate.dashboard.api import climate as climate_api
from climate.dashboard.content.leases import bodies
from climate.dashboard import display
from climate.dashboard import validation


def test_dates_are_shown_to_the_minute_in_utc():
    assert display.short_date('2090-01-31T12:05:59.000000') == \
        '2090-01-31 12:05 UTC'
    assert display.short_date(None) == display.MISSING
    assert display.short_date('soon') == 'soon'


def test_lengths_of_time_in_words():
    assert str(display.hours(5400)) == '1 h 30 min'
    assert str(display.hours(604800)) == '168 h'
    assert str(display.hours(60)) == '1 min'


@pytest.mark.parametrize('text', ['', '  ', '[">=", "$vcpus", "8"]'])
def test_filters_that_pass(text):
    assert validation.json_filter(text) == text.strip()


@pytest.mark.parametrize('text', ['[">="', '{"vcpus": 8}', '8'])
def test_filters_that_do_not(text):
    with pytest.raises(django_exceptions.ValidationError):
        validation.json_filter(text)


def test_dates_and_durations_are_the_apis():
    assert validation.date('2090-01-01T12:00:00+01:00').hour == 11
    assert validation.duration('2d').days == 2
    for bad in ('0h', '2 days', ''):
        with pytest.raises(django_exceptions.ValidationError):
            validation.duration(bad)


def test_an_update_sends_only_what_changed():
    lease = climate_api.Lease({'id': 'x', 'name': 'lab'})
    assert bodies.update_body({'name': 'lab', 'prolong_for': '1h',
                               'end_date': '', 'advance_by': '30m'},
                              lease) == {'prolong_for': '1h',
                                         'advance_by': '30m'}


def test_a_lease_value_reads_missing_fields_as_none_and_others_not():
    lease = climate_api.Lease({'id': 'x'})
    assert lease.lease_type is None
    assert not hasattr(lease, 'to_dict')
    assert lease == climate_api.Lease({'id': 'x'})


def _message(exc_info):
    return ' '.join(str(m) for m in exc_info.value.messages)


def test_key_value_lines():
    assert validation.key_values('gpu = true\n\nrack=r1=a\n') == {
        'gpu': 'true', 'rack': 'r1=a'}
    with pytest.raises(django_exceptions.ValidationError) as exc:
        validation.key_values('gpu=true\n=x')
    assert _message(exc) == 'Line 2 is not key=value: =x'


def test_names_are_read_once_in_their_order():
    assert validation.names('web, ssh\nweb db') == ['web', 'ssh', 'db']
    assert validation.names('') == []


def test_addresses_are_read_canonical_and_once():
    assert validation.addresses('2001:DB8::0A, 10.0.0.1\n2001:db8::a') == [
        '2001:db8::a', '10.0.0.1']
    assert validation.addresses('  ') == []
    with pytest.raises(django_exceptions.ValidationError) as exc:
        validation.addresses('10.0.0.1 host-a')
    assert _message(exc) == 'host-a is not an IP address.'


@pytest.mark.parametrize('text, networks', [
    ('', 'auto'), ('AUTO', 'auto'), ('none', 'none'),
    ('a,b  c', [{'uuid': 'a'}, {'uuid': 'b'}, {'uuid': 'c'}])])
def test_a_boot_requests_networks(text, networks):
    assert validation.server_networks(text) == networks


def test_heat_documents_are_mappings_kept_as_typed():
    text = 'heat_template_version: 2018-08-31\nresources: {}\n'
    assert validation.heat_document(text, 'template') == text.strip()
    assert validation.heat_document(' ', 'template') == ''
    for bad, words in (('[1, 2]', 'The template is a mapping'),
                       ('a: [', 'The template is not YAML or JSON')):
        with pytest.raises(django_exceptions.ValidationError) as exc:
            validation.heat_document(bad, 'template')
        assert _message(exc).startswith(words)


@pytest.mark.parametrize('args, problems', [
    (('', '2090-01-01 00:00', 'virtual:volume', False, None), set()),
    (('immediate', 'NOW', 'virtual:volume', False, None), set()),
    (('immediate', '2090-01-01 00:00', 'network', False, None),
     {'start_date'}),
    (('scheduled', '', 'physical:host', False, None), {'start_date'}),
    (('with_retries', 'now', 'physical:host', False, 0), set()),
    (('scheduled', '2090-01-01 00:00', 'physical:host', False, 0),
     {'max_retries'}),
    (('best_effort', 'now', 'physical:host', False, None), set()),
    (('best_effort', 'now', 'physical:host', True, None), {'lease_type'}),
    (('best_effort', 'now', 'virtual:instance', False, None),
     {'lease_type'}),
])
def test_what_each_lease_type_takes(args, problems):
    assert set(validation.lease_type_rules(*args)) == problems


def test_each_type_sends_only_its_fields():
    data = {'resource_type': 'volume', 'size_gb': 10, 'volume_count': None,
            'volume_type': '', 'volume_on_end': 'snapshot',
            'resource_properties': '', 'amount': 3}
    assert bodies.reservation(data) == {
        'resource_type': 'virtual:volume', 'size_gb': 10,
        'on_end': 'snapshot'}


def test_volume_lines():
    assert validation.volume_specs('a 1\n b 20 snapshot=s type=t ') == [
        {'name': 'a', 'size_gb': 1},
        {'name': 'b', 'size_gb': 20, 'snapshot_id': 's', 'volume_type': 't'}]
    for bad, words in (('a', 'Line 1: give its size'),
                       ('a 0', 'Line 1: give its size'),
                       ('a +5', 'Line 1: give its size'),
                       ('a 1\nb 2 colour=red', 'Line 2: colour=red is not')):
        with pytest.raises(django_exceptions.ValidationError) as exc:
            validation.volume_specs(bad)
        assert _message(exc).startswith(words)
