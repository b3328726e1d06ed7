"""Lease, reservation and event states and the transitions between them.

The values are Blazar's, so existing clients read them unchanged.  Every
status change in Climate goes through :func:`check`; an undeclared
transition is a programming error and raises.

Climate applies updates to a lease in one transaction, so ``UPDATING`` is
accepted for compatibility but never committed by Climate itself.
"""

from climate import exceptions

# lease
PENDING = 'PENDING'
STARTING = 'STARTING'
ACTIVE = 'ACTIVE'
UPDATING = 'UPDATING'
TERMINATING = 'TERMINATING'
TERMINATED = 'TERMINATED'
ERROR = 'ERROR'
# lease types (microversion 1.11, climate.lease.types): states of
# the seeds' promises, each shown to clients older than 1.11 as the Blazar
# state of BLAZAR_EQUIVALENT
#: a scheduled lease before its start (PENDING for other leases)
INACTIVE = 'INACTIVE'
#: a with_retries lease not granted yet, holding nothing
WAITING = 'WAITING'
#: a with_retries lease whose attempts ran out, never granted (terminal)
EXHAUSTED = 'EXHAUSTED'
#: a best_effort lease while Climate frees hosts for it
HUNTING = 'IN_PROGRESS'
#: a best_effort lease whose hunt did not succeed in time (terminal)
TIMEDOUT = 'TIMEDOUT'
# temporary holds (microversion 1.14, climate.lease.holds)
#: booked, not a lease until confirmed before its hold expires
HELD = 'HELD'
#: a hold that expired unconfirmed, what it booked released (terminal)
EXPIRED = 'EXPIRED'

# reservation (lower case, as Blazar)
RES_PENDING = 'pending'
RES_ACTIVE = 'active'
RES_DELETED = 'deleted'
RES_ERROR = 'error'

# event
UNDONE = 'UNDONE'
IN_PROGRESS = 'IN_PROGRESS'
DONE = 'DONE'
EVENT_ERROR = 'ERROR'

LEASE = {
    PENDING: {STARTING, UPDATING, TERMINATING, ERROR},
    INACTIVE: {STARTING, UPDATING, TERMINATING, ERROR},
    # granted: its start is due at once
    WAITING: {STARTING, EXHAUSTED},
    # hosts freed and booked: its start is due at once (STARTING, then
    # ACTIVE through the start event like any lease)
    HUNTING: {STARTING, ACTIVE, TIMEDOUT, ERROR},
    STARTING: {STARTING, ACTIVE, ERROR},
    ACTIVE: {UPDATING, TERMINATING, ERROR},
    UPDATING: {PENDING, INACTIVE, ACTIVE, ERROR},
    TERMINATING: {TERMINATING, TERMINATED, ERROR},
    ERROR: {TERMINATING, ERROR},
    TERMINATED: set(),
    EXHAUSTED: set(),
    TIMEDOUT: set(),
    # confirmed: the lease its type makes (PENDING, or INACTIVE if
    # scheduled); or expired unconfirmed
    HELD: {PENDING, INACTIVE, EXPIRED},
    EXPIRED: set(),
}

#: What a client older than microversion 1.11 is shown of each state
#: (Blazar has none of the lease types' own).
BLAZAR_EQUIVALENT = {INACTIVE: PENDING, WAITING: PENDING,
                     HUNTING: STARTING, EXHAUSTED: ERROR, TIMEDOUT: ERROR,
                     HELD: PENDING, EXPIRED: TERMINATED}
#: What a client of 1.11 to 1.13 is shown of the holds' states.
HOLD_EQUIVALENT = {HELD: PENDING, EXPIRED: TERMINATED}

RESERVATION = {
    RES_PENDING: {RES_ACTIVE, RES_DELETED, RES_ERROR},
    RES_ACTIVE: {RES_DELETED, RES_ERROR},
    RES_ERROR: {RES_ACTIVE, RES_DELETED},
    RES_DELETED: set(),
}

EVENT = {
    UNDONE: {IN_PROGRESS, DONE, EVENT_ERROR},
    # back to UNDONE: a failed attempt waits for its retry
    IN_PROGRESS: {IN_PROGRESS, UNDONE, DONE, EVENT_ERROR},
    DONE: set(),
    EVENT_ERROR: set(),
}

_MACHINES = {'lease': LEASE, 'reservation': RESERVATION, 'event': EVENT}

# A lease in one of these states can be changed by its project.
LEASE_UPDATABLE = frozenset({PENDING, INACTIVE, ACTIVE})
# Not started yet, its resources booked: a scheduled lease is INACTIVE
# where any other is PENDING.
LEASE_NOT_STARTED = frozenset({PENDING, INACTIVE})
# Holding resources, now or later: healing replaces what such a lease lost
# (a hold's too: its confirm keeps what it booked).
LEASE_HOLDING = frozenset({PENDING, INACTIVE, ACTIVE, HELD})
# Done for good: its trust has no more use.
LEASE_FINISHED = frozenset({TERMINATED, EXHAUSTED, TIMEDOUT, EXPIRED})
# An event engine is (or may be) acting on the lease.
LEASE_BUSY = frozenset({STARTING, UPDATING, TERMINATING})


def check(kind, current, new):
    """Return ``new`` if ``current -> new`` is declared for ``kind``.

    Staying in the same state is always allowed, so idempotent re-runs need
    no special case.  Anything else undeclared is a programming error and
    raises InvalidStateTransition.
    """
    if current != new and new not in _MACHINES[kind].get(current, ()):
        raise exceptions.InvalidStateTransition(
            kind=kind, current=current, new=new)
    return new
