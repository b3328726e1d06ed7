"""Choice rule, free windows and timeline: pure interval arithmetic."""

import datetime

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import pytest

from climate.scheduling import hosts as sched

T0 = datetime.datetime(2030, 1, 1)


def at(hours):
    return T0 + datetime.timedelta(hours=hours)


H = datetime.timedelta(hours=1)


def test_best_fit_takes_the_snuggest_gap_then_the_lowest_id():
    start, end = at(10), at(12)
    candidates = [
        sched.Candidate(1),                    # never used: taken last
        sched.Candidate(2, at(9), at(13)),     # 2 h of slack
        sched.Candidate(3, at(10), at(12)),    # exact fit
        sched.Candidate(4, None, at(12)),      # open before
        sched.Candidate(5, at(10), at(12)),    # exact fit, higher id
    ]
    assert sched.choose(candidates, start, end, 5) == [3, 5, 2, 4, 1]
    assert sched.choose(candidates, start, end, 2) == [3, 5]
    assert sched.choose([], start, end, 2) == []


def test_among_equal_slack_awake_hosts_come_before_sleeping_ones():
    start, end = at(10), at(12)
    candidates = [
        sched.Candidate(1),                    # open both sides
        sched.Candidate(2),                    # open both sides
        sched.Candidate(3, at(10), at(12)),    # exact fit, asleep
        sched.Candidate(4, at(10), at(12)),    # exact fit
        sched.Candidate(5),                    # open both sides
    ]
    # the fit comes first: a sleeping exact fit beats awake open hosts
    assert sched.choose(candidates, start, end, 5, asleep={1, 3}) == \
        [4, 3, 2, 5, 1]
    assert sched.choose(candidates, start, end, 2, asleep={3}) == [4, 3]
    # without it, or with nobody asleep: the lowest id breaks ties
    assert sched.choose(candidates, start, end, 5) == [3, 4, 1, 2, 5]
    assert sched.choose(candidates, start, end, 5, asleep=set()) == \
        [3, 4, 1, 2, 5]


def test_awake_first_puts_the_sleeping_hosts_last_in_their_order():
    assert sched.awake_first([3, 5, 2, 4, 1], {3, 4}) == [5, 2, 1, 3, 4]
    assert sched.awake_first([3, 5], set()) == [3, 5]
    assert sched.awake_first([3, 5], {3, 5}) == [3, 5]
    assert sched.awake_first([], {1}) == []


candidates_st = st.lists(
    st.tuples(st.one_of(st.none(), st.integers(0, 10)),
              st.one_of(st.none(), st.integers(12, 22)), st.booleans()),
    max_size=12)


@settings(derandomize=True, max_examples=150, deadline=None, database=None)
@given(candidates_st, st.integers(1, 12))
def test_asleep_only_reorders_hosts_of_equal_slack(rows, count):
    start, end = at(10), at(12)
    candidates = [sched.Candidate(i, None if p is None else at(p),
                                  None if n is None else at(n))
                  for i, (p, n, _asleep) in enumerate(rows)]
    asleep = {i for i, (_p, _n, sleeping) in enumerate(rows) if sleeping}
    plain = sched.choose(candidates, start, end, count)
    aware = sched.choose(candidates, start, end, count, asleep=asleep)
    slack = {c.host_id: sched.slack(c, start, end) for c in candidates}
    # the same fits, in the same order of fit
    assert [slack[h] for h in aware] == [slack[h] for h in plain]
    # among equal fits, awake hosts first, then the lowest id
    keys = [(slack[h], h in asleep, h) for h in aware]
    assert keys == sorted(keys)
    # nobody asleep: the rule as it was
    assert sched.choose(candidates, start, end, count, asleep=set()) == plain


def test_earliest_window_when_hosts_free_up():
    busy = {1: [(at(0), at(5))], 2: [(at(0), at(3)), (at(6), at(8))],
            3: [(at(2), at(4))]}
    # two hosts for 2 h from hour 0: host 3 is free 0-2 only, so hour 3
    # (host 2 free 3-6) with host 3 (free from 4)... the sweep decides
    windows = sched.free_windows([1, 2, 3], busy, 2, 2 * H, at(0))
    assert windows[0]['start'] == at(4)
    assert windows[0]['hosts_free'] == 2
    assert windows[0]['end'] == at(6)
    # one host for 2 h: right away (host 3, 0-2)
    first = sched.free_windows([1, 2, 3], busy, 1, 2 * H, at(0))[0]
    assert first['start'] == at(0) and first['hosts_free'] == 1


def test_windows_are_ranked_and_closed_stretches_say_their_last_start():
    busy = {1: [(at(2), at(4))], 2: [(at(2), at(4))]}
    windows = sched.free_windows([1, 2], busy, 2, H, at(0))
    assert [(w['start'], w['latest_start']) for w in windows] == [
        (at(0), at(1)), (at(4), None)]


def test_latest_end_bounds_the_search():
    busy = {1: [(at(1), at(10))]}
    assert sched.free_windows([1], busy, 1, 2 * H, at(0), at(9)) == []
    windows = sched.free_windows([1], busy, 1, 2 * H, at(0), at(12))
    assert [(w['start'], w['latest_start']) for w in windows] == [
        (at(10), at(10))]


def test_not_enough_hosts_at_all():
    assert sched.free_windows([1], {}, 2, H, at(0)) == []
    assert sched.earliest_start([1, 2], {}, 2, H, at(0)) == at(0)


def test_limit_and_bad_arguments():
    busy = {1: [(at(i * 2 + 1), at(i * 2 + 2)) for i in range(10)]}
    assert len(sched.free_windows([1], busy, 1, H, at(0), limit=3)) == 3
    with pytest.raises(ValueError):
        sched.free_windows([1], busy, 0, H, at(0))


def test_overlapping_busy_intervals_are_merged():
    busy = {1: [(at(1), at(5)), (at(2), at(3)), (at(4), at(7))]}
    assert sched.earliest_start([1], busy, 1, 2 * H, at(0)) == at(7)


def test_timeline_counts_free_hosts():
    busy = {1: [(at(1), at(3))], 2: [(at(2), at(4))], 3: [(at(-5), at(1))]}
    segments = sched.timeline([1, 2, 3], busy, at(0), at(5))
    assert [(s['start'], s['end'], s['free']) for s in segments] == [
        (at(0), at(2), 2), (at(2), at(3), 1), (at(3), at(4), 2),
        (at(4), at(5), 3)]
    assert sched.timeline([1], {}, at(0), at(1)) == [
        {'start': at(0), 'end': at(1), 'free': 1}]
    assert sched.timeline([1], {}, at(1), at(0)) == []


def test_free_until():
    assert sched.free_until([(at(5), at(6)), (at(8), at(9))], at(4)) == at(5)
    assert sched.free_until([(at(1), at(2))], at(4)) is None


def test_windows_agree_with_a_brute_force_check():
    import random
    rng = random.Random(7)
    for _ in range(200):
        hosts = list(range(1, 6))
        busy = {}
        for h in hosts:
            t = 0
            for _ in range(rng.randint(0, 4)):
                t += rng.randint(0, 4)
                length = rng.randint(1, 4)
                busy.setdefault(h, []).append((at(t), at(t + length)))
                t += length
        count, hours = rng.randint(1, 4), rng.randint(1, 3)

        def free_count(start):
            return sum(1 for h in hosts if not any(
                s < start + hours * H and e > start
                for s, e in busy.get(h, ())))
        expected = next((at(t) for t in range(0, 40)
                         if free_count(at(t)) >= count), None)
        got = sched.earliest_start(hosts, busy, count, hours * H, at(0))
        assert got == expected, (busy, count, hours)


def test_horizon_makes_far_neighbours_open():
    start, end = at(100), at(102)
    candidates = [sched.Candidate(1, at(0), at(300)),   # far both sides
                  sched.Candidate(2, at(99), None),     # near before
                  sched.Candidate(3, None, None)]
    # without a horizon host 1's finite gaps beat any open side
    assert sched.choose(candidates, start, end, 3) == [1, 2, 3]
    # within a 10 h horizon host 1 is as open as host 3: lowest id wins
    assert sched.choose(candidates, start, end, 3, 10 * H) == [2, 1, 3]
    assert sched.fit_horizon(at(0), at(1)) == datetime.timedelta(days=1)
    assert sched.fit_horizon(at(0), at(48)) == 8 * 24 * H
