"""What every availability search shares: the query's window and the
walk over the earliest windows.

``POST /v1/instances/availability`` (microversion 1.3,
``climate.plugins.virtual_instance.availability``) and ``POST
/v1/volumes/availability`` (1.6,
``climate.plugins.virtual_volume.availability``) take a reservation's
fields and either a ``duration`` (with optional ``earliest_start`` and
``latest_end``) or a fixed window (``start_date`` and ``end_date``), and
``limit``; they answer the earliest windows in which the reservation
fits, one after the other, each with a count of what is free over it.
Counts and times only, never a provider, a lease or a project.

:func:`parse` checks the query (each malformed field a 400 naming it),
:func:`frame` is the part of the answer about time, and :func:`windows`
walks a ``climate.db.ledger.availability.Outlook`` for the windows.
"""

import collections
import datetime

from climate import dates
from climate import exceptions
from climate.plugins import rebooking

#: Most windows one answer lists.
MAX_WINDOWS = 20
DEFAULT_WINDOWS = 3
WINDOW_FIELDS = ('duration', 'earliest_start', 'latest_end', 'start_date',
                 'end_date', 'limit')

#: A checked query: the reservation's fields (``request``), the window
#: (``earliest``, ``duration``, ``latest`` or None, ``fixed``: a fixed
#: window from ``earliest`` for ``duration``) and ``limit``.
Query = collections.namedtuple(
    'Query', 'request earliest duration latest fixed limit')


def _refuse_unknown(query, request_fields):
    allowed = set(request_fields) | set(WINDOW_FIELDS)
    unknown = sorted(str(k) for k in set(query) - allowed)
    if unknown:
        raise exceptions.InvalidInput(
            reason='unknown field(s) %s; accepted: %s' % (
                ', '.join(unknown), ', '.join(sorted(allowed))))


def later(when, duration, field):
    """``when + duration``; a 400 naming ``field`` when that is beyond
    the calendar."""
    try:
        end = when + duration
    except OverflowError:
        end = None
    if end is None or end > dates.MAX_DATE:
        raise exceptions.InvalidInput(
            reason='%s reaches beyond the calendar' % field)
    return end


def _window(query, now):
    """``(earliest, duration, latest_end, fixed)`` of the query."""
    fixed = 'start_date' in query or 'end_date' in query
    if fixed:
        for key in ('start_date', 'end_date'):
            if query.get(key) is None:
                raise exceptions.InvalidInput(
                    reason='%s is required with %s' % (
                        key, ({'start_date', 'end_date'} - {key}).pop()))
        for key in ('duration', 'earliest_start', 'latest_end'):
            if key in query:
                raise exceptions.InvalidInput(
                    reason='give either start_date and end_date, or '
                           'duration (with earliest_start, latest_end); '
                           'not %s with them' % key)
        start = dates.parse(query['start_date'], 'start_date', now)
        end = dates.parse(query['end_date'], 'end_date', now)
        if end <= start:
            raise exceptions.InvalidInput(
                reason='end_date must be later than start_date')
        if end <= now:
            raise exceptions.InvalidInput(reason='end_date is in the past')
        start = max(start, now)
        return start, end - start, None, True
    if query.get('duration') is None:
        raise exceptions.InvalidInput(
            reason="duration is required (e.g. '4h'), or start_date and "
                   "end_date")
    duration = dates.parse_duration(query['duration'], 'duration')
    if duration <= datetime.timedelta(0):
        raise exceptions.InvalidInput(reason='duration must be positive')
    earliest = max(now, dates.parse(query.get('earliest_start') or 'now',
                                    'earliest_start', now))
    later(earliest, duration, 'duration')
    latest = None
    if query.get('latest_end') is not None:
        latest = dates.parse(query['latest_end'], 'latest_end', now)
        if latest < earliest + duration:
            raise exceptions.InvalidInput(
                reason='latest_end leaves no room for duration after '
                       'earliest_start')
    return earliest, duration, latest, False


def _limit(query):
    limit = query.get('limit', DEFAULT_WINDOWS)
    if isinstance(limit, bool) or not isinstance(limit, int) or \
            not 1 <= limit <= MAX_WINDOWS:
        raise exceptions.InvalidInput(
            reason='limit must be a whole number from 1 to %d' % MAX_WINDOWS)
    return limit


def parse(query, request_fields, validate, defaults=None):
    """The checked :class:`Query` of a request body.

    :param request_fields: the reservation's fields the search accepts.
    :param validate: the plugin's check of those fields (each malformed
        one a 400 naming it): what it returns is ``Query.request``.
    :param defaults: values of fields the body leaves out.
    """
    if not isinstance(query, dict):
        raise exceptions.InvalidInput(reason='the body must be a JSON object')
    _refuse_unknown(query, request_fields)
    now = dates.utcnow()
    request = dict(defaults or {})
    request.update((k, query[k]) for k in request_fields if k in query)
    request = validate(request)
    earliest, duration, latest, fixed = _window(query, now)
    return Query(request, earliest, duration, latest, fixed, _limit(query))


def frame(query):
    """``(answer, until)``: the answer's fields about time, and how far
    the search looks.  Without ``latest_end`` it is bounded (each
    booking's end is a start to try): a year ahead, or four durations if
    longer, said in ``searched_until``."""
    answer = {
        'duration': int(query.duration.total_seconds()),
        'earliest_start': dates.format(query.earliest),
        'latest_end': dates.format(query.latest),
    }
    until = query.latest
    if until is None:
        until = rebooking.horizon_end(query.earliest, query.duration)
        answer['searched_until'] = dates.format(until)
    return answer, until


def windows(outlook, amount, query, until, affinity):
    """The earliest windows of ``query.duration`` (at most
    ``query.limit``) from ``query.earliest`` to ``until`` in which
    ``amount`` units of the outlook's shape fit under ``affinity``, one
    after the other: ``(start, end, units that fit over it)``."""
    cursor = query.earliest
    found = 0
    while outlook.most(affinity) >= amount and found < query.limit:
        if cursor > until - query.duration:
            return
        hit = outlook.earliest(amount, query.duration, cursor, until,
                               affinity)
        if hit is None:
            return
        when, units = hit
        try:
            end = later(when, query.duration, 'duration')
        except exceptions.InvalidInput:
            return
        yield when, end, units
        found += 1
        # the next window: the earliest after this one
        cursor = end
