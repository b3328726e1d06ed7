"""Turning a lease request body into validated values; no I/O.

Every error starts with Blazar's sentence for the same mistake (its
clients and scripts match on it) and goes on to name the field and say
what would be accepted; nothing is written before these checks pass.
The checks run in Blazar's order, so that a body with several mistakes
gets the error Blazar would give.  ``doc/source/blazar-compatibility.rst``
lists each error.
"""

import datetime

from climate import dates
from climate import exceptions
from climate.lease import events as lease_events
from climate import states

#: The fields of a user's own event: Heat's ``OS::Blazar::Lease`` sends
#: ``event_type`` and ``time``, python-blazarclient's ``--event``
#: ``event_type`` and ``event_date`` (a name Blazar's database ignores).
USER_EVENT_FIELDS = ('event_type', 'time', 'event_date')
MAX_EVENT_TYPE_LENGTH = 66  # the column's size
MAX_USER_EVENTS = 100

REQUIRED_CREATE_FIELDS = ('name', 'start_date', 'end_date')
# set by Climate; a reservation naming one is refused rather than ignored
_RESERVATION_SET_BY_CLIMATE = ('id', 'lease_id', 'status', 'resource_id')


def floor_minute(when):
    """Blazar's "now": the current minute (a start within it is not past)."""
    return when.replace(second=0, microsecond=0)


# a datetime as the messages give it
_text = dates.format_timestamp


def check_name(name, max_length):
    if not isinstance(name, str) or not name.strip():
        raise exceptions.InvalidInput(reason='name must be a non-empty '
                                             'string')
    if len(name) > max_length:
        raise exceptions.InvalidInput(
            reason='name is longer than %d characters' % max_length)
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise exceptions.InvalidInput(
            reason='name must not contain control characters')
    return name.strip()


def check_start(start, now):
    """A start in the current minute means now; earlier is refused."""
    if start < floor_minute(now):
        raise exceptions.StartDateInPast(
            start=start.strftime(dates.BLAZAR_FORMAT), now=_text(now))
    return max(start, now)


def check_window(start, end):
    """At create: the lease must end after it starts."""
    if end <= start:
        raise exceptions.EndBeforeStart(start=_text(start), end=_text(end))


def check_before_end(before_end, start, end, field='before_end_date'):
    """A before-end date given by the user lies strictly inside the lease
    (Blazar answers 403 otherwise)."""
    if not start < before_end < end:
        raise exceptions.DateOutOfLeaseLimits(
            field=field, date=_text(before_end), start=_text(start),
            end=_text(end))


def default_before_end(start, end, minutes):
    """Blazar's rule: ``minutes`` before the end, but not before the start."""
    if not minutes:
        return None
    return max(start, end - datetime.timedelta(minutes=minutes))


def reservation_requests(raw):
    """Split each requested reservation into (resource_type, params).

    No reservations at all (missing, null or ``[]``) is a valid lease, as in
    Blazar: it holds nothing, and its events run all the same.  An unknown
    ``resource_type`` is refused by the plugin registry, after the dates.
    """
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise exceptions.InvalidInput(reason='reservations must be a list')
    out = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict):
            raise exceptions.InvalidInput(
                reason='reservations[%d] must be an object' % index)
        params = dict(item)
        rtype = params.pop('resource_type', None)
        if rtype is None:
            raise exceptions.MissingParameter(param='resource_type')
        for key in _RESERVATION_SET_BY_CLIMATE:
            if key in params:
                raise exceptions.InvalidInput(
                    reason='reservations[%d].%s is set by Climate' % (
                        index, key))
        out.append((rtype, params))
    return out


def user_events(raw, now):
    """The user's own events of a create, as (event_type, time) pairs.

    Blazar stores whatever ``events`` it is given next to the events it
    makes; Climate takes the fields Heat's ``OS::Blazar::Lease`` and
    python-blazarclient send and refuses the rest, and the engine's own
    types (a second ``start_lease`` would start the lease twice).  They
    are shown among the lease's events; those of type ``notification``
    are run by the event engine at their time
    (:data:`climate.lease.events.NOTIFICATION`), the others never.
    """
    if not raw:
        return []
    if not isinstance(raw, list):
        raise exceptions.InvalidInput(reason='events must be a list')
    if len(raw) > MAX_USER_EVENTS:
        raise exceptions.InvalidEvent(
            reason='a lease takes at most %d events of its own' %
            MAX_USER_EVENTS)
    out = []
    for index, item in enumerate(raw):
        where = 'events[%d]' % index
        if not isinstance(item, dict):
            raise exceptions.InvalidEvent(reason='%s must be an object' %
                                          where)
        unknown = sorted(set(item) - set(USER_EVENT_FIELDS))
        if unknown:
            raise exceptions.InvalidEvent(
                reason='%s.%s cannot be set; an event takes event_type and '
                       'time (or event_date)' % (where, unknown[0]))
        event_type = item.get('event_type')
        if not isinstance(event_type, str) or not event_type.strip():
            raise exceptions.InvalidEvent(
                reason='%s.event_type must be a non-empty string' % where)
        if len(event_type) > MAX_EVENT_TYPE_LENGTH:
            raise exceptions.InvalidEvent(
                reason='%s.event_type is longer than %d characters' % (
                    where, MAX_EVENT_TYPE_LENGTH))
        if event_type in lease_events.EVENT_TYPES:
            raise exceptions.InvalidEvent(
                reason='%s.event_type %s is made by Climate from the '
                       "lease's dates" % (where, event_type))
        given = [f for f in ('time', 'event_date') if item.get(f) is not None]
        if not given:
            raise exceptions.InvalidEvent(reason='%s.time is required' %
                                          where)
        if len(given) > 1:
            raise exceptions.InvalidEvent(
                reason='%s.time and %s.event_date cannot be combined' % (
                    where, where))
        field = given[0]
        out.append((event_type, dates.parse(
            item[field], '%s.%s' % (where, field), now)))
    return out


def parse_create(body, now, max_name_length, before_end_minutes):
    """Validated lease values from a create request.

    :returns: dict with name, start_date, end_date, before_end_date,
        reservations (a list of (resource_type, params)) and events (the
        user's own, a list of (event_type, time)).
    """
    missing = [f for f in REQUIRED_CREATE_FIELDS if body.get(f) is None]
    if missing:
        raise exceptions.MissingParameter(param=', '.join(missing))
    reservations = reservation_requests(body.get('reservations'))
    name = check_name(body['name'], max_name_length)
    start = dates.parse(body['start_date'], 'start_date', now)
    end = dates.parse(body['end_date'], 'end_date', now)
    start = check_start(start, now)
    check_window(start, end)
    if body.get('before_end_date'):
        before_end = dates.parse(body['before_end_date'], 'before_end_date',
                                 now)
        check_before_end(before_end, start, end)
    else:
        before_end = default_before_end(start, end, before_end_minutes)
    return {'name': name, 'start_date': start, 'end_date': end,
            'before_end_date': before_end, 'reservations': reservations,
            'events': user_events(body.get('events'), now)}


def _exclusive(body, *fields):
    given = [f for f in fields if body.get(f) is not None]
    if len(given) > 1:
        raise exceptions.InvalidInput(
            reason='%s cannot be combined' % ' and '.join(given))
    return given[0] if given else None


def _moved_date(body, now, current, field, later, earlier):
    """A date set outright (``field``) or moved by a duration."""
    given = _exclusive(body, field, later, earlier)
    if given == field:
        return dates.parse(body[field], field, now)
    if given is None:
        return current
    delta = dates.parse_duration(body[given], given)
    try:
        return current + delta if given == later else current - delta
    except OverflowError:
        raise exceptions.InvalidInput(
            reason='%s %s moves %s out of the calendar' % (
                given, body[given], field))


def _reservation_changes(raw):
    """(reservation id, resource_type or None, params) for each change."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise exceptions.InvalidInput(reason='reservations must be a list')
    changes = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict):
            raise exceptions.InvalidInput(
                reason='reservations[%d] must be an object with the id of '
                       'the reservation to change' % index)
        params = dict(item)
        res_id = params.pop('id', None)
        if res_id is None:
            raise exceptions.MissingParameter(param='reservation ID')
        changes.append((res_id, params.pop('resource_type', None), params))
    return changes


# lease states in which an update may only rename, and why
_ONLY_RENAMED = {
    states.ERROR: 'a lease in ERROR can only be renamed or deleted',
    states.WAITING: 'a waiting lease can only be renamed or deleted (its '
                    'dates are set when it is granted; to ask for something '
                    'else, delete it and create another)',
    states.EXHAUSTED: 'a lease whose retries ran out can only be renamed or '
                      'deleted',
    states.TIMEDOUT: 'a lease whose hunt for hosts timed out can only be '
                     'renamed or deleted',
    states.HELD: 'a held lease can only be renamed, confirmed or deleted '
                 '(to hold something else, delete it and hold again)',
    states.EXPIRED: 'a lease whose hold expired can only be renamed or '
                    'deleted',
}


def parse_update(body, current, now, max_name_length, status):
    """New lease values from an update request, checked as Blazar does.

    An empty body changes nothing and a rename alone is allowed in any
    stable status; any other change is refused once the lease has ended.

    :param current: dict with the lease's id, name, start_date, end_date
        and before_end_date (or None).
    :param status: the lease's status (PENDING, ACTIVE, TERMINATED or
        ERROR: the manager refuses a busy lease first).
    :returns: dict with the same keys, and ``reservations``: a list of
        (reservation id, resource_type or None, params) to change.
    """
    new = dict(current, reservations=[])
    if body.get('name') is not None:
        new['name'] = check_name(body['name'], max_name_length)
    if not set(body) - {'name'}:
        return new
    if status in _ONLY_RENAMED:
        raise exceptions.InvalidState(
            kind='Lease', id=current.get('id', ''), status=status,
            reason=_ONLY_RENAMED[status])

    new['start_date'] = _moved_date(body, now, current['start_date'],
                                    'start_date', 'defer_by', 'advance_by')
    new['end_date'] = _moved_date(body, now, current['end_date'],
                                  'end_date', 'prolong_for', 'reduce_by')

    # Blazar's conditions, on its minute-precision "now"
    minute = floor_minute(now)
    started = status not in states.LEASE_NOT_STARTED or \
        current['start_date'] < minute
    ended = status == states.TERMINATED or current['end_date'] < minute
    if (started and body.get('start_date') is not None and
            new['start_date'] == floor_minute(current['start_date'])):
        # Blazar stores a "now" start at its minute, so clients (Horizon's
        # update form) send it back as 'YYYY-MM-DD HH:MM'; Climate keeps
        # the second it started at: that echo is not a change
        new['start_date'] = current['start_date']
    if new['start_date'] != current['start_date']:
        if started:
            raise exceptions.StartOfStartedLease(
                id=current.get('id', ''), start=_text(current['start_date']))
        new['start_date'] = check_start(new['start_date'], now)
    if ended:
        raise exceptions.TerminatedLeaseChange(
            id=current.get('id', ''), end=_text(current['end_date']))
    if new['end_date'] == new['start_date'] and new['end_date'] >= minute:
        raise exceptions.InvalidPeriod(start=_text(new['start_date']))
    if new['end_date'] < minute or new['end_date'] < new['start_date']:
        raise exceptions.EndBeforeNowOrStart(
            end=_text(new['end_date']), start=_text(new['start_date']),
            now=_text(now))

    if body.get('before_end_date'):
        new['before_end_date'] = dates.parse(
            body['before_end_date'], 'before_end_date', now)
        check_before_end(new['before_end_date'], new['start_date'],
                         new['end_date'])
    elif current.get('before_end_date') is not None:
        # the notice keeps its distance to the end, but not before the start
        new['before_end_date'] = max(
            new['start_date'],
            new['end_date'] - (current['end_date'] -
                               current['before_end_date']))
    if body.get('events'):
        raise exceptions.InvalidInput(
            reason="a lease's events are given when it is created; an "
                   "update takes an empty list")
    new['reservations'] = _reservation_changes(body.get('reservations'))
    return new
