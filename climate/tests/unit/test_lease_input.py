"""climate.lease.input: request bodies to validated values, no I/O."""

import datetime

import pytest

from climate import exceptions
from climate.lease import input as lease_input

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
    """The message of the 400 ``func`` raises."""
    with pytest.raises(exceptions.ClimateException) as info:
        func(*args, **kwargs)
    assert info.value.code == 400, info.value
    return str(info.value)


def forbidden(func, *args, **kwargs):
    """The message of the 403 ``func`` raises (Blazar's NotAuthorized)."""
    with pytest.raises(exceptions.DateOutOfLeaseLimits) as info:
        func(*args, **kwargs)
    assert info.value.code == 403
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
        'events': [],
    }


def test_create_now_is_the_given_now():
    assert create(start_date='now')['start_date'] == NOW


def test_a_start_in_the_current_minute_means_now():
    assert create(start_date='2030-06-01 12:00')['start_date'] == NOW


def test_a_start_in_the_previous_minute_is_refused():
    assert refused(create, start_date='2030-06-01 11:59') == (
        'Start date must be later than current date. start_date '
        '2030-06-01 11:59 is in the past (now is 2030-06-01 12:00:30 UTC).')


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
    ('2030-06-02 00:01', True),
    ('2030-06-02 23:59', True),
    ('2030-06-02 00:00', False),
    ('2030-06-03 00:00', False),
    ('2030-06-01 23:59', False),
    ('2030-06-04 00:00', False),
], ids=['after-start', 'before-end', 'at-start', 'at-end', 'before-start',
        'after-end'])
def test_the_notice_must_lie_strictly_inside_the_lease(before_end, accepted):
    if accepted:
        assert create(before_end_date=before_end)['before_end_date'] == (
            datetime.datetime.strptime(before_end, '%Y-%m-%d %H:%M'))
    else:
        assert forbidden(create, before_end_date=before_end) == (
            'Datetime is out of lease limits. before_end_date %s:00 must be '
            'after start_date 2030-06-02 00:00:00 and before end_date '
            '2030-06-03 00:00:00.' % before_end)


def test_an_empty_notice_means_the_default():
    assert create(before_end_date='')['before_end_date'] == dt(
        2030, 6, 2, 23)


@pytest.mark.parametrize('field', ['name', 'start_date', 'end_date'])
def test_required_fields(field):
    expected = 'Missing parameter %s' % field
    assert refused(create, **{field: DROP}) == expected
    assert refused(create, **{field: None}) == expected


def test_every_missing_field_is_named_in_order():
    assert refused(lease_input.parse_create, {}, NOW, 80, 60) == (
        'Missing parameter name, start_date, end_date')
    assert refused(create, name=DROP, end_date=DROP) == (
        'Missing parameter name, end_date')


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
    assert refused(create, start_date=start, end_date=end).startswith(
        'End date must be later than start date. end_date ')


def test_bad_dates_name_their_field():
    with pytest.raises(exceptions.InvalidDate) as info:
        create(end_date='soon')
    assert str(info.value).startswith(
        "soon is an invalid date. Required format: %Y-%m-%d %H:%M. Invalid "
        "end_date 'soon'")
    with pytest.raises(exceptions.InvalidDate) as info:
        create(before_end_date='soon')
    assert "Invalid before_end_date 'soon'" in str(info.value)


@pytest.mark.parametrize('reservations', [DROP, None, []],
                         ids=['missing', 'null', 'empty'])
def test_a_lease_without_reservations(reservations):
    assert create(reservations=reservations)['reservations'] == []


@pytest.mark.parametrize('reservations,message', [
    ('noop', 'Invalid input: reservations must be a list'),
    (['noop'], 'Invalid input: reservations[0] must be an object'),
    ([{'resource_type': 'noop'}, {}], 'Missing parameter resource_type'),
    ([{'resource_type': None}], 'Missing parameter resource_type'),
    ([{'resource_type': 'noop', 'id': 'x'}],
     'Invalid input: reservations[0].id is set by Climate'),
    ([{'resource_type': 'noop', 'lease_id': 'x'}],
     'Invalid input: reservations[0].lease_id is set by Climate'),
    ([{'resource_type': 'noop', 'status': 'active'}],
     'Invalid input: reservations[0].status is set by Climate'),
    ([{'resource_type': 'noop', 'resource_id': 'h1'}],
     'Invalid input: reservations[0].resource_id is set by Climate'),
], ids=['string', 'item-string', 'no-type', 'null-type', 'id', 'lease-id',
        'status', 'resource-id'])
def test_bad_reservations(reservations, message):
    assert refused(create, reservations=reservations) == message


def test_the_plugin_registry_judges_the_resource_type():
    # an unknown, empty or odd type is UnsupportedResourceType there
    assert create(reservations=[{'resource_type': 3}])['reservations'] == [
        (3, {})]


def test_reservation_requests_keep_their_parameters_apart():
    values = create(reservations=[
        {'resource_type': 'physical:host', 'min': 1, 'max': 2},
        {'resource_type': 'noop'}])
    assert values['reservations'] == [('physical:host', {'min': 1, 'max': 2}),
                                      ('noop', {})]


def test_no_events_of_its_own():
    for events in (DROP, None, []):
        assert create(events=events)['events'] == []


def test_user_events_are_kept():
    values = create(events=[
        {'event_type': 'notification', 'time': '2030-06-02 12:00'},
        {'event_type': 'reminder', 'time': '2030-06-02T13:00:00+01:00'}])
    assert values['events'] == [('notification', dt(2030, 6, 2, 12)),
                                ('reminder', dt(2030, 6, 2, 12))]


def test_blazarclients_event_date_is_the_time():
    values = create(events=[{'event_type': 'notification',
                             'event_date': '2030-06-02 12:00'}])
    assert values['events'] == [('notification', dt(2030, 6, 2, 12))]


@pytest.mark.parametrize('events,message', [
    ('notification', 'Invalid input: events must be a list'),
    (['notification'], 'Invalid event: events[0] must be an object'),
    ([{'time': '2030-06-02 12:00'}],
     'Invalid event: events[0].event_type must be a non-empty string'),
    ([{'event_type': ' ', 'time': '2030-06-02 12:00'}],
     'Invalid event: events[0].event_type must be a non-empty string'),
    ([{'event_type': 'x' * 67, 'time': '2030-06-02 12:00'}],
     'Invalid event: events[0].event_type is longer than 66 characters'),
    ([{'event_type': 'notification'}],
     'Invalid event: events[0].time is required'),
    ([{'event_type': 'start_lease', 'time': '2030-06-02 12:00'}],
     "Invalid event: events[0].event_type start_lease is made by Climate "
     "from the lease's dates"),
    ([{'event_type': 'n', 'time': '2030-06-02 12:00', 'status': 'DONE'}],
     'Invalid event: events[0].status cannot be set; an event takes '
     'event_type and time (or event_date)'),
    ([{'event_type': 'n', 'time': '2030-06-02 12:00',
       'event_date': '2030-06-02 12:00'}],
     'Invalid event: events[0].time and events[0].event_date cannot be '
     'combined'),
    ([{'event_type': 'n', 'time': 'soon'}],
     "soon is an invalid date. Required format: %Y-%m-%d %H:%M. Invalid "
     "events[0].time 'soon'"),
], ids=['string', 'item-string', 'no-type', 'blank-type', 'long-type',
        'no-time', 'engine-type', 'status', 'both-times', 'bad-time'])
def test_bad_user_events(events, message):
    assert refused(create, events=events).startswith(message)


def test_user_events_are_bounded():
    event = {'event_type': 'n', 'time': '2030-06-02 12:00'}
    assert len(create(events=[event] * 100)['events']) == 100
    assert refused(create, events=[event] * 101) == (
        'Invalid event: a lease takes at most 100 events of its own')


# -- update ------------------------------------------------------------------

CURRENT = {'id': 'lease-1', 'name': 'lease',
           'start_date': dt(2030, 6, 2), 'end_date': dt(2030, 6, 3),
           'before_end_date': dt(2030, 6, 2, 23)}


def update(changes, current=None, status='PENDING', max_name=80):
    return lease_input.parse_update(changes, dict(current or CURRENT), NOW,
                                    max_name, status)


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
    ({'start_date': '2030-06-04 00:00', 'end_date': '2030-06-06 00:00'},
     dt(2030, 6, 4), dt(2030, 6, 6)),
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
    assert forbidden(update, {'before_end_date': '2030-06-03 00:00'}) == (
        'Datetime is out of lease limits. before_end_date 2030-06-03 '
        '00:00:00 must be after start_date 2030-06-02 00:00:00 and before '
        'end_date 2030-06-03 00:00:00.')


def test_the_notice_follows_a_start_moved_past_it():
    new = update({'defer_by': '1410m'})
    assert new['start_date'] == dt(2030, 6, 2, 23, 30)
    assert new['before_end_date'] == dt(2030, 6, 2, 23, 30)


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
    ({'reduce_by': '1d'}, 'The end_date must be later than the start_date. '
                          'Both are 2030-06-02 00:00:00.'),
    ({'reduce_by': '25h'}, 'End date must be later than current and start '
                           'date. end_date 2030-06-01 23:00:00, start_date '
                           '2030-06-02 00:00:00, now 2030-06-01 12:00:30 '
                           'UTC.'),
    ({'defer_by': '2d'}, 'End date must be later than current and start '
                         'date.'),
    ({'start_date': '2030-06-01 11:00'},
     'Start date must be later than current date.'),
    ({'advance_by': '2d'}, 'Start date must be later than current date. '
                           'start_date 2030-05-31 00:00 is in the past'),
    ({'end_date': '2030-06-01 11:59'},
     'End date must be later than current and start date.'),
    ({'prolong_for': 'x'}, 'prolong_for must be a whole number'),
    ({'advance_by': '-1h'}, 'advance_by must be a whole number'),
], ids=['reduce-to-start', 'reduce-past-start', 'defer-past-end',
        'start-past', 'advance-past', 'end-past', 'bad-duration',
        'negative-duration'])
def test_refused_updates(changes, message):
    assert message in refused(update, changes)


def test_an_advance_into_the_current_minute_means_now():
    current = dict(CURRENT, start_date=dt(2030, 6, 1, 12, 10))
    assert update({'advance_by': '10m'}, current)['start_date'] == NOW


def test_an_end_in_the_current_minute_is_accepted():
    # Blazar's "now" is the current minute
    current = dict(CURRENT, start_date=dt(2030, 6, 1, 11))
    new = update({'end_date': '2030-06-01 12:00'}, current, status='ACTIVE')
    assert new['end_date'] == dt(2030, 6, 1, 12)


@pytest.mark.parametrize('status,start', [
    ('ACTIVE', dt(2030, 6, 2)),
    ('PENDING', dt(2030, 6, 1, 11, 59)),
], ids=['active', 'start-passed'])
def test_a_started_lease_cannot_move_its_start(status, start):
    current = dict(CURRENT, start_date=start)
    for changes in ({'start_date': '2030-06-02 01:00'}, {'defer_by': '1m'},
                    {'advance_by': '1s'}):
        assert refused(update, changes, current, status=status) == (
            'Cannot modify the start date of already started leases. Lease '
            'lease-1 started at %s UTC.' % start)


def test_a_started_lease_may_restate_its_start_and_move_its_end():
    new = update({'start_date': '2030-06-02 00:00', 'prolong_for': '1h'},
                 status='ACTIVE')
    assert (new['start_date'], new['end_date']) == (dt(2030, 6, 2),
                                                    dt(2030, 6, 3, 1))


def test_a_lease_started_now_may_restate_its_start_at_the_minute():
    # "now" kept its second; Blazar's clients send the minute back
    current = dict(CURRENT, start_date=dt(2030, 6, 2, 0, 0, 21))
    new = update({'start_date': '2030-06-02 00:00', 'prolong_for': '1h'},
                 current, status='ACTIVE')
    assert new['start_date'] == dt(2030, 6, 2, 0, 0, 21)
    # moving it by a duration onto the minute is still a move
    assert refused(update, {'advance_by': '21s'}, current,
                   status='ACTIVE').startswith(
        'Cannot modify the start date of already started leases.')
    assert refused(update, {'start_date': '2030-06-02 00:01'}, current,
                   status='ACTIVE').startswith(
        'Cannot modify the start date of already started leases.')


def test_reservation_changes():
    new = update({'reservations': [{'id': 'r1', 'size': 3},
                                   {'id': 'r2', 'resource_type': 'noop'}]})
    assert new['reservations'] == [('r1', None, {'size': 3}),
                                   ('r2', 'noop', {})]


@pytest.mark.parametrize('reservations,message', [
    ([{'size': 3}], 'Missing parameter reservation ID'),
    ([{'id': None}], 'Missing parameter reservation ID'),
    (['r1'], 'Invalid input: reservations[0] must be an object with the id '
             'of the reservation to change'),
    ('r1', 'Invalid input: reservations must be a list'),
], ids=['no-id', 'null-id', 'string', 'not-a-list'])
def test_bad_reservation_changes(reservations, message):
    assert refused(update, {'reservations': reservations}) == message


def test_update_events_must_be_left_to_climate():
    assert refused(update, {'events': [{}]}) == (
        "Invalid input: a lease's events are given when it is created; an "
        "update takes an empty list")
    assert update({'events': []})['name'] == 'lease'


# -- update: what Blazar allows in each status -------------------------------

ENDED = dict(CURRENT, start_date=dt(2030, 5, 1), end_date=dt(2030, 5, 2),
             before_end_date=dt(2030, 5, 1, 23))


@pytest.mark.parametrize('status', ['PENDING', 'ACTIVE', 'TERMINATED',
                                    'ERROR'])
def test_any_stable_lease_may_be_renamed(status):
    assert update({'name': 'new'}, ENDED, status=status)['name'] == 'new'
    assert update({}, ENDED, status=status) == dict(ENDED, reservations=[])


@pytest.mark.parametrize('status', ['TERMINATED', 'ACTIVE'],
                         ids=['terminated', 'end-passed'])
def test_an_ended_lease_can_only_be_renamed(status):
    for changes in ({'name': 'x', 'end_date': '2030-06-05 00:00'},
                    {'prolong_for': '1h'}, {'events': []}):
        assert refused(update, changes, ENDED, status=status) == (
            'Terminated leases can only be renamed. Lease lease-1 ended at '
            '2030-05-02 00:00:00 UTC.')


def test_an_ended_lease_is_told_about_its_start_first():
    # Blazar's order: the start is checked before the end
    assert refused(update, {'defer_by': '1h'}, ENDED,
                   status='TERMINATED').startswith(
        'Cannot modify the start date of already started leases.')


def test_a_lease_in_error_can_only_be_renamed():
    with pytest.raises(exceptions.InvalidState) as info:
        update({'prolong_for': '1h'}, status='ERROR')
    assert info.value.code == 409
    assert str(info.value) == (
        'Lease lease-1 is ERROR: a lease in ERROR can only be renamed or '
        'deleted')


def test_current_values_are_not_modified():
    current = dict(CURRENT)
    lease_input.parse_update({'prolong_for': '1d', 'name': 'x'}, current,
                             NOW, 80, 'PENDING')
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
    assert refused(lease_input.check_window, NOW, NOW) == (
        'End date must be later than start date. end_date 2030-06-01 '
        '12:00:30 is not after start_date 2030-06-01 12:00:30.')
    assert lease_input.default_before_end(NOW, NOW + 2 * HOUR, 60) == (
        NOW + HOUR)
    assert lease_input.default_before_end(NOW, NOW + HOUR, 120) == NOW
    assert lease_input.default_before_end(NOW, NOW + HOUR, 0) is None


def test_check_start_keeps_future_starts_and_clamps_this_minute():
    assert lease_input.check_start(NOW + HOUR, NOW) == NOW + HOUR
    assert lease_input.check_start(dt(2030, 6, 1, 12, 0, 0), NOW) == NOW
    assert 'in the past' in refused(lease_input.check_start,
                                    dt(2030, 6, 1, 11, 59, 59), NOW)
