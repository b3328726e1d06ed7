"""The ledger's arithmetic (climate.scheduling.capacity): examples, and
properties checked against a brute-force sweep second by second on small
random inputs (integer times, so every second is an instant to check)."""

import datetime
import itertools

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import pytest

from climate.scheduling import capacity as cap

Inv = cap.Inventory
B = cap.Booking

# fixed seed, bounded: the same examples on every run
PROPERTY = settings(derandomize=True, max_examples=150, deadline=None,
                    database=None)

T0 = datetime.datetime(2030, 1, 1)
H = datetime.timedelta(hours=1)


def at(hours):
    return T0 + hours * H


# -- examples -----------------------------------------------------------------

def test_usable_capacity_is_placements():
    assert cap.usable(Inv(16)) == 16
    assert cap.usable(Inv(16, 2, 1.5)) == 21            # 14 * 1.5
    assert cap.usable(Inv(10, 0, 1.15)) == 11           # 11.5 rounded down
    assert cap.usable(Inv(4, 6)) == 0                   # never negative
    assert cap.usable(Inv(7, 0, 0.5)) == 3


def test_unit_bounds():
    inv = Inv(64, 0, 1.0, min_unit=2, max_unit=16, step_size=2)
    assert cap.unit_allowed(inv, 2)
    assert cap.unit_allowed(inv, 16)
    assert not cap.unit_allowed(inv, 1)      # below min_unit
    assert not cap.unit_allowed(inv, 18)     # above max_unit
    assert not cap.unit_allowed(inv, 3)      # not a step


def test_peak_on_a_half_open_window():
    bookings = [B(at(0), at(2), 3), B(at(1), at(3), 4), B(at(3), at(5), 5)]
    assert cap.peak(bookings, at(0), at(5)) == 7           # hour 1-2
    # a booking ending at 3 and one starting at 3 never meet
    assert cap.peak(bookings, at(2), at(5)) == 5
    assert cap.peak(bookings, at(5), at(9)) == 0
    assert cap.peak([], at(0), at(1)) == 0
    assert cap.usage(bookings, at(0), at(6)) == [
        (at(0), at(1), 3), (at(1), at(2), 7), (at(2), at(3), 4),
        (at(3), at(5), 5), (at(5), at(6), 0)]


def test_first_excess_names_the_instant():
    bookings = [B(at(0), at(2), 3), B(at(4), at(6), 6)]
    assert cap.first_excess(bookings, at(0), at(8), 5) == (at(4), 6)
    assert cap.first_excess(bookings, at(0), at(8), 6) is None
    assert cap.first_excess(bookings, at(1), at(8), -1) == (at(1), 3)


def test_free_and_units_fit_with_max_unit():
    invs = {'VCPU': Inv(16, 0, 2.0, max_unit=8), 'MEMORY_MB': Inv(32768)}
    bookings = {'VCPU': [B(at(0), at(4), 20)]}
    assert cap.free(invs['VCPU'], bookings['VCPU'], at(0), at(1)) == 12
    assert cap.free(invs['VCPU'], bookings['VCPU'], at(4), at(5)) == 32
    shape = {'VCPU': 4, 'MEMORY_MB': 4096}
    assert cap.provider_fit(invs, bookings, shape, at(0), at(2)) == 3
    assert cap.provider_fit(invs, bookings, shape, at(4), at(5)) == 8
    # a unit larger than max_unit fits nowhere, whatever is free
    assert cap.provider_fit(invs, {}, {'VCPU': 10}, at(0), at(1)) == 0
    # a class the provider lacks fits nothing
    assert cap.provider_fit(invs, {}, {'DISK_GB': 1}, at(0), at(1)) == 0
    with pytest.raises(ValueError):
        cap.units_fit(invs, {}, {'VCPU': 0})


def test_whole_provider_takes_every_class():
    invs = {cap.WHOLE: Inv(1), 'VCPU': Inv(8, 1, 2.0), 'DISK_GB': Inv(100)}
    assert cap.whole_amounts(invs) == {cap.WHOLE: 1, 'VCPU': 14,
                                       'DISK_GB': 100}


def test_placement_rule():
    fits = {'a': 5, 'b': 2, 'c': 3, 'd': 0, 'e': 2}
    # best fit: the providers with the fewest units first, lowest id on a tie
    assert cap.plan(fits, 3) == {'b': 2, 'e': 1}
    assert cap.plan(fits, 6) == {'b': 2, 'e': 2, 'c': 2}
    assert cap.plan(fits, 12) == {'b': 2, 'e': 2, 'c': 3, 'a': 5}
    assert cap.plan(fits, 13) is None
    assert cap.plan(fits, 3, affinity=True) == {'c': 3}
    assert cap.plan(fits, 6, affinity=True) is None
    assert cap.plan(fits, 3, affinity=False) == {'b': 1, 'e': 1, 'c': 1}
    assert cap.plan(fits, 5, affinity=False) is None
    assert cap.total_fit(fits) == 12
    assert cap.total_fit(fits, True) == 5
    assert cap.total_fit(fits, False) == 4
    with pytest.raises(ValueError):
        cap.plan(fits, 0)


def test_placement_rule_goes_through_prefixes_in_id_order():
    fits = {'a': 1, 'b': 0, 'c': 3, 'd': 1, 'e': 9}
    # the first two ('a', 'b') hold 1 unit
    assert cap.plan_in_order(fits, 1, chunks=(2, 2)) == {'a': 1}
    # then the first four hold 5: best fit among them
    assert cap.plan_in_order(fits, 2, chunks=(2, 2)) == {'a': 1, 'd': 1}
    assert cap.plan_in_order(fits, 3, affinity=True, chunks=(2, 2)) == {
        'c': 3}
    # then all
    assert cap.plan_in_order(fits, 4, affinity=True, chunks=(2, 2)) == {
        'e': 4}
    assert cap.plan_in_order(fits, 15, chunks=(2, 2)) is None
    assert cap.plan_in_order({}, 1) is None


def test_earliest_window_with_datetimes():
    invs = {'h1': {'VCPU': Inv(8)}, 'h2': {'VCPU': Inv(8)}}
    bookings = {'h1': {'VCPU': [B(at(0), at(5), 8)]},
                'h2': {'VCPU': [B(at(0), at(3), 4), B(at(3), at(6), 8)]}}
    shape = {'VCPU': 4}
    # one unit: h2 has 4 free from hour 0 to 3
    assert cap.earliest_window(invs, bookings, shape, 1, 2 * H,
                               at(0)) == at(0)
    # two units together: h1 frees up at hour 5
    assert cap.earliest_window(invs, bookings, shape, 2, 2 * H, at(0),
                               affinity=True) == at(5)
    # two apart: h1 at 5, h2 at 6
    assert cap.earliest_window(invs, bookings, shape, 2, 2 * H, at(0),
                               affinity=False) == at(6)
    assert cap.earliest_window(invs, bookings, shape, 2, 2 * H, at(0),
                               latest_end=at(7), affinity=False) is None
    assert cap.earliest_window(invs, bookings, shape, 5, H, at(0)) is None


# -- brute force --------------------------------------------------------------

def brute_usage(bookings, t):
    return sum(a for s, e, a in bookings if s <= t < e)


def brute_peak(bookings, start, end):
    return max((brute_usage(bookings, t) for t in range(start, end)),
               default=0)


def brute_valid(invs, bookings, shape, placement, start, end):
    """Every second of the window, every class: what is booked plus the
    units placed stays within the usable capacity, and each unit obeys
    the unit bounds."""
    for provider, units in placement.items():
        if not units:
            continue
        for cls, amount in shape.items():
            if amount <= 0:
                continue
            inv = invs[provider].get(cls)
            if inv is None or amount < inv.min_unit or (
                    inv.max_unit is not None and amount > inv.max_unit) or \
                    amount % inv.step_size:
                return False
            limit = max(0, int((inv.total - inv.reserved) *
                               inv.allocation_ratio))
            rows = bookings.get(provider, {}).get(cls, [])
            for t in range(start, end):
                if brute_usage(rows, t) + units * amount > limit:
                    return False
    return True


def placements(providers, count, affinity):
    """Every way to put ``count`` units on ``providers``."""
    if affinity is True:
        for p in providers:
            yield {p: count}
        return
    if affinity is False:
        for chosen in itertools.combinations(providers, count):
            yield {p: 1 for p in chosen}
        return
    for split in itertools.product(range(count + 1), repeat=len(providers)):
        if sum(split) == count:
            yield dict(zip(providers, split))


def brute_fits(invs, bookings, shape, count, affinity, start, end):
    return any(brute_valid(invs, bookings, shape, p, start, end)
               for p in placements(sorted(invs), count, affinity))


# -- strategies ---------------------------------------------------------------

CLASSES = ('VCPU', 'MEMORY_MB')

bookings_st = st.lists(
    st.tuples(st.integers(0, 24), st.integers(1, 8),
              st.integers(1, 6)).map(lambda t: B(t[0], t[0] + t[1], t[2])),
    max_size=6)

inventory_st = st.builds(
    Inv, total=st.integers(0, 12), reserved=st.integers(0, 3),
    allocation_ratio=st.sampled_from([0.5, 1.0, 1.5, 2.0]),
    min_unit=st.integers(1, 2),
    max_unit=st.one_of(st.none(), st.integers(1, 6)),
    step_size=st.integers(1, 2))

provider_st = st.fixed_dictionaries(
    {}, optional={cls: inventory_st for cls in CLASSES})

world_st = st.dictionaries(st.sampled_from(['p1', 'p2', 'p3']), provider_st,
                           min_size=1, max_size=3)

shape_st = st.dictionaries(st.sampled_from(CLASSES), st.integers(1, 3),
                           min_size=1)

affinity_st = st.sampled_from([None, True, False])


@st.composite
def scenario(draw):
    invs = draw(world_st)
    bookings = {p: {cls: draw(bookings_st) for cls in CLASSES}
                for p in invs}
    start = draw(st.integers(0, 26))
    end = start + draw(st.integers(1, 10))
    return invs, bookings, start, end


# -- properties ---------------------------------------------------------------

@PROPERTY
@given(bookings_st, st.integers(0, 30), st.integers(1, 12))
def test_peak_matches_brute_force(bookings, start, length):
    end = start + length
    assert cap.peak(bookings, start, end) == brute_peak(bookings, start, end)
    # the segments cover the window and say the usage of each second
    segments = cap.usage(bookings, start, end)
    assert segments[0][0] == start and segments[-1][1] == end
    for seg_start, seg_end, amount in segments:
        for t in range(seg_start, seg_end):
            assert brute_usage(bookings, t) == amount


@PROPERTY
@given(bookings_st, st.integers(0, 30), st.integers(1, 12),
       st.integers(-1, 12))
def test_first_excess_matches_brute_force(bookings, start, length, limit):
    end = start + length
    expected = next(((t, brute_usage(bookings, t))
                     for t in range(start, end)
                     if brute_usage(bookings, t) > limit), None)
    assert cap.first_excess(bookings, start, end, limit) == expected


@PROPERTY
@given(scenario(), shape_st)
def test_units_fit_is_the_most_brute_force_places(world, shape):
    invs, bookings, start, end = world
    for provider in invs:
        n = cap.provider_fit(invs[provider], bookings[provider], shape,
                             start, end)
        one = {provider: invs[provider]}
        assert n == 0 or brute_valid(one, bookings, shape, {provider: n},
                                     start, end)
        assert not brute_valid(one, bookings, shape, {provider: n + 1},
                               start, end)


@PROPERTY
@given(scenario(), shape_st, st.integers(1, 4), affinity_st)
def test_plan_places_exactly_when_brute_force_can(world, shape, count,
                                                  affinity):
    invs, bookings, start, end = world
    fits = {p: cap.provider_fit(invs[p], bookings[p], shape, start, end)
            for p in invs}
    placed = cap.plan(fits, count, affinity)
    possible = brute_fits(invs, bookings, shape, count, affinity, start, end)
    assert (placed is not None) == possible
    assert (cap.total_fit(fits, affinity) >= count) == possible
    if placed is not None:
        assert sum(placed.values()) == count
        assert brute_valid(invs, bookings, shape, placed, start, end)
        if affinity is True:
            assert len(placed) == 1
        if affinity is False:
            assert set(placed.values()) == {1}


@PROPERTY
@given(scenario(), shape_st, st.integers(1, 4), affinity_st,
       st.sampled_from([(1,), (1, 1), (2,)]))
def test_plan_in_order_places_exactly_when_brute_force_can(
        world, shape, count, affinity, chunks):
    invs, bookings, start, end = world
    fits = {p: cap.provider_fit(invs[p], bookings[p], shape, start, end)
            for p in invs}
    placed = cap.plan_in_order(fits, count, affinity, chunks)
    assert (placed is not None) == brute_fits(invs, bookings, shape, count,
                                              affinity, start, end)
    if placed is not None:
        assert brute_valid(invs, bookings, shape, placed, start, end)
        # within the first prefix that can hold the units
        ordered = sorted(invs)
        for bound in itertools.accumulate(chunks):
            prefix = {p: invs[p] for p in ordered[:bound]}
            if brute_fits(prefix, bookings, shape, count, affinity, start,
                          end):
                assert set(placed) <= set(prefix)
                break


@PROPERTY
@given(scenario(), shape_st, st.integers(1, 3), affinity_st,
       st.integers(1, 6), st.one_of(st.none(), st.integers(10, 40)))
def test_earliest_window_matches_brute_force(world, shape, count, affinity,
                                             duration, latest_end):
    invs, bookings, earliest, _end = world
    horizon = latest_end if latest_end is not None else 40
    expected = next(
        (t for t in range(earliest, horizon - duration + 1)
         if brute_fits(invs, bookings, shape, count, affinity, t,
                       t + duration)), None)
    found = cap.earliest_window(invs, bookings, shape, count, duration,
                                earliest, latest_end, affinity)
    if latest_end is None and expected is None:
        # past every booking everything is free: the search says so
        # beyond the brute force's horizon
        assert found is None or found >= horizon - duration
    else:
        assert found == expected


def brute_units(inv, rows, shape, start, end):
    """The most units of ``shape`` one provider holds over ``[start,
    end)``, second by second."""
    one = {'p': inv}
    n = 0
    while brute_valid(one, {'p': rows}, shape, {'p': n + 1}, start, end):
        n += 1
    return n


@PROPERTY
@given(scenario(), shape_st, affinity_st, st.integers(1, 6),
       st.one_of(st.none(), st.integers(10, 40)), st.data())
def test_sweep_counts_every_start_it_tries_as_brute_force(
        world, shape, affinity, duration, latest_end, data):
    invs, bookings, earliest, _end = world
    # providers with nothing booked after earliest may be handed over as
    # idle counts instead: the same answers
    free = sorted(p for p in invs
                  if not any(b.end > earliest for rows in
                             bookings[p].values() for b in rows))
    moved = data.draw(st.sets(st.sampled_from(free)) if free else
                      st.just(set()))
    idle = cap.idle_fits({p: invs[p] for p in moved}, shape)
    changing = {p: invs[p] for p in invs if p not in moved}
    seen = list(cap.sweep(idle, changing, bookings, shape, duration,
                          earliest, latest_end, affinity))
    starts = [t for t, _units in seen]
    assert starts == sorted(set(starts))
    if latest_end is None or earliest + duration <= latest_end:
        assert starts[0] == earliest
    for t, units in seen:
        assert latest_end is None or t + duration <= latest_end
        fits = {p: brute_units(invs[p], bookings[p], shape, t,
                               t + duration) for p in invs}
        assert units == cap.total_fit(fits, affinity)
    # and no start in between does better than the last one tried
    for (t, units), nxt in zip(seen, starts[1:] + [None]):
        for s in range(t + 1, nxt if nxt is not None else t + 1):
            fits = {p: brute_units(invs[p], bookings[p], shape, s,
                                   s + duration) for p in invs}
            assert cap.total_fit(fits, affinity) <= units


@PROPERTY
@given(world_st, shape_st)
def test_idle_fits_counts_providers_by_units(invs, shape):
    expected = {}
    for held in invs.values():
        n = brute_units(held, {}, shape, 0, 1)
        if n:
            expected[n] = expected.get(n, 0) + 1
    assert cap.idle_fits(invs, shape) == expected


def test_sweep_tally_keeps_the_most_on_one_provider():
    tally = cap._Tally({3: 2, 5: 1})
    assert (tally.total(None), tally.total(True), tally.total(False)) == \
        (11, 5, 3)
    tally.remove(5)
    tally.add(4)
    assert (tally.total(None), tally.total(True), tally.total(False)) == \
        (10, 4, 3)
    tally.remove(4)
    tally.remove(3, 2)
    assert (tally.total(None), tally.total(True), tally.total(False)) == \
        (0, 0, 0)
    with pytest.raises(ValueError):
        tally.remove(3)


@PROPERTY
@given(st.dictionaries(st.sampled_from(['p1', 'p2', 'p3', 'p4', 'p5']),
                       st.integers(0, 5)), affinity_st)
def test_count_fit_is_total_fit_of_the_counts(fits, affinity):
    counts = {}
    for units in fits.values():
        counts[units] = counts.get(units, 0) + 1
    assert cap.count_fit(counts, affinity) == cap.total_fit(fits, affinity)
    tally = cap._Tally(counts)
    assert tally.total(affinity) == cap.total_fit(fits, affinity)


@PROPERTY
@given(scenario(), shape_st)
def test_one_unit_sweep_plans_as_the_exact_fits(world, shape):
    # bounds from the sums and the largest bookings, then the exact fit of
    # the providers one_unit_sweep names: the same plan of one unit
    invs, bookings, start, end = world
    exact, bounds = {}, {}
    for p, held in invs.items():
        overlapping = {cls: [b for b in rows
                             if b.start < end and b.end > start]
                       for cls, rows in bookings[p].items()}
        exact[p] = cap.provider_fit(held, overlapping, shape, start, end)
        low, high = bounds[p] = cap.fit_bounds(
            held,
            {c: sum(b.amount for b in r) for c, r in overlapping.items()},
            {c: max((b.amount for b in r), default=0)
             for c, r in overlapping.items()}, shape)
        assert low <= exact[p] <= high
    known, needed = cap.one_unit_sweep(bounds)
    assert not set(known) & set(needed) and set(known) | set(needed) == set(
        invs)
    fits = dict(known, **{p: exact[p] for p in needed})
    for affinity in (None, True, False):
        assert cap.plan(fits, 1, affinity) == cap.plan(exact, 1, affinity)
    assert cap.total_fit(fits, True) >= 1 or cap.total_fit(exact, True) == 0
