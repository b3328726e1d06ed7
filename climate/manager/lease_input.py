"""Turning a lease request body into validated values; no I/O.

Every error names the field and says what would be accepted, and nothing
is written before these checks pass.
"""

import datetime

from climate import dates
from climate import exceptions

START = 'start_lease'
END = 'end_lease'
BEFORE_END = 'before_end_lease'
EVENT_TYPES = (START, END, BEFORE_END)


def _floor_minute(when):
    return when.replace(second=0, microsecond=0)


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
    if start < _floor_minute(now):
        raise exceptions.InvalidInput(
            reason='start_date %s is in the past (now is %s UTC)' % (
                start.strftime(dates.BLAZAR_FORMAT),
                now.strftime('%Y-%m-%d %H:%M:%S')))
    return max(start, now)


def check_window(start, end):
    if end <= start:
        raise exceptions.InvalidInput(
            reason='end_date must be later than start_date')


def check_before_end(before_end, start, end):
    if before_end is not None and not start <= before_end < end:
        raise exceptions.InvalidInput(
            reason='before_end_date must be between start_date and '
                   'end_date')


def default_before_end(start, end, minutes):
    """Blazar's rule: ``minutes`` before the end, but not before the start."""
    if not minutes:
        return None
    return max(start, end - datetime.timedelta(minutes=minutes))


def reservation_requests(raw):
    """Split each requested reservation into (resource_type, params)."""
    if not isinstance(raw, list) or not raw:
        raise exceptions.InvalidInput(
            reason='reservations must be a non-empty list')
    out = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict):
            raise exceptions.InvalidInput(
                reason='reservations[%d] must be an object' % index)
        params = dict(item)
        rtype = params.pop('resource_type', None)
        if not isinstance(rtype, str) or not rtype:
            raise exceptions.InvalidInput(
                reason='reservations[%d].resource_type is required' % index)
        for key in ('id', 'lease_id', 'status', 'resource_id'):
            if key in params:
                raise exceptions.InvalidInput(
                    reason='reservations[%d].%s is set by Climate' % (
                        index, key))
        out.append((rtype, params))
    return out


def check_events(raw):
    """Blazar clients send ``events: []``; Climate makes the events itself."""
    if raw:
        raise exceptions.InvalidInput(
            reason='events are created by Climate from start_date, '
                   'end_date and before_end_date; send an empty list')


def parse_create(body, now, max_name_length, before_end_minutes):
    """Validated lease values from a create request.

    :returns: dict with name, start_date, end_date, before_end_date and
        reservations (a list of (resource_type, params)).
    """
    for field in ('name', 'start_date', 'end_date'):
        if body.get(field) is None:
            raise exceptions.InvalidInput(reason='%s is required' % field)
    name = check_name(body['name'], max_name_length)
    start = check_start(dates.parse(body['start_date'], 'start_date', now),
                        now)
    end = dates.parse(body['end_date'], 'end_date', now)
    check_window(start, end)
    if body.get('before_end_date') is not None:
        before_end = dates.parse(body['before_end_date'], 'before_end_date',
                                 now)
        check_before_end(before_end, start, end)
    else:
        before_end = default_before_end(start, end, before_end_minutes)
    check_events(body.get('events'))
    return {'name': name, 'start_date': start, 'end_date': end,
            'before_end_date': before_end,
            'reservations': reservation_requests(body.get('reservations'))}


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


def parse_update(body, current, now, max_name_length, started):
    """New lease values from an update request.

    :param current: dict with the lease's name, start_date, end_date and
        before_end_date (or None).
    :param started: the start event has run; the start can no longer move.
    :returns: dict with the same keys, and ``reservations``: a list of
        (reservation id, params) to change.
    """
    new = dict(current)
    if body.get('name') is not None:
        new['name'] = check_name(body['name'], max_name_length)

    new['start_date'] = _moved_date(body, now, current['start_date'],
                                    'start_date', 'defer_by', 'advance_by')
    new['end_date'] = _moved_date(body, now, current['end_date'],
                                  'end_date', 'prolong_for', 'reduce_by')

    if new['start_date'] != current['start_date']:
        if started:
            raise exceptions.InvalidState(
                kind='Lease', id=current.get('id', ''), status='started',
                reason='the start_date of a started lease cannot change')
        new['start_date'] = check_start(new['start_date'], now)
    if new['end_date'] != current['end_date'] and new['end_date'] <= now:
        raise exceptions.InvalidInput(
            reason='end_date %s is in the past' %
            new['end_date'].strftime(dates.BLAZAR_FORMAT))
    check_window(new['start_date'], new['end_date'])

    if body.get('before_end_date') is not None:
        new['before_end_date'] = dates.parse(
            body['before_end_date'], 'before_end_date', now)
    elif current.get('before_end_date') is not None and (
            new['end_date'] != current['end_date']):
        # keep the notice the same time ahead of the (moved) end
        new['before_end_date'] = max(
            new['start_date'],
            current['before_end_date'] + (new['end_date'] -
                                          current['end_date']))
    check_before_end(new['before_end_date'], new['start_date'],
                     new['end_date'])
    check_events(body.get('events'))

    changes = []
    for index, item in enumerate(body.get('reservations') or []):
        if not isinstance(item, dict) or not item.get('id'):
            raise exceptions.InvalidInput(
                reason='reservations[%d] must be an object with the id of '
                       'the reservation to change' % index)
        params = dict(item)
        res_id = params.pop('id')
        if 'resource_type' in params:
            raise exceptions.InvalidInput(
                reason='reservations[%d].resource_type cannot change' %
                index)
        changes.append((res_id, params))
    new['reservations'] = changes
    return new
