"""The order in which waiting ``with_retries`` leases are tried; no I/O.

A pass goes over the waiting leases oldest first.  A lease is tried when
its counted attempt is due, or on any pass that follows a release of
capacity (a lease ended, deleted or rolled back), when that try is not
counted.  A younger lease that fits is granted before an older one that
does not (it may need less, or other resources) -- until the older one has
waited ``overtake_limit`` seconds: from then on a pass stops at it, so that
a stream of small requests cannot starve a large one for ever.
"""

import datetime


class Pass:
    """One pass's decisions, fed with the waiting leases in arrival
    order (objects with ``id``, ``created_at`` and ``next_attempt_at``)."""

    def __init__(self, now, overtake_limit, released):
        """:param released: capacity was released since the last pass:
            every waiting lease is tried, not only those due."""
        self.now = now
        self.limit = datetime.timedelta(seconds=overtake_limit)
        self.released = released
        #: the id of the lease that stopped the pass, if one did
        self.blocked_by = None

    def decide(self, lease):
        """``(try it, counted)``: whether to try ``lease`` now, and whether
        a refusal uses one of its attempts."""
        if self.blocked_by is not None:
            return False, False
        due = lease.next_attempt_at is not None and \
            lease.next_attempt_at <= self.now
        return due or self.released, due

    def refused(self, lease):
        """``lease`` was tried and does not fit: younger ones may still be
        tried, unless it has waited long enough to block them."""
        if self.now - lease.created_at >= self.limit:
            self.blocked_by = lease.id
