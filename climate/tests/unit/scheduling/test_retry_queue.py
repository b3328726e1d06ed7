"""climate.scheduling.retry_queue: which waiting leases a pass tries, in
which order, and when an old one stops younger ones overtaking it."""

import collections
import datetime

from hypothesis import given
from hypothesis import strategies as st

from climate.scheduling import retry_queue

T0 = datetime.datetime(2030, 1, 1)
Lease = collections.namedtuple('Lease',
                               'id created_at next_attempt_at shape')
TRY, SKIP, BEHIND = retry_queue.TRY, retry_queue.SKIP, retry_queue.BEHIND


def lease(name, waited, due_in=None, shape=None):
    """A lease that has waited ``waited`` seconds at T0, its counted
    attempt due ``due_in`` seconds after T0 (None: not scheduled), asking
    for ``shape`` (its own name unless given)."""
    due = None if due_in is None else T0 + datetime.timedelta(seconds=due_in)
    return Lease(name, T0 - datetime.timedelta(seconds=waited), due,
                 name if shape is None else shape)


def test_only_due_leases_are_tried_without_a_release():
    decisions = retry_queue.Pass(T0, 600, released=False)
    assert decisions.decide(lease('due', 10, 0)) == (TRY, True)
    assert decisions.decide(lease('late', 10, -5)) == (TRY, True)
    assert decisions.decide(lease('later', 10, 5)) == (SKIP, False)


def test_a_release_tries_every_lease_counting_only_the_due():
    decisions = retry_queue.Pass(T0, 600, released=True)
    assert decisions.decide(lease('due', 10, 0)) == (TRY, True)
    assert decisions.decide(lease('later', 10, 5)) == (TRY, False)


def test_a_young_refused_lease_may_be_overtaken():
    decisions = retry_queue.Pass(T0, 600, released=True)
    old = lease('old', 599, 5)
    decisions.refused(old)
    assert decisions.blocked_by is None
    assert decisions.decide(lease('young', 1, 5)) == (TRY, False)


def test_a_lease_that_waited_the_limit_stops_the_pass():
    decisions = retry_queue.Pass(T0, 600, released=True)
    old = lease('old', 600, 0)
    decisions.refused(old)
    assert decisions.blocked_by == 'old'
    # not tried, and not counted: the wait is not the young one's fault
    assert decisions.decide(lease('young', 1, 0)) == (SKIP, False)


def test_a_zero_limit_is_strict_arrival_order():
    decisions = retry_queue.Pass(T0, 0, released=True)
    decisions.refused(lease('first', 0, 5))
    assert decisions.decide(lease('second', 0, 0)) == (SKIP, False)


@given(st.lists(st.integers(min_value=1, max_value=4), min_size=1,
                max_size=12),
       st.integers(min_value=0, max_value=6),
       st.integers(min_value=0, max_value=1200))
def test_what_a_pass_grants(sizes, free, limit):
    """A pass over leases of ``sizes`` (oldest first, waited 100 s more
    for each place ahead) on ``free`` units: each granted lease fit when
    tried; a lease is skipped only behind a refused one that waited the
    limit, and with a limit of 0 grants are a prefix of arrival order."""
    waiting = [lease(i, 100 * (len(sizes) - i), 0) for i in range(len(sizes))]
    decisions = retry_queue.Pass(T0, limit, released=True)
    granted, left = [], free
    for item, size in zip(waiting, sizes):
        action, counted = decisions.decide(item)
        assert counted == (action != SKIP)  # all due
        if action != TRY:
            assert decisions.blocked_by is not None
            blocker = waiting[decisions.blocked_by]
            assert (T0 - blocker.created_at).total_seconds() >= limit
            continue
        if size <= left:
            granted.append(item.id)
            left -= size
        else:
            decisions.refused(item)
    if limit == 0:
        assert granted == list(range(len(granted)))
    if limit > 100 * len(sizes):
        # nobody waited the limit: every lease that fit in its turn
        greedy, room = [], free
        for index, size in enumerate(sizes):
            if size <= room:
                greedy.append(index)
                room -= size
        assert granted == greedy


def test_uncounted_tries_stop_after_refusals_in_a_row():
    decisions = retry_queue.Pass(T0, 600, released=True, max_refusals=2)
    leases = [lease(i, 10, 5) for i in range(5)]
    assert decisions.decide(leases[0]) == (TRY, False)
    decisions.refused(leases[0])
    assert decisions.decide(leases[1]) == (TRY, False)
    decisions.granted(leases[1])  # the count starts again
    for item in leases[2:4]:
        assert decisions.decide(item) == (TRY, False)
        decisions.refused(item)
    assert decisions.decide(leases[4]) == (SKIP, False)
    # a due attempt is made whatever the refusals
    assert decisions.decide(lease('due', 1, 0)) == (TRY, True)


def test_an_old_lease_not_tried_still_blocks_younger_ones():
    """Refused at its last try and not due: a pass without a release
    does not let a younger lease that is due go before it."""
    decisions = retry_queue.Pass(T0, 600, released=False)
    assert decisions.decide(lease('old', 700, 60)) == (SKIP, False)
    assert decisions.blocked_by == 'old'
    assert decisions.decide(lease('young', 1, 0)) == (SKIP, False)


def test_a_due_lease_lets_the_older_ones_try_first():
    waiting = [lease('old', 100, 60), lease('young', 10, 0)]
    decisions = retry_queue.Pass.over(waiting, T0, 600, released=False)
    assert decisions.decide(waiting[0]) == (TRY, False)
    assert decisions.decide(waiting[1]) == (TRY, True)
    nothing_due = [lease('old', 100, 60), lease('young', 10, 30)]
    decisions = retry_queue.Pass.over(nothing_due, T0, 600, released=False)
    assert [decisions.decide(w) for w in nothing_due] == [(SKIP, False)] * 2


def test_a_younger_lease_asking_the_same_never_overtakes():
    """It could only fit by capacity released since the older one's
    refusal, which is the older one's."""
    decisions = retry_queue.Pass(T0, 600, released=True)
    old = lease('old', 10, 60, shape='1 host')
    assert decisions.decide(old) == (TRY, False)
    decisions.refused(old)
    assert decisions.blocked_by is None
    # same ask: skipped, or its due attempt counted as refused untried
    assert decisions.decide(lease('same', 5, 60, '1 host')) == (SKIP, False)
    assert decisions.decide(lease('due', 5, 0, '1 host')) == (BEHIND, True)
    # another ask is tried
    assert decisions.decide(lease('other', 5, 60, '2 hosts')) == (TRY, False)
