"""What the plugins that book in the ledger share: how far a search for
windows looks, and re-booking an active reservation to a new end."""

import datetime

from climate import dates
from climate.db.ledger import booking
from climate.db import servers as db_servers
from climate import exceptions
from climate.plugins import common

#: How far after the asked window a 409 (and, without latest_end, the
#: availability search) looks for when all the slots would fit: the
#: search tries each booking's end as a start, so it is bounded.
SEARCH_HORIZON = datetime.timedelta(days=366)


def horizon_end(start, duration):
    """The end of the bounded search from ``start`` for windows of
    ``duration``: :data:`SEARCH_HORIZON` or four durations, whichever is
    longer, within the calendar."""
    try:
        return min(start + max(SEARCH_HORIZON, 4 * duration),
                   dates.MAX_DATE)
    except OverflowError:
        return dates.MAX_DATE


def extend(session, res_id, lease_id, now, end, holder):
    """Re-book an active reservation's bookings from ``now`` to its new
    ``end`` (the past is settled: only what is to come is re-checked);
    NotEnoughCapacity, saying until when it can run, when ``holder``
    (``'its hosts'``, ``'its pool'``) is booked by other leases."""
    requests, _lease = booking.requests_of(session, res_id)
    try:
        booking.rebook(session, res_id, lease_id, requests, now, end)
    except exceptions.Conflict as exc:
        # a pre-created reservation's server held by another lease
        held = db_servers.explained(session, exc, lease_id, now, end, res_id)
        if held:
            raise held
        latest = exc.kwargs.get('at')
        raise exceptions.NotEnoughCapacity(
            reason='reservation %s cannot run until %s UTC: the capacity of '
                   '%s is booked by other leases from %s UTC; it can end at '
                   '%s UTC at the latest.' % (
                       res_id, common.fmt(end), holder, common.fmt(latest),
                       common.fmt(latest)),
            available=0, earliest_start=None)
