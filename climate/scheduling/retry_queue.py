"""The order in which waiting ``with_retries`` leases are tried; no I/O.

A pass goes over the waiting leases oldest first.  A lease is tried when
its counted attempt is due, or on any pass that follows a release of
capacity (a lease ended, deleted or rolled back), when that try is not
counted; a pass where some lease is due tries the older ones too, first
(capacity freed since their last try is theirs before it is a younger
lease's).

A younger lease that fits is granted before an older one that does not
(it may need less, or other resources) -- but never when it asks for the
same as an older one refused in the pass (``shape``): it could only fit by
capacity released since that refusal, which the older lease is owed; and
no younger lease at all once the older one has waited ``overtake_limit``
seconds: from then on a pass stops at it, so that a stream of small
requests cannot starve a large one for ever.

Uncounted tries stop after ``max_refusals`` refusals in a row: released
capacity that the oldest waiting leases could not use is seldom what the
next hundred can, and each try costs a transaction.  The leases beyond are
tried at their counted attempts.
"""

import datetime

#: What a pass does with a waiting lease.
TRY = 'try'
SKIP = 'skip'
#: its counted attempt is due, but an older lease asking the same was just
#: refused: the attempt is counted as refused without a try
BEHIND = 'behind'


class Pass:
    """One pass's decisions, fed with the waiting leases in arrival
    order (objects with ``id``, ``created_at``, ``next_attempt_at`` and
    ``shape``, a hashable summary of what the lease asks for)."""

    def __init__(self, now, overtake_limit, released, max_refusals=10):
        """:param released: capacity was released since the last pass:
            every waiting lease is tried, not only those due."""
        self.now = now
        self.limit = datetime.timedelta(seconds=overtake_limit)
        self.released = released
        self.max_refusals = max_refusals
        #: the id of the lease that stopped the pass, if one did
        self.blocked_by = None
        self._refused_in_a_row = 0
        self._refused_shapes = set()

    @classmethod
    def over(cls, waiting, now, overtake_limit, released, max_refusals=10):
        """The pass over ``waiting`` (oldest first): when a lease is due,
        the older ones are tried first as after a release."""
        due = any(cls._due(lease, now) for lease in waiting)
        return cls(now, overtake_limit, released or due, max_refusals)

    @staticmethod
    def _due(lease, now):
        return lease.next_attempt_at is not None and \
            lease.next_attempt_at <= now

    def decide(self, lease):
        """``(action, counted)``: :data:`TRY`, :data:`SKIP` or
        :data:`BEHIND` for ``lease``, and whether a refusal uses one of
        its attempts."""
        if self.blocked_by is not None:
            return SKIP, False
        due = self._due(lease, self.now)
        if lease.shape in self._refused_shapes:
            return (BEHIND, True) if due else (SKIP, False)
        if due:
            return TRY, True
        if self.released and self._refused_in_a_row < self.max_refusals:
            return TRY, False
        if self._waited_the_limit(lease):
            # refused at its last try, and nothing tried it since: no
            # younger lease goes first
            self.blocked_by = lease.id
        return SKIP, False

    def refused(self, lease):
        """``lease`` was tried and does not fit: younger ones may still be
        tried, unless they ask the same or it waited long enough to block
        them."""
        self._refused_in_a_row += 1
        self._refused_shapes.add(lease.shape)
        if self._waited_the_limit(lease):
            self.blocked_by = lease.id

    def granted(self, lease):
        """``lease`` was granted: the refusals in a row start again."""
        self._refused_in_a_row = 0

    def _waited_the_limit(self, lease):
        return self.now - lease.created_at >= self.limit
