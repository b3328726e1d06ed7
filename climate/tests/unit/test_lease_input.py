"""climate.manager.lease_input: request bodies to validated values, no I/O."""

import datetime

import pytest

from climate import exceptions
from climate.manager import lease_input

NOW = datetime.datetime(2030, 6, 1, 12, 0, 30)
HOUR = datetime.timedelta(hours=1)
DROP = object()


def dt(*args):
    return datetime.datetime(*args)


def body(**kw):
    values = {'name': 'lease', 'start_date': '2030-06-02 00:00',
              'end_date': '2030-06-03 00:00',
              'reservations': [{'resource_type': 'noop', 'size': 2}],
              'events': []}
    values.update(kw)
    return {k: v for k, v in values.items() if v is not DROP}


def create(minutes=60, max_name=80, **kw):
    return lease_input.parse_create(body(**kw), NOW, max_name, minutes)


def refused(func, *args, **kwargs):
    with pytest.raises(exceptions.InvalidInput) as info:
        func(*args, **kwargs)
    return str(info.value)


# -- create ------------------------------------------------------------------

def test_create_values():
    values = create(name='  my lease  ')
    assert values == {
        'name': 'my lease',
        'start_date': dt(2030, 6, 2),
        'end_date': dt(2030, 6, 3),
        'before_end_date': dt(2030, 6, 2, 23),
        'reservations': [('noop', {'size': 2})],
    }


def test_create_now_is_the_given_now():
    assert create(start_date='now')['start_date'] == NOW


def test_a_start_in_the_current_minute_means_now():
    assert create(start_date='2030-06-01 12:00')['start_date'] == NOW


def test_a_start_in_the_previous_minute_is_refused():
    assert refused(create, start_date='2030-06-01 11:59') == (
        'Invalid input: start_date 2030-06-01 11:59 is in the past (now is '
        '2030-06-01 12:00:30 UTC)')


def test_a_start_with_an_offset_is_compared_in_utc():
    # 13:30+02:00 is 11:30 UTC: in the past
    message = refused(create, start_date='2030-06-01T13:30:00+02:00')
    assert 'start_date 2030-06-01 11:30 is in the past' in message


def test_a_default_notice_never_precedes_the_start():
    values = create(start_date='2030-06-02 00:00',
                    end_date='2030-06-02 00:30')
    assert values['before_end_date'] == dt(2030, 6, 2)


def test_no_default_notice_when_minutes_is_zero():
    assert create(minutes=0)['before_end_date'] is None


def test_an_explicit_notice():
    values = create(before_end_date='2030-06-02T18:00:00Z')
    assert values['before_end_date'] == dt(2030, 6, 2, 18)


@pytest.mark.parametrize('before_end,accepted', [
    ('2030-06-02 00:00', True),
    ('2030-06-02 23:59', True),
    ('2030-06-03 00:00', False),
    ('2030-06-01 23:59', False),
    ('2030-06-04 00:00', False),
], ids=['at-start', 'before-end', 'at-end', 'before-start', 'after-end'])
def test_the_notice_must_lie_in_the_window(before_end, accepted):
    if accepted:
        assert create(before_end_date=before_end)['before_end_date'] == (
            datetime.datetime.strptime(before_end, '%Y-%m-%d %H:%M'))
    else:
        assert refused(create, before_end_date=before_end) == (
            'Invalid input: before_end_date must be between start_date and '
            'end_date')


@pytest.mark.parametrize('field', ['name', 'start_date', 'end_date'])
def test_required_fields(field):
    expected = 'Invalid input: %s is required' % field
    assert refused(create, **{field: DROP}) == expected
    assert refused(create, **{field: None}) == expected


@pytest.mark.parametrize('name,message', [
    ('', 'name must be a non-empty string'),
    ('  \t ', 'name must be a non-empty string'),
    (5, 'name must be a non-empty string'),
    ('x' * 81, 'name is longer than 80 characters'),
], ids=['empty', 'blank', 'number', 'too-long'])
def test_bad_names(name, message):
    assert refused(create, name=name) == 'Invalid input: ' + message


def test_name_length_is_configurable():
    assert create(name='x' * 10, max_name=10)['name'] == 'x' * 10
    assert 'longer than 9' in refused(create, name='x' * 10, max_name=9)


@pytest.mark.parametrize('start,end', [
    ('2030-06-02 00:00', '2030-06-02 00:00'),
    ('2030-06-02 00:00', '2030-06-01 23:59'),
    ('2030-06-02T00:00:00+00:00', '2030-06-02T01:00:00+01:00'),
], ids=['equal', 'reversed', 'equal-after-offsets'])
def test_end_must_follow_start(start, end):
    assert refused(create, start_date=start, end_date=end) == (
        'Invalid input: end_date must be later than start_date')


def test_bad_dates_name_their_field():
    with pytest.raises(exceptions.InvalidDate) as info:
        create(end_date='soon')
    assert str(info.value).startswith("Invalid end_date 'soon'")
    with pytest.raises(exceptions.InvalidDate) as info:
        create(before_end_date='soon')
    assert str(info.value).startswith("Invalid before_end_date 'soon'")


@pytest.mark.parametrize('reservations,message', [
    (DROP, 'reservations must be a non-empty list'),
    ([], 'reservations must be a non-empty list'),
    ('noop', 'reservations must be a non-empty list'),
    (['noop'], 'reservations[0] must be an object'),
    ([{'resource_type': 'noop'}, {}],
     'reservations[1].resource_type is required'),
    ([{'resource_type': ''}], 'reservations[0].resource_type is required'),
    ([{'resource_type': 3}], 'reservations[0].resource_type is required'),
    ([{'resource_type': 'noop', 'id': 'x'}],
     'reservations[0].id is set by Climate'),
    ([{'resource_type': 'noop', 'lease_id': 'x'}],
     'reservations[0].lease_id is set by Climate'),
    ([{'resource_type': 'noop', 'status': 'active'}],
     'reservations[0].status is set by Climate'),
    ([{'resource_type': 'noop', 'resource_id': 'h1'}],
     'reservations[0].resource_id is set by Climate'),
], ids=['missing', 'empty', 'string', 'item-string', 'no-type', 'empty-type',
        'number-type', 'id', 'lease-id', 'status', 'resource-id'])
def test_bad_reservations(reservations, message):
    assert refused(create, reservations=reservations) == (
        'Invalid input: ' + message)


def test_reservation_requests_keep_their_parameters_apart():
    values = create(reservations=[
        {'resource_type': 'physical:host', 'min': 1, 'max': 2},
        {'resource_type': 'noop'}])
    assert values['reservations'] == [('physical:host', {'min': 1, 'max': 2}),
                                      ('noop', {})]


def test_events_must_be_left_to_climate():
    assert create(events=DROP)['name'] == 'lease'
    assert create(events=None)['name'] == 'lease'
    assert refused(create, events=[{'event_type': 'start_lease'}]) == (
        'Invalid input: events are created by Climate from start_date, '
        'end_date and before_end_date; send an empty list')


# -- update ------------------------------------------------------------------

CURRENT = {'id': 'lease-1', 'name': 'lease',
           'start_date': dt(2030, 6, 2), 'end_date': dt(2030, 6, 3),
           'before_end_date': dt(2030, 6, 2, 23)}


def update(changes, current=None, started=False, max_name=80):
    return lease_input.parse_update(changes, dict(current or CURRENT), NOW,
                                    max_name, started)


def test_an_empty_update_changes_nothing():
    assert update({}) == dict(CURRENT, reservations=[])


def test_rename():
    assert update({'name': ' new '})['name'] == 'new'
    assert 'non-empty' in refused(update, {'name': ''})
    assert 'longer than 3' in refused(update, {'name': 'abcd'}, max_name=3)


@pytest.mark.parametrize('changes,start,end', [
    ({'prolong_for': '1d'}, dt(2030, 6, 2), dt(2030, 6, 4)),
    ({'reduce_by': '12h'}, dt(2030, 6, 2), dt(2030, 6, 2, 12)),
    ({'defer_by': '30m'}, dt(2030, 6, 2, 0, 30), dt(2030, 6, 3)),
    ({'advance_by': '3600'}, dt(2030, 6, 1, 23), dt(2030, 6, 3)),
    ({'defer_by': '1h', 'prolong_for': '1h'}, dt(2030, 6, 2, 1),
     dt(2030, 6, 3, 1)),
    ({'start_date': '2030-06-05 00:00', 'end_date': '2030-06-06 00:00'},
     dt(2030, 6, 5), dt(2030, 6, 6)),
    ({'end_date': '2030-06-03T02:00:00+02:00'}, dt(2030, 6, 2),
     dt(2030, 6, 3)),
], ids=['prolong', 'reduce', 'defer', 'advance', 'defer-and-prolong',
        'both-dates', 'same-end-other-offset'])
def test_moving_dates(changes, start, end):
    new = update(changes)
    assert (new['start_date'], new['end_date']) == (start, end)


def test_the_notice_moves_with_the_end():
    assert update({'prolong_for': '1d'})['before_end_date'] == dt(
        2030, 6, 3, 23)
    assert update({'reduce_by': '1h'})['before_end_date'] == dt(
        2030, 6, 2, 22)


def test_the_notice_never_moves_before_the_start():
    new = update({'reduce_by': '23h'})
    assert new['end_date'] == dt(2030, 6, 2, 1)
    assert new['before_end_date'] == dt(2030, 6, 2, 0)


def test_the_notice_stays_put_when_only_the_start_moves():
    assert update({'defer_by': '1h'})['before_end_date'] == dt(
        2030, 6, 2, 23)


def test_no_notice_stays_no_notice():
    current = dict(CURRENT, before_end_date=None)
    assert update({'prolong_for': '1h'}, current)['before_end_date'] is None


def test_an_explicit_notice_on_update():
    assert update({'before_end_date': '2030-06-02 06:00'})[
        'before_end_date'] == dt(2030, 6, 2, 6)
    assert 'between' in refused(update,
                                {'before_end_date': '2030-06-03 00:00'})


@pytest.mark.parametrize('changes', [
    {'end_date': '2030-06-04 00:00', 'prolong_for': '1h'},
    {'end_date': '2030-06-04 00:00', 'reduce_by': '1h'},
    {'prolong_for': '1h', 'reduce_by': '1h'},
    {'start_date': '2030-06-04 00:00', 'defer_by': '1h'},
    {'defer_by': '1h', 'advance_by': '1h'},
], ids=['end-prolong', 'end-reduce', 'prolong-reduce', 'start-defer',
        'defer-advance'])
def test_one_way_to_move_each_date(changes):
    assert 'cannot be combined' in refused(update, changes)


def test_combined_fields_are_named_in_order():
    assert refused(update, {'prolong_for': '1h', 'end_date': 'x'}) == (
        'Invalid input: end_date and prolong_for cannot be combined')


def test_none_values_count_as_absent():
    new = update({'end_date': None, 'prolong_for': '1h', 'name': None})
    assert new['end_date'] == dt(2030, 6, 3, 1)
    assert new['name'] == 'lease'


@pytest.mark.parametrize('changes,message', [
    ({'reduce_by': '1d'}, 'end_date must be later than start_date'),
    ({'defer_by': '2d'}, 'end_date must be later than start_date'),
    ({'start_date': '2030-06-01 11:00'}, 'is in the past'),
    ({'advance_by': '2d'}, 'start_date 2030-05-31 00:00 is in the past'),
    ({'end_date': '2030-06-01 12:00'},
     'end_date 2030-06-01 12:00 is in the past'),
    ({'prolong_for': 'x'}, 'prolong_for must be a whole number'),
    ({'advance_by': '-1h'}, 'advance_by must be a whole number'),
], ids=['reduce-past-start', 'defer-past-end', 'start-past', 'advance-past',
        'end-past', 'bad-duration', 'negative-duration'])
def test_refused_updates(changes, message):
    assert message in refused(update, changes)


def test_an_advance_into_the_current_minute_means_now():
    current = dict(CURRENT, start_date=dt(2030, 6, 1, 12, 10))
    assert update({'advance_by': '10m'}, current)['start_date'] == NOW


def test_a_started_lease_cannot_move_its_start():
    for changes in ({'start_date': '2030-06-02 01:00'}, {'defer_by': '1m'},
                    {'advance_by': '1s'}):
        with pytest.raises(exceptions.InvalidState) as info:
            update(changes, started=True)
        assert str(info.value) == (
            'Lease lease-1 is started: the start_date of a started lease '
            'cannot change')
        assert info.value.code == 409


def test_a_started_lease_may_restate_its_start_and_move_its_end():
    new = update({'start_date': '2030-06-02 00:00', 'prolong_for': '1h'},
                 started=True)
    assert (new['start_date'], new['end_date']) == (dt(2030, 6, 2),
                                                    dt(2030, 6, 3, 1))


def test_reservation_changes():
    new = update({'reservations': [{'id': 'r1', 'size': 3},
                                   {'id': 'r2'}]})
    assert new['reservations'] == [('r1', {'size': 3}), ('r2', {})]


@pytest.mark.parametrize('reservations,message', [
    ([{'size': 3}], 'reservations[0] must be an object with the id of the '
                    'reservation to change'),
    (['r1'], 'reservations[0] must be an object with the id'),
    ([{'id': 'r1'}, {'id': ''}], 'reservations[1] must be an object'),
    ([{'id': 'r1', 'resource_type': 'noop'}],
     'reservations[0].resource_type cannot change'),
], ids=['no-id', 'string', 'empty-id', 'resource-type'])
def test_bad_reservation_changes(reservations, message):
    assert message in refused(update, {'reservations': reservations})


def test_update_events_must_be_left_to_climate():
    assert 'events are created by Climate' in refused(
        update, {'events': [{}]})
    assert update({'events': []})['name'] == 'lease'


def test_current_values_are_not_modified():
    current = dict(CURRENT)
    lease_input.parse_update({'prolong_for': '1d', 'name': 'x'}, current,
                             NOW, 80, False)
    assert current == CURRENT


@pytest.mark.parametrize('changes,message', [
    ({'prolong_for': '3000000d'},
     'prolong_for 3000000d moves end_date out of the calendar'),
    ({'advance_by': '99999999d'},
     'advance_by 99999999d moves start_date out of the calendar'),
], ids=['beyond-9999', 'before-year-1'])
def test_moves_beyond_the_calendar_are_refused(changes, message):
    assert refused(update, changes) == 'Invalid input: ' + message


# -- helpers -----------------------------------------------------------------

def test_check_window_and_default_before_end():
    lease_input.check_window(NOW, NOW + HOUR)
    assert 'later than' in refused(lease_input.check_window, NOW, NOW)
    assert lease_input.default_before_end(NOW, NOW + 2 * HOUR, 60) == (
        NOW + HOUR)
    assert lease_input.default_before_end(NOW, NOW + HOUR, 120) == NOW
    assert lease_input.default_before_end(NOW, NOW + HOUR, 0) is None


def test_check_start_keeps_future_starts_and_clamps_this_minute():
    assert lease_input.check_start(NOW + HOUR, NOW) == NOW + HOUR
    assert lease_input.check_start(dt(2030, 6, 1, 12, 0, 0), NOW) == NOW
    assert 'in the past' in refused(lease_input.check_start,
                                    dt(2030, 6, 1, 11, 59, 59), NOW)
