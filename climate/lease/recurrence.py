"""Recurring leases (microversion 1.15): the rule of a series and its
occurrences.

A series is a lease body with a ``recurrence``::

    {"rrule": "FREQ=WEEKLY;BYDAY=TU;COUNT=12",
     "timezone": "Europe/Paris", "on_conflict": "skip"}

The rule is a subset of RFC 5545's RRULE: ``FREQ`` ``DAILY`` or
``WEEKLY``, ``INTERVAL``, ``BYDAY`` (weekly rules: two-letter days
without ordinals) and one of ``COUNT`` or ``UNTIL``; a series always
ends.  The body's ``start_date`` and ``end_date`` are the first
occurrence; each later one starts at the same wall-clock time in
``timezone`` (an IANA name, UTC by default) on the days the rule
gives, and lasts as long on the wall clock: a class from 09:00 to 12:00
stays 09:00-12:00 across a daylight-saving change.  A local time that
does not exist on a day (skipped by a change) is taken as the time that
far past the change, as the zone's offset before it reads it; an
ambiguous one as its first instance.

``on_conflict`` says what an occurrence that cannot be booked does:
``refuse`` (the default) refuses the whole create or update, nothing
written, and stops a series whose horizon reaches one later; ``skip``
books the others and reports it in the series' ``skipped``.

Everything here is pure: ``climate.manager.series`` applies it.
"""

import collections
import datetime
import re
import zoneinfo

from climate import exceptions

#: The create body's field (1.15).
FIELD = 'recurrence'
SKIP = 'skip'
REFUSE = 'refuse'
ON_CONFLICT = (REFUSE, SKIP)
FREQUENCIES = ('DAILY', 'WEEKLY')
DAYS = ('MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU')
PARTS = ('FREQ', 'INTERVAL', 'BYDAY', 'COUNT', 'UNTIL', 'WKST')
FIELDS = ('rrule', 'timezone', 'on_conflict')
MAX_INTERVAL = 366
#: A series' states: LIVE (ACTIVE) books its occurrences as the horizon
#: reaches them; FINISHED has made its last; CANCELLED was cancelled;
#: STOPPED met an occurrence it could not book with on_conflict refuse.
LIVE = 'ACTIVE'
FINISHED = 'FINISHED'
CANCELLED = 'CANCELLED'
STOPPED = 'STOPPED'
SERIES_STATES = (LIVE, FINISHED, CANCELLED, STOPPED)

Rule = collections.namedtuple(
    'Rule', 'text freq interval byday count until timezone on_conflict')

Occurrence = collections.namedtuple('Occurrence', 'index start end')

_UNTIL = re.compile(r'^(\d{8})(?:T(\d{6})(Z?))?$')


def _invalid(reason):
    return exceptions.InvalidInput(reason='recurrence: ' + reason)


def zone(name):
    """The ``zoneinfo`` zone named ``name``; InvalidInput when unknown."""
    if not isinstance(name, str) or not name or len(name) > 64:
        raise _invalid('timezone must be an IANA time zone name such as '
                       'Europe/Paris, not %r' % (name,))
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise _invalid('unknown timezone %r (an IANA name such as '
                       'Europe/Paris or UTC)' % name)


def _int_part(name, value, low, high):
    if not value.isdigit() or not low <= int(value) <= high:
        raise _invalid('%s must be a whole number from %d to %d, not %r' % (
            name, low, high, value))
    return int(value)


def _until(value, tz):
    """UNTIL as a naive UTC datetime: a date (its whole local day), a
    local date-time, or a UTC one (``Z``)."""
    match = _UNTIL.match(value)
    if not match:
        raise _invalid('UNTIL must be YYYYMMDD, YYYYMMDDTHHMMSS or '
                       'YYYYMMDDTHHMMSSZ, not %r' % value)
    day, clock, utc = match.groups()
    try:
        when = datetime.datetime.strptime(day + (clock or '235959'),
                                          '%Y%m%d%H%M%S')
    except ValueError:
        raise _invalid('UNTIL %r is not a date' % value)
    if utc:
        return when
    return to_utc(when, tz)


def parse(recurrence, max_occurrences):
    """The :class:`Rule` of a body's ``recurrence``; InvalidInput (400)
    for anything outside the subset, naming what is wrong."""
    if not isinstance(recurrence, dict):
        raise _invalid('a JSON object with rrule, and optionally timezone '
                       'and on_conflict')
    unknown = sorted(set(recurrence) - set(FIELDS))
    if unknown:
        raise _invalid('%s: not a field; accepted: %s' % (
            ', '.join(unknown), ', '.join(FIELDS)))
    text = recurrence.get('rrule')
    if not isinstance(text, str) or not text.strip():
        raise _invalid('rrule is required, an RFC 5545 rule such as '
                       'FREQ=WEEKLY;BYDAY=TU;COUNT=10')
    tz_name = recurrence.get('timezone') or 'UTC'
    tz = zone(tz_name)
    on_conflict = recurrence.get('on_conflict') or REFUSE
    if on_conflict not in ON_CONFLICT:
        raise _invalid('on_conflict must be %s, not %r' % (
            ' or '.join(ON_CONFLICT), on_conflict))
    body = text.strip()
    if body.upper().startswith('RRULE:'):
        body = body[len('RRULE:'):]
    parts = {}
    for item in body.split(';'):
        name, sep, value = item.partition('=')
        name = name.strip().upper()
        if not sep or not value.strip():
            raise _invalid('%r is not NAME=VALUE' % item)
        if name not in PARTS:
            raise _invalid('%s is not supported; a rule has FREQ (DAILY '
                           'or WEEKLY), INTERVAL, BYDAY, and COUNT or '
                           'UNTIL' % name)
        if name in parts:
            raise _invalid('%s is given twice' % name)
        parts[name] = value.strip().upper()
    freq = parts.get('FREQ')
    if freq not in FREQUENCIES:
        raise _invalid('FREQ must be DAILY or WEEKLY, not %r' % (freq,))
    if parts.get('WKST', 'MO') != 'MO':
        raise _invalid('WKST must be MO (weeks start on Monday)')
    interval = _int_part('INTERVAL', parts.get('INTERVAL', '1'), 1,
                         MAX_INTERVAL)
    byday = ()
    if 'BYDAY' in parts:
        if freq != 'WEEKLY':
            raise _invalid('BYDAY is for a WEEKLY rule')
        days = [d.strip() for d in parts['BYDAY'].split(',')]
        wrong = [d for d in days if d not in DAYS]
        if wrong:
            raise _invalid('BYDAY takes %s, not %s' % (
                ','.join(DAYS), ','.join(wrong)))
        byday = tuple(sorted({DAYS.index(d) for d in days}))
    if ('COUNT' in parts) == ('UNTIL' in parts):
        raise _invalid('a rule ends: give COUNT or UNTIL (one of them)')
    count = until = None
    if 'COUNT' in parts:
        count = _int_part('COUNT', parts['COUNT'], 1, max_occurrences)
    else:
        until = _until(parts['UNTIL'], tz)
    return Rule(text.strip(), freq, interval, byday, count, until, tz_name,
                on_conflict)


def to_utc(local, tz):
    """A naive local wall-clock time in ``tz`` as naive UTC.  A time a
    daylight-saving change skips reads with the offset before it (so it
    lands that far past the change); an ambiguous one is its first
    instance (``fold=0``)."""
    aware = local.replace(tzinfo=tz, fold=0)
    return aware.astimezone(datetime.timezone.utc).replace(tzinfo=None)


def to_local(utc, tz):
    """A naive UTC time as naive wall-clock time in ``tz``."""
    return utc.replace(tzinfo=datetime.timezone.utc).astimezone(
        tz).replace(tzinfo=None)


def _days(rule, first_day):
    """The rule's days from ``first_day`` on, in order, unbounded."""
    step = datetime.timedelta(days=rule.interval)
    if rule.freq == 'DAILY':
        day = first_day
        while True:
            yield day
            day += step
    week = first_day - datetime.timedelta(days=first_day.weekday())
    days = rule.byday or (first_day.weekday(),)
    while True:
        for weekday in days:
            day = week + datetime.timedelta(days=weekday)
            if day >= first_day:
                yield day
        week += datetime.timedelta(weeks=rule.interval)


def check_first(rule, start):
    """InvalidInput when ``start`` (UTC) is not a day of the rule: the
    first occurrence is the series' ``start_date``."""
    local = to_local(start, zone(rule.timezone))
    if rule.byday and local.weekday() not in rule.byday:
        raise _invalid('start_date is a %s in %s, not one of BYDAY=%s: the '
                       "first occurrence is the series' start_date" % (
                           local.strftime('%A'), rule.timezone,
                           ','.join(DAYS[d] for d in rule.byday)))


def occurrences(rule, start, end, first_index=0, limit=None):
    """The series' occurrences (:class:`Occurrence`: index, UTC start and
    end, naive) in order, the first at ``start``-``end`` with number
    ``first_index``; at most ``limit`` (and the rule's COUNT or UNTIL)."""
    tz = zone(rule.timezone)
    local_start = to_local(start, tz)
    wall = to_local(end, tz) - local_start
    clock = local_start.time()
    made = 0
    for day in _days(rule, local_start.date()):
        if rule.count is not None and made >= rule.count:
            return
        if limit is not None and made >= limit:
            return
        begins = datetime.datetime.combine(day, clock)
        occ_start = to_utc(begins, tz)
        if rule.until is not None and occ_start > rule.until:
            return
        occ_end = to_utc(begins + wall, tz)
        if occ_end <= occ_start:
            # a short window folded by a change: as long as the first
            occ_end = occ_start + (end - start)
        yield Occurrence(first_index + made, occ_start, occ_end)
        made += 1


def total(rule, start, end, cap):
    """How many occurrences the rule makes, counted up to ``cap + 1``
    (more than ``cap`` is refused by the caller)."""
    return sum(1 for _ in occurrences(rule, start, end, limit=cap + 1))


def occurrence_name(name, number):
    """The lease name of occurrence ``number`` (1-based) of a series."""
    return '%s #%d' % (name, number)


def shifted(when, delta):
    return None if when is None else when + delta


def describe(rule):
    """The rule as the API shows it."""
    return {'rrule': rule.text, 'timezone': rule.timezone,
            'on_conflict': rule.on_conflict}


#: The COUNT a stored rule is read back with: it was held to the
#: operator's limit when stored, which may have been lowered since.
STORED_MAX = 10 ** 6


def from_stored(text, timezone, on_conflict):
    """A stored rule read back (it was parsed when it was stored)."""
    return parse({'rrule': text, 'timezone': timezone,
                  'on_conflict': on_conflict}, STORED_MAX)
