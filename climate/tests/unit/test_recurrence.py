"""The rule of a recurring series (``climate.lease.recurrence``): the
RRULE subset it takes and refuses, and the occurrences it makes across
weeks, intervals and daylight-saving changes."""

import datetime

import hypothesis
from hypothesis import strategies as st
import pytest

from climate import exceptions
from climate.lease import recurrence

UTC = datetime.timezone.utc


def rule(text, tz='UTC', on_conflict=None, cap=520):
    body = {'rrule': text, 'timezone': tz}
    if on_conflict:
        body['on_conflict'] = on_conflict
    return recurrence.parse(body, cap)


def starts(r, start, end, **kwargs):
    return [o.start for o in recurrence.occurrences(r, start, end, 1,
                                                    **kwargs)]


@pytest.mark.parametrize('text, message', [
    ('FREQ=MONTHLY;COUNT=2', "FREQ must be DAILY or WEEKLY, not 'MONTHLY'"),
    ('FREQ=DAILY', 'give COUNT or UNTIL'),
    ('FREQ=DAILY;COUNT=2;UNTIL=20300101', 'give COUNT or UNTIL'),
    ('FREQ=DAILY;BYDAY=MO;COUNT=2', 'BYDAY is for a WEEKLY rule'),
    ('FREQ=WEEKLY;BYDAY=1MO;COUNT=2', 'BYDAY takes MO,TU'),
    ('FREQ=WEEKLY;BYSETPOS=1;COUNT=2', 'BYSETPOS is not supported'),
    ('FREQ=DAILY;INTERVAL=0;COUNT=2', 'INTERVAL must be a whole number'),
    ('FREQ=DAILY;COUNT=0', 'COUNT must be a whole number from 1 to 520'),
    ('FREQ=DAILY;COUNT=2;COUNT=3', 'COUNT is given twice'),
    ('FREQ=DAILY;UNTIL=2030-01-01', 'UNTIL must be YYYYMMDD'),
    ('FREQ=DAILY;UNTIL=20301301', 'is not a date'),
    ('FREQ=WEEKLY;WKST=SU;COUNT=2', 'WKST must be MO'),
    ('FREQ', 'is not NAME=VALUE'),
])
def test_rules_outside_the_subset_are_refused_by_name(text, message):
    with pytest.raises(exceptions.InvalidInput) as err:
        rule(text)
    assert message in str(err.value)
    assert str(err.value).startswith('Invalid input: recurrence: ')


@pytest.mark.parametrize('body, message', [
    ('FREQ=DAILY;COUNT=2', 'a JSON object'),
    ({'rrule': 'FREQ=DAILY;COUNT=2', 'tz': 'UTC'}, 'tz: not a field'),
    ({'rrule': ''}, 'rrule is required'),
    ({'rrule': 'FREQ=DAILY;COUNT=2', 'timezone': 'Nowhere/City'},
     "unknown timezone 'Nowhere/City'"),
    ({'rrule': 'FREQ=DAILY;COUNT=2', 'timezone': 5}, 'IANA time zone'),
    ({'rrule': 'FREQ=DAILY;COUNT=2', 'on_conflict': 'wait'},
     'on_conflict must be refuse or skip'),
])
def test_the_recurrence_object_is_checked(body, message):
    with pytest.raises(exceptions.InvalidInput) as err:
        recurrence.parse(body, 520)
    assert message in str(err.value)


def test_a_parsed_rule_keeps_what_was_asked():
    r = rule('RRULE:freq=weekly;byday=th,tu;interval=2;count=6',
             'Europe/Paris', 'skip')
    assert (r.freq, r.interval, r.byday, r.count, r.until, r.timezone,
            r.on_conflict) == ('WEEKLY', 2, (1, 3), 6, None,
                               'Europe/Paris', 'skip')
    assert recurrence.describe(r) == {
        'rrule': 'RRULE:freq=weekly;byday=th,tu;interval=2;count=6',
        'timezone': 'Europe/Paris', 'on_conflict': 'skip'}
    assert rule('FREQ=DAILY;COUNT=1').on_conflict == recurrence.REFUSE


def test_weekly_on_two_days_every_other_week():
    # Tuesday 2030-01-01 09:00 UTC
    start = datetime.datetime(2030, 1, 1, 9)
    r = rule('FREQ=WEEKLY;BYDAY=TU,TH;INTERVAL=2;COUNT=5')
    assert starts(r, start, start + datetime.timedelta(hours=3)) == [
        datetime.datetime(2030, 1, d, 9) for d in (1, 3, 15, 17, 29)]


def test_until_is_inclusive_and_local():
    start = datetime.datetime(2030, 1, 1, 9)
    r = rule('FREQ=DAILY;UNTIL=20300104')  # the whole local day
    assert len(starts(r, start, start + datetime.timedelta(hours=1))) == 4
    r = rule('FREQ=DAILY;UNTIL=20300104T090000Z')
    assert len(starts(r, start, start + datetime.timedelta(hours=1))) == 4
    r = rule('FREQ=DAILY;UNTIL=20300104T085959Z')
    assert len(starts(r, start, start + datetime.timedelta(hours=1))) == 3


def test_a_class_keeps_its_wall_clock_across_daylight_saving():
    # Paris leaves winter time on 2030-03-31: 09:00-12:00 local is
    # 08:00-11:00 UTC before, 07:00-10:00 after
    r = rule('FREQ=WEEKLY;COUNT=3', 'Europe/Paris')
    start = datetime.datetime(2030, 3, 24, 8)  # a Sunday, 09:00 CET
    got = list(recurrence.occurrences(
        r, start, start + datetime.timedelta(hours=3), 1))
    assert [(o.start, o.end) for o in got] == [
        (datetime.datetime(2030, 3, 24, 8), datetime.datetime(2030, 3, 24,
                                                              11)),
        (datetime.datetime(2030, 3, 31, 7), datetime.datetime(2030, 3, 31,
                                                              10)),
        (datetime.datetime(2030, 4, 7, 7), datetime.datetime(2030, 4, 7,
                                                             10))]


def test_a_local_time_the_change_skips_lands_past_it():
    # 02:30 does not exist in Paris on 2030-03-31: read with the winter
    # offset, it is 01:30 UTC, 03:30 summer time
    r = rule('FREQ=DAILY;COUNT=2', 'Europe/Paris')
    start = datetime.datetime(2030, 3, 30, 1, 30)  # 02:30 CET
    got = starts(r, start, start + datetime.timedelta(hours=1))
    assert got == [datetime.datetime(2030, 3, 30, 1, 30),
                   datetime.datetime(2030, 3, 31, 1, 30)]
    local = recurrence.to_local(got[1], recurrence.zone('Europe/Paris'))
    assert local == datetime.datetime(2030, 3, 31, 3, 30)


def test_the_first_occurrence_must_be_a_day_of_the_rule():
    r = rule('FREQ=WEEKLY;BYDAY=WE;COUNT=2', 'Pacific/Auckland')
    # Tuesday 2030-01-01 20:00 UTC is Wednesday 09:00 in Auckland
    recurrence.check_first(r, datetime.datetime(2030, 1, 1, 20))
    with pytest.raises(exceptions.InvalidInput) as err:
        recurrence.check_first(r, datetime.datetime(2030, 1, 1, 9))
    assert 'start_date is a Tuesday in Pacific/Auckland' in str(err.value)


def test_total_counts_at_most_one_past_the_cap():
    start = datetime.datetime(2030, 1, 1, 9)
    r = rule('FREQ=DAILY;UNTIL=20400101')
    assert recurrence.total(r, start, start + datetime.timedelta(hours=1),
                            10) == 11


def test_a_stored_rule_reads_back_past_a_lowered_cap():
    r = rule('FREQ=DAILY;COUNT=500')
    again = recurrence.from_stored(r.text, r.timezone, r.on_conflict)
    assert again == r


ZONES = ['UTC', 'Europe/Paris', 'America/New_York', 'Australia/Lord_Howe',
         'Asia/Kolkata']


@hypothesis.settings(max_examples=200, deadline=None)
@hypothesis.given(
    zone=st.sampled_from(ZONES),
    freq=st.sampled_from(['DAILY', 'WEEKLY']),
    interval=st.integers(1, 4),
    days=st.sets(st.integers(0, 6), min_size=1, max_size=7),
    count=st.integers(1, 40),
    offset=st.integers(0, 3 * 366 * 24 * 4),
    hours=st.integers(1, 6 * 4))
def test_occurrences_are_in_order_on_the_rules_days_at_the_wall_clock(
        zone, freq, interval, days, count, offset, hours):
    tz = recurrence.zone(zone)
    local_start = datetime.datetime(2030, 1, 1) + datetime.timedelta(
        minutes=15 * offset)
    byday = ''
    if freq == 'WEEKLY':
        days = days | {local_start.weekday()}
        byday = ';BYDAY=' + ','.join(recurrence.DAYS[d]
                                     for d in sorted(days))
    r = rule('FREQ=%s;INTERVAL=%d%s;COUNT=%d' % (freq, interval, byday,
                                                 count), zone)
    start = recurrence.to_utc(local_start, tz)
    end = recurrence.to_utc(local_start + datetime.timedelta(
        minutes=15 * hours), tz)
    hypothesis.assume(end > start)
    got = list(recurrence.occurrences(r, start, end, 1))
    assert [o.index for o in got] == list(range(1, count + 1))
    assert got[0].start == start
    for before, after in zip(got, got[1:]):
        assert before.start < after.start
    for occ in got:
        assert occ.end > occ.start
        local = recurrence.to_local(occ.start, tz)
        gap = (local.date() - local_start.date()).days
        if freq == 'DAILY':
            assert gap % interval == 0
        else:
            assert local.weekday() in days
            monday = local_start.date() - datetime.timedelta(
                days=local_start.weekday())
            assert ((local.date() - monday).days // 7) % interval == 0
        # the wall clock kept, unless the day's change skipped it
        if recurrence.to_utc(local, tz) == occ.start and \
                local.time() != local_start.time():
            wall = datetime.datetime.combine(local.date(),
                                             local_start.time())
            assert recurrence.to_local(recurrence.to_utc(wall, tz),
                                       tz) != wall
