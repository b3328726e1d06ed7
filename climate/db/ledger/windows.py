"""The capacity ledger's time windows in SQL: which bookings overlap one.

A booking lasts a half-open window ``[start, end)``, and its
``span_level`` is the bit length of its length in seconds.  A booking of
level k that overlaps ``[start, end)`` started after ``start - 2**k``, so
the bookings overlapping a window are, level by level, one bounded range
of the index ``(span_level, start_date, ...)`` (:func:`window`): a few
long bookings never make a read go through every short one.  A read of
some providers' own ranges of the ``(provider, class, start, ...)``
index is bounded below by the longest booking's length instead
(:func:`started_after`, :func:`overlapping`).
"""

import datetime

import sqlalchemy as sa

from climate.db import models
from climate import exceptions

Book = models.LedgerBooking

#: Highest ``span_level`` searched: 2**40 seconds is 34,000 years.
MAX_SPAN_LEVEL = 40
#: Oldest time a level's range starts at (MariaDB's DATETIME starts at
#: the year 1000).
_OLDEST = datetime.datetime(1000, 1, 1)

def span_level(start, end):
    """The ``span_level`` of a booking over ``[start, end)``."""
    return int((end - start).total_seconds()).bit_length()


def check_window(start, end):
    if not (isinstance(start, datetime.datetime) and
            isinstance(end, datetime.datetime)) or not end > start:
        raise exceptions.InvalidInput(
            reason='a booking needs a start before its end (got %s, %s)' %
            (start, end))
    if span_level(start, end) > MAX_SPAN_LEVEL:
        raise exceptions.InvalidInput(
            reason='a booking cannot last more than 2**%d seconds' %
            MAX_SPAN_LEVEL)


def _overlaps(start, end):
    """WHERE: bookings overlapping ``[start, end)``, level by level."""
    levels = []
    for level in range(MAX_SPAN_LEVEL + 1):
        try:
            after = max(_OLDEST,
                        start - datetime.timedelta(seconds=2 ** level))
        except OverflowError:
            after = _OLDEST
        levels.append(sa.and_(Book.span_level == level,
                              Book.start_date > after))
    return sa.and_(sa.or_(*levels), Book.start_date < end,
                   Book.end_date > start)


def window(start, end):
    """WHERE clause: the bookings overlapping ``[start, end)``, read level
    by level of their length (one bounded range of the ``(span_level,
    start_date, ...)`` index per level, never the whole table)."""
    return _overlaps(start, end)


def started_after(session, when):
    """The earliest start a booking overlapping a window from ``when`` on
    may have: ``when`` minus the longest booking's length bound
    (``2**max(span_level)`` seconds; one seek of the ``(span_level,
    ...)`` index).  Bounds a provider's range of the ``(provider, class,
    start, ...)`` index below, so that reading its bookings over a window
    does not read every booking of its that starts before it.

    A booking of level k lasts less than 2**k seconds, so one that ends
    after ``when`` started after ``when - 2**k``.  Read after the lock
    on the providers it bounds, it sees every booking of theirs: any
    other booking written meanwhile is on providers not locked by the
    caller."""
    return start_bound(when, longest_level(session))


def longest_level(session):
    """The highest ``span_level`` of any booking (None with none): one
    seek, for callers bounding several windows (:func:`start_bound`).
    Core on the session's connection: the quota check of every create
    reads it, and the ORM's execute costs more than the seek."""
    return session.connection().execute(_LONGEST).scalar()


_LONGEST = sa.select(sa.func.max(Book.span_level))


def start_bound(when, level):
    """:func:`started_after` of ``when`` given :func:`longest_level`."""
    if level is None:
        return _OLDEST
    try:
        return max(_OLDEST, when - datetime.timedelta(seconds=2 ** level))
    except OverflowError:
        return _OLDEST


def time_param(name):
    """A bound datetime parameter, for statements built once and run with
    parameters on the session's connection: building a statement and
    running it through the ORM cost more than the statement itself on
    the paths of every create (host choice, quota check)."""
    return sa.bindparam(name, type_=sa.DateTime())


def overlapping_at():
    """WHERE clause: :func:`overlapping` with its window and bound below
    as the parameters ``start``, ``end`` and ``after``, for statements
    built once."""
    return sa.and_(Book.start_date > time_param('after'),
                   Book.start_date < time_param('end'),
                   Book.end_date > time_param('start'))


def overlapping(session, start, end, after=None):
    """WHERE clause: the bookings overlapping ``[start, end)``, for a read
    of some providers' own index ranges, bounded below by ``after``
    (:func:`started_after` of ``start``, read now when not given)."""
    if after is None:
        after = started_after(session, start)
    return sa.and_(Book.start_date > after, Book.start_date < end,
                   Book.end_date > start)
