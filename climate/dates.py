"""Parsing and formatting of the dates and durations the API accepts.

Accepted: ``now``, ``YYYY-MM-DD HH:MM`` (UTC, Blazar's format), and ISO
8601 with or without an offset (no offset means UTC).  Everything is stored
as naive UTC with second precision.
"""

import datetime
import re

from oslo_utils import timeutils

from climate import exceptions

BLAZAR_FORMAT = '%Y-%m-%d %H:%M'
OUTPUT_FORMAT = '%Y-%m-%dT%H:%M:%S.%f'
#: ``created_at`` and ``updated_at`` as Blazar shows them (its models'
#: ``isoformat(' ')`` of a second-precision column)
TIMESTAMP_FORMAT = '%Y-%m-%d %H:%M:%S'
NOW = 'now'
#: The dates accepted: a year's margin below datetime's end, so that a
#: lease's end plus any before-end or prolongation stays computable.
MIN_DATE = datetime.datetime(1970, 1, 1)
MAX_DATE = datetime.datetime(9998, 12, 31, 23, 59, 59)

_DURATION = re.compile(r'^\s*(\d+)\s*([smhdw]?)\s*$')
_UNIT_SECONDS = {'': 1, 's': 1, 'm': 60, 'h': 3600, 'd': 86400,
                 'w': 7 * 86400}


def utcnow():
    """Current UTC time, naive, truncated to the second."""
    return timeutils.utcnow().replace(microsecond=0, tzinfo=None)


def parse(value, field, now=None):
    """Parse a user-supplied date into naive UTC at second precision.

    :param field: the request field, named in the error message.
    :param now: the time ``now`` stands for (defaults to the current time).
    :raises InvalidDate: the value is not one of the accepted forms.
    """
    if not isinstance(value, str):
        raise exceptions.InvalidDate(field=field, value=value)
    text = value.strip()
    if text.lower() == NOW:
        return now or utcnow()
    try:
        parsed = datetime.datetime.strptime(text, BLAZAR_FORMAT)
    except ValueError:
        parsed = None
    if parsed is None:
        iso = text[:-1] + '+00:00' if text.endswith(('Z', 'z')) else text
        try:
            parsed = datetime.datetime.fromisoformat(iso)
        except ValueError:
            raise exceptions.InvalidDate(field=field, value=value)
    if parsed.tzinfo is not None:
        try:
            parsed = parsed.astimezone(datetime.timezone.utc).replace(
                tzinfo=None)
        except OverflowError:
            parsed = None
    if parsed is None or not MIN_DATE <= parsed <= MAX_DATE:
        raise exceptions.DateOutOfRange(
            field=field, value=value, minimum=MIN_DATE.strftime(BLAZAR_FORMAT),
            maximum=MAX_DATE.strftime('%Y-%m-%d %H:%M:%S'))
    return parsed.replace(microsecond=0)


def ceil_second(value):
    """``value`` rounded up to a whole second (what SQL stores)."""
    whole = value.replace(microsecond=0)
    return whole + datetime.timedelta(seconds=1) if value.microsecond \
        else whole


def parse_duration(value, field):
    """Parse ``30m``, ``2h``, ``1d``, ``1w`` or bare seconds into a timedelta."""
    match = _DURATION.match(str(value)) if isinstance(value, (str, int)) \
        else None
    if match is None or isinstance(value, bool):
        raise exceptions.InvalidInput(
            reason="%s must be a whole number followed by s, m, h, d or w "
                   "(e.g. '2h'), not %r" % (field, value))
    try:
        return datetime.timedelta(
            seconds=int(match.group(1)) * _UNIT_SECONDS[match.group(2)])
    except OverflowError:
        raise exceptions.InvalidInput(
            reason='%s %s is longer than any lease can be' % (field, value))


def format(value):
    """Render a stored date as Blazar does (``2030-01-31T12:00:00.000000``):
    a lease's start and end, an event's time.

    Listings render their dates in SQL instead (``db.lease_json``), to the
    same text.
    """
    if value is None:
        return None
    # the same text as strftime(OUTPUT_FORMAT) for naive datetimes, at a
    # third of the cost
    return value.isoformat(timespec='microseconds')


def parse_output(text):
    """The date :func:`format` rendered as ``text`` (a view's date read
    back where only the view is at hand)."""
    return datetime.datetime.strptime(text, OUTPUT_FORMAT)


def format_timestamp(value):
    """Render a row's ``created_at`` or ``updated_at`` as Blazar does
    (``2030-01-31 12:00:00``): its models print these two themselves,
    unlike the lease's dates, which its RPC serializer prints
    (:func:`format`)."""
    if value is None:
        return None
    return value.strftime(TIMESTAMP_FORMAT)
