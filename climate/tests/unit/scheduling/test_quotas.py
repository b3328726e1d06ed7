"""Quota arithmetic (climate.scheduling.quotas): effective limits,
calendar periods, and the check of a lease against a brute-force count
minute by minute on small random inputs."""

import datetime

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from climate.scheduling import quotas

PROPERTY = settings(derandomize=True, max_examples=200, deadline=None,
                    database=None)
T0 = datetime.datetime(2030, 1, 1)
M = datetime.timedelta(minutes=1)
L = quotas.Limits
H = quotas.Holding


def at(minutes):
    return T0 + minutes * M


def test_own_limits_over_the_defaults():
    defaults = L(3600, -1, {'VCPU': 64, 'HOST': 2}, {'VCPU': 1000}, 'month')
    own = L(None, 600, {'HOST': -1, 'VOLUME_GB': 10}, None, 'week')
    assert quotas.effective(own, defaults) == L(
        3600, 600, {'VCPU': 64, 'VOLUME_GB': 10}, {'VCPU': 1000}, 'week')
    nothing = L(None, None, None, None, None)
    assert quotas.effective(nothing, defaults) == L(
        3600, -1, {'VCPU': 64, 'HOST': 2}, {'VCPU': 1000}, 'month')
    assert not quotas.needs_lock(L(10, 10, {}, {}, 'day'))
    assert quotas.needs_lock(L(-1, -1, {}, {'VCPU': 1}, 'day'))


def test_calendar_periods():
    when = datetime.datetime(2030, 5, 15, 13, 7)   # a Wednesday
    assert quotas.period_start(when, 'day') == datetime.datetime(2030, 5,
                                                                 15)
    assert quotas.period_start(when, 'week') == datetime.datetime(2030, 5,
                                                                  13)
    assert quotas.period_start(when, 'month') == datetime.datetime(2030, 5,
                                                                   1)
    assert quotas.period_start(when, 'year') == datetime.datetime(2030, 1,
                                                                  1)
    assert quotas.periods(datetime.datetime(2030, 1, 31, 23),
                          datetime.datetime(2030, 3, 1), 'month') == [
        (datetime.datetime(2030, 1, 1), datetime.datetime(2030, 2, 1)),
        (datetime.datetime(2030, 2, 1), datetime.datetime(2030, 3, 1))]
    assert quotas.next_period(datetime.datetime(2030, 12, 1),
                              'month') == datetime.datetime(2031, 1, 1)


def test_concurrent_excess_says_when_and_what_fits():
    limits = L(-1, -1, {'VCPU': 10}, {}, 'month')
    held = [H('other', 'VCPU', at(0), at(60), 6),
            H('mine', 'VCPU', at(30), at(90), 8)]
    found = quotas.excess(limits, held, [], 'mine', at(30), at(90))
    assert found == quotas.Excess('concurrent', 'VCPU', 10, 14, 4, at(30),
                                  None)
    assert quotas.excess(limits, held[:1] + [held[1]._replace(amount=4)],
                         [], 'mine', at(30), at(90)) is None


def test_budget_excess_names_the_period():
    limits = L(-1, -1, {}, {'VCPU': 2}, 'day')
    held = [H('other', 'VCPU', at(0), at(60), 1),
            H('mine', 'VCPU', at(60), at(180), 1)]
    day = (T0, T0 + datetime.timedelta(days=1))
    budgets = [(day, quotas.held_within(held, day[0], day[1], 'mine'))]
    assert budgets[0][1] == {'VCPU': (3 * 3600, 2 * 3600)}
    found = quotas.excess(limits, [], budgets, 'mine', at(60), at(180))
    assert found == quotas.Excess('budget', 'VCPU', 2, 3.0, 1.0, None, day)


_held = st.lists(st.tuples(
    st.sampled_from(['mine', 'a', 'b']), st.sampled_from(['VCPU', 'HOST']),
    st.integers(0, 200), st.integers(1, 150), st.integers(1, 6)),
    max_size=10)


@PROPERTY
@given(rows=_held, first=st.integers(0, 150), length=st.integers(1, 150),
       concurrent=st.integers(0, 12), budget=st.integers(0, 20))
def test_excess_matches_a_count_minute_by_minute(rows, first, length,
                                                 concurrent, budget):
    held = [H(lease, cls, at(s), at(s + d), n)
            for lease, cls, s, d, n in rows]
    start, end = at(first), at(first + length)
    # hours as periods: 20 minutes of budget per hour-long period
    limits = L(-1, -1, {'VCPU': concurrent}, {'HOST': budget / 60.0},
               'day')
    budgets = [(p, quotas.held_within([h for h in held
                                       if h.resource_class == 'HOST'],
                                      p[0], p[1], 'mine'))
               for p in quotas.periods(start, end, 'day')]
    found = quotas.excess(limits, held, budgets, 'mine', start, end)

    def level(cls, minute, leases=None):
        return sum(h.amount for h in held if h.resource_class == cls and
                   h.start <= at(minute) < h.end and
                   (leases is None or h.lease_id in leases))

    window = range(first, first + length)
    over = [m for m in window if level('VCPU', m) > concurrent]
    if over:
        assert found.kind == 'concurrent'
        assert found.at == at(over[0])
        assert found.used == level('VCPU', over[0])
        assert found.fits == max(0, concurrent - max(
            level('VCPU', m, ('a', 'b')) for m in window))
        return
    day = range(0, 24 * 60)
    used = sum(level('HOST', m) for m in day)
    if used > budget:
        assert found.kind == 'budget'
        assert found.used == round(used / 60.0, 6)
        mine = sum(level('HOST', m, ('mine',)) for m in day)
        assert found.fits == round(max(0, budget - (used - mine)) / 60.0, 6)
    else:
        assert found is None
