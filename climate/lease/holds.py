"""Temporary holds (microversion 1.14): a two-phase create.

A create with ``hold_for`` (seconds) books what the lease asks for, as
any create does (the ledger, the quotas), and writes the lease ``HELD``
until ``hold_expires_at``: a person or a portal confirms it meanwhile
(``POST /v1/leases/{id}/confirm``: a quota approval, a payment, a form),
which makes it the lease its type makes (``PENDING``, or ``INACTIVE`` if
``scheduled``) with nothing booked again.  Unconfirmed, the hold expires:
what it booked is released and it is ``EXPIRED``, once, whichever manager
gets there (``climate.manager.workers.holds``).  While held, its events
wait: a start that comes during the hold runs when it is confirmed.

The rules here are pure (no I/O); ``climate.manager.leases`` applies
them.
"""

import datetime

from climate import dates
from climate import exceptions
from climate import states

#: A create body field of 1.14 and later.
FIELD = 'hold_for'
#: The lease types a hold may make (None: a lease without one).
HELD_TYPES = (None, 'scheduled')


def parse(body, max_hold_for):
    """``(body without hold_for, seconds or None)``; InvalidInput when it
    is not a whole number of seconds from 1 to ``max_hold_for``."""
    if FIELD not in body:
        return body, None
    body = dict(body)
    seconds = body.pop(FIELD)
    if isinstance(seconds, bool) or not isinstance(seconds, int) or \
            not 1 <= seconds <= max_hold_for:
        raise exceptions.InvalidInput(
            reason='hold_for must be a whole number of seconds from 1 to '
                   "%d (the operator's [leases] max_hold_for), not %r" % (
                       max_hold_for, seconds))
    return body, seconds


def expiry(seconds, lease_type, end_date, now):
    """When a hold of ``seconds`` made ``now`` expires; InvalidInput when
    the lease's type starts at its create, or the hold would outlast the
    lease."""
    if lease_type not in HELD_TYPES:
        raise exceptions.InvalidInput(
            reason='hold_for is for a lease without lease_type or of '
                   'lease_type scheduled: a lease of type %s starts when '
                   'it is made' % lease_type)
    expires = now + datetime.timedelta(seconds=seconds)
    if expires >= end_date:
        raise exceptions.InvalidInput(
            reason='hold_for: a hold of %d s would outlast the lease, '
                   'which ends at %s' % (seconds, dates.format(end_date)))
    return expires


def held_reason(expires):
    return ('held until %s UTC: confirm it before then (POST '
            '/v1/leases/{id}/confirm) or what it booked is released' %
            _shown(expires))


def expired_reason(expires):
    return ('the hold expired unconfirmed at %s UTC; what it booked was '
            'released' % _shown(expires))


def check_confirmable(lease_id, status, expires, now):
    """Refuse (409) the confirm of a lease that is not held, or whose
    hold has expired though no manager has released it yet."""
    if status != states.HELD:
        raise exceptions.HoldNotConfirmable(
            id=lease_id, reason='it is %s, not HELD: only a hold is '
                                'confirmed' % status)
    if now >= expires:
        raise exceptions.HoldNotConfirmable(
            id=lease_id, reason='its hold expired at %s UTC' % _shown(
                expires))


def _shown(when):
    return dates.format(when)[:19].replace('T', ' ')
