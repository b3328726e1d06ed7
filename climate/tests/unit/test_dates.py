"""climate.dates: the date forms the API accepts, UTC, second precision."""

import datetime

import pytest

from climate import dates
from climate import exceptions

NOW = datetime.datetime(2030, 6, 1, 12, 30, 45)


def dt(*args):
    return datetime.datetime(*args)


@pytest.mark.parametrize('text,expected', [
    ('now', NOW),
    ('NOW', NOW),
    ('  Now ', NOW),
    ('2030-01-31 12:00', dt(2030, 1, 31, 12, 0)),
    ('2030-01-31T12:00:00', dt(2030, 1, 31, 12, 0)),
    ('2030-01-31T12:00', dt(2030, 1, 31, 12, 0)),
    ('2030-01-31', dt(2030, 1, 31)),
    ('2030-01-31T12:00:00Z', dt(2030, 1, 31, 12, 0)),
    ('2030-01-31T12:00:00z', dt(2030, 1, 31, 12, 0)),
    ('2030-01-31T12:00:00+00:00', dt(2030, 1, 31, 12, 0)),
    ('2030-01-01T10:00:00+02:00', dt(2030, 1, 1, 8, 0)),
    ('2030-01-01T10:00:00-05:30', dt(2030, 1, 1, 15, 30)),
    ('2030-01-01T01:00:00+02:00', dt(2029, 12, 31, 23, 0)),
    ('2030-01-31T12:00:00.999999', dt(2030, 1, 31, 12, 0, 0)),
    ('2030-01-31T12:00:59.5+01:00', dt(2030, 1, 31, 11, 0, 59)),
    (' 2030-01-31 12:00 ', dt(2030, 1, 31, 12, 0)),
    ('1970-01-01 00:00', dt(1970, 1, 1)),
    # ISO 8601 reduced precision and basic format (Python's fromisoformat)
    ('2030-01-31 12', dt(2030, 1, 31, 12, 0)),
    ('20300131T1200Z', dt(2030, 1, 31, 12, 0)),
    ('9998-12-31T23:59:59', dt(9998, 12, 31, 23, 59, 59)),
], ids=lambda v: v.strip().replace(':', '') if isinstance(v, str) else '')
def test_parse_accepted_forms(text, expected):
    parsed = dates.parse(text, 'start_date', now=NOW)
    assert parsed == expected
    assert parsed.tzinfo is None
    assert parsed.microsecond == 0


@pytest.mark.parametrize('value', [
    'tomorrow', '', '   ', '2030-13-01 00:00', '2030-02-30 00:00',
    '2030-01-31 25:00', '31/01/2030', '2030-01-31 12h', 'now please',
    '2030-01-31T12:00:00+25:00',
], ids=lambda v: 'value-%s' % v.replace(':', '').replace(' ', '_'))
def test_parse_refuses_with_field_and_value(value):
    with pytest.raises(exceptions.InvalidDate) as info:
        dates.parse(value, 'end_date', now=NOW)
    # Blazar's sentence first, filled as Blazar fills it, then Climate's
    assert str(info.value) == (
        "%s is an invalid date. Required format: %%Y-%%m-%%d %%H:%%M. "
        "Invalid end_date '%s': use 'YYYY-MM-DD HH:MM', 'now' or ISO 8601 "
        "(e.g. 2030-01-31T12:00:00+01:00)." % (value, value))
    assert info.value.code == 400


@pytest.mark.parametrize('value', [None, 1893456000, 1.5, ['now'],
                                   {'d': 1}, True],
                         ids=['none', 'int', 'float', 'list', 'dict', 'bool'])
def test_parse_refuses_non_strings(value):
    with pytest.raises(exceptions.InvalidDate) as info:
        dates.parse(value, 'start_date')
    assert "Invalid start_date '%s'" % (value,) in str(info.value)


@pytest.mark.parametrize('value', ['9999-12-31T23:59:59-01:00',
                                   '0001-01-01T00:00:00+01:00'],
                         ids=['after-9999', 'before-year-1'])
def test_parse_refuses_dates_overflowing_with_their_offset(value):
    with pytest.raises(exceptions.DateOutOfRange) as info:
        dates.parse(value, 'end_date')
    assert str(info.value).startswith(
        "%s is an invalid date. Required format: %%Y-%%m-%%d %%H:%%M. "
        "end_date %s is outside the dates Climate supports" % (value, value))


def test_parse_now_defaults_to_the_current_second():
    before = dates.utcnow()
    parsed = dates.parse('now', 'start_date')
    after = dates.utcnow()
    assert before <= parsed <= after
    assert parsed.microsecond == 0 and parsed.tzinfo is None


def test_utcnow_is_naive_utc_at_second_precision():
    now = dates.utcnow()
    real = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    assert now.tzinfo is None and now.microsecond == 0
    assert abs((real - now).total_seconds()) < 5


@pytest.mark.parametrize('value,seconds', [
    ('30', 30), ('30s', 30), ('30m', 1800), ('2h', 7200), ('1d', 86400),
    ('1w', 604800), (' 2 h ', 7200), ('0', 0), (45, 45), ('007m', 420),
], ids=lambda v: str(v).strip().replace(' ', '_'))
def test_parse_duration(value, seconds):
    assert dates.parse_duration(value, 'prolong_for') == datetime.timedelta(
        seconds=seconds)


@pytest.mark.parametrize('value', [
    '-1h', '1.5h', '2H', 'h', '', 'soon', '1h30m', '1y', None, True, 1.5,
    [1], '1 hour',
], ids=lambda v: 'value-%r' % (v,))
def test_parse_duration_refuses(value):
    with pytest.raises(exceptions.InvalidInput) as info:
        dates.parse_duration(value, 'reduce_by')
    assert str(info.value) == (
        "Invalid input: reduce_by must be a whole number followed by s, m, "
        "h, d or w (e.g. '2h'), not %r" % (value,))


def test_parse_duration_refuses_huge_numbers():
    with pytest.raises(exceptions.InvalidInput):
        dates.parse_duration('99999999999w', 'prolong_for')


def test_format_timestamp():
    # created_at and updated_at, as Blazar's models print them
    assert dates.format_timestamp(dt(2030, 1, 31, 12, 0, 5)) == (
        '2030-01-31 12:00:05')
    assert dates.format_timestamp(None) is None


def test_format():
    assert dates.format(dt(2030, 1, 31, 12, 0, 5)) == (
        '2030-01-31T12:00:05.000000')
    assert dates.format(None) is None


def test_format_parses_back():
    value = dt(2031, 2, 3, 4, 5, 6)
    assert dates.parse(dates.format(value), 'x') == value


@pytest.mark.parametrize('value', ['9999-12-31 23:59', '9999-01-01 00:00',
                                   '9999-01-01T00:00:00', '1969-12-31 23:59',
                                   '1969-12-31T23:59:59'],
                         ids=['end-of-9999', 'start-of-9999', 'iso-9999',
                              'before-1970', 'iso-before-1970'])
def test_well_formed_dates_out_of_range_say_so(value):
    with pytest.raises(exceptions.InvalidDate) as info:
        dates.parse(value, 'end_date')
    # Blazar's sentence first (its error name too), then one that does not
    # blame the format but names the range
    assert str(info.value) == (
        "%s is an invalid date. Required format: %%Y-%%m-%%d %%H:%%M. "
        "end_date %s is outside the dates Climate supports: from "
        "1970-01-01 00:00 to 9998-12-31 23:59:59 UTC." % (value, value))
    assert info.value.error_name == 'InvalidDate'
    assert info.value.code == 400


def test_the_last_supported_second_is_accepted():
    assert dates.parse('9998-12-31T23:59:59', 'end_date') == \
        datetime.datetime(9998, 12, 31, 23, 59, 59)
