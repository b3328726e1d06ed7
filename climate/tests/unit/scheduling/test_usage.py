"""Usage arithmetic (climate.scheduling.usage): examples, and the planning
view checked against a brute-force count minute by minute on small random
inputs."""

import datetime

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import pytest

from climate.scheduling import usage

PROPERTY = settings(derandomize=True, max_examples=150, deadline=None,
                    database=None)

T0 = datetime.datetime(2030, 1, 1)
M = datetime.timedelta(minutes=1)
H = datetime.timedelta(hours=1)


def at(minutes):
    return T0 + minutes * M


def held(lease, cls, past, future, current=0, status='ACTIVE',
         rtype='virtual:instance'):
    return usage.Held(lease, 'name-' + lease, status, rtype, cls, past,
                      future, current)


# -- examples -----------------------------------------------------------------

def test_units_name_an_hour_of_a_class():
    assert usage.unit('HOST') == 'host-hours'
    assert usage.unit('VCPU') == 'vCPU-hours'
    assert usage.unit('FLOATING_IP') == 'IP-hours'
    assert usage.unit('CUSTOM_GPU') == 'CUSTOM_GPU-hours'


def test_project_usage_sums_by_type_and_class_and_per_lease():
    rows = [held('b', 'VCPU', 7200, 3600, 2),
            held('a', 'VCPU', 3600, 0, 1),
            held('a', 'MEMORY_MB', 1800, 1800, 512),
            # a deleted lease's records: no status any more
            held('c', 'VCPU', 3600, 0, status=None)]
    answer = usage.project_usage(rows, at(0), at(600), at(60), by_lease=True)
    assert answer['totals'] == [
        {'resource_type': 'virtual:instance', 'resource_class': 'MEMORY_MB',
         'unit': 'MB-hours', 'past': 0.5, 'future': 0.5, 'total': 1.0,
         'current': 512},
        {'resource_type': 'virtual:instance', 'resource_class': 'VCPU',
         'unit': 'vCPU-hours', 'past': 4.0, 'future': 1.0, 'total': 5.0,
         'current': 3}]
    assert [(x['lease_id'], x['status'], [t['total'] for t in x['totals']])
            for x in answer['leases']] == [
        ('a', 'ACTIVE', [1.0, 1.0]), ('b', 'ACTIVE', [3.0]),
        ('c', 'DELETED', [1.0])]
    # the totals alone unless asked
    assert usage.project_usage(rows, at(0), at(600), at(60)) == {
        'totals': answer['totals']}


def test_current_is_only_known_within_the_period():
    rows = [held('a', 'VCPU', 3600, 0, 4)]
    past_period = usage.project_usage(rows, at(0), at(60), at(120))
    assert past_period['totals'][0]['current'] is None
    within = usage.project_usage(rows, at(0), at(180), at(120))
    assert within['totals'][0]['current'] == 4


def test_steps_cut_the_period_the_last_one_shorter():
    assert usage.steps(at(0), at(150), H) == [
        (at(0), at(60)), (at(60), at(120)), (at(120), at(150))]
    assert usage.steps(at(0), at(60), H) == [(at(0), at(60))]


def test_too_many_steps_are_refused():
    usage.steps(at(0), at(usage.MAX_STEPS), M)
    with pytest.raises(ValueError) as exc:
        usage.steps(at(0), at(usage.MAX_STEPS + 1), M)
    assert exc.value.args[0] == usage.MAX_STEPS + 1


def test_reservable_sums_usable_capacity_per_class():
    rows = [('VCPU', 16, 0, 2.0, 3), ('VCPU', 8, 2, 1.0, 1),
            ('HOST', 1, 0, 1.0, 4)]
    assert usage.reservable_by_class(rows) == {'VCPU': 102, 'HOST': 4}


def test_planning_example():
    windows = usage.steps(at(0), at(180), H)
    held_rows = [('VCPU', at(0), at(90), 4), ('VCPU', at(30), at(60), 2)]
    out = usage.planning(held_rows, {'VCPU': 8, 'HOST': 2}, windows)
    assert [c['resource_class'] for c in out] == ['HOST', 'VCPU']
    host, vcpu = out
    assert [s['reserved_peak'] for s in host['steps']] == [0, 0, 0]
    assert host['steps'][0]['reservable_hours'] == 2.0
    assert [(s['reserved_peak'], s['reserved_hours'])
            for s in vcpu['steps']] == [(6, 5.0), (4, 2.0), (0, 0.0)]
    assert vcpu['steps'][0]['reserved_share'] == 0.625
    # a class nobody can reserve any more: no share to give
    gone = usage.planning([('VCPU', at(0), at(60), 1)], {}, windows[:1])
    assert gone[0]['steps'][0]['reserved_share'] is None


# -- properties against a brute-force count -----------------------------------

_bookings = st.lists(st.tuples(
    st.sampled_from(['VCPU', 'HOST']), st.integers(0, 300),
    st.integers(1, 200), st.integers(1, 5)), max_size=12)


@PROPERTY
@given(rows=_bookings, first=st.integers(0, 200), length=st.integers(1, 300),
       step=st.integers(1, 120))
def test_planning_matches_a_count_minute_by_minute(rows, first, length,
                                                   step):
    held_rows = [(cls, at(s), at(s + d), n) for cls, s, d, n in rows]
    windows = usage.steps(at(first), at(first + length), step * M)
    out = {c['resource_class']: c for c in usage.planning(
        held_rows, {'VCPU': 10}, windows)}
    for cls in {'VCPU'} | {r[0] for r in rows}:
        for (w_start, w_end), got in zip(windows, out[cls]['steps']):
            minutes = range(int((w_start - T0) / M), int((w_end - T0) / M))
            levels = [sum(n for c, s, e, n in held_rows
                          if c == cls and s <= at(m) < e) for m in minutes]
            assert got['reserved_peak'] == max(levels)
            assert got['reserved_hours'] == round(sum(levels) / 60.0, 6)
