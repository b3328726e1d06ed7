"""The capacity ledger's SQL (climate.db.ledger) on SQLite: booking and its
re-check, whole providers against slots, inventory changes, the search
against the pure placement rule, and bounded statement counts.  The
functional tests run the concurrency proof on MariaDB and PostgreSQL."""

import collections
import datetime
import random
import uuid

from oslo_config import cfg
import pytest
import sqlalchemy as sa

from climate.db import api as db_api
from climate.db.ledger import availability
from climate.db.ledger import booking
from climate.db.ledger import inventory
from climate.db.ledger import slot_search
from climate.db.ledger import unit_search
from climate.db.ledger import windows
from climate.db import models
from climate import exceptions
from climate.scheduling import capacity

CONF = cfg.CONF
T0 = datetime.datetime(2090, 1, 1)
H = datetime.timedelta(hours=1)
R = booking.Request
HOST = booking.WHOLE
KIND = inventory.COMPUTE_HOST


def at(hours):
    return T0 + hours * H


def reservation(ctx):
    """A lease and a reservation row to hang bookings on: ids."""
    lease_id, res_id = str(uuid.uuid4()), str(uuid.uuid4())
    with db_api.writer(ctx) as session:
        session.execute(sa.insert(models.Lease), [dict(
            id=lease_id, name=lease_id, project_id='p', start_date=T0,
            end_date=T0, status='PENDING', created_at=T0)])
        session.execute(sa.insert(models.Reservation), [dict(
            id=res_id, lease_id=lease_id, resource_type='virtual:instance',
            status='pending', params={}, created_at=T0)])
    return lease_id, res_id


def host(ctx, name, vcpus=8, memory=16384, disk=100, ratio=1.0, **extra):
    invs = {HOST: {'total': 1},
            'VCPU': dict({'total': vcpus, 'allocation_ratio': ratio},
                         **extra),
            'MEMORY_MB': {'total': memory}, 'DISK_GB': {'total': disk}}
    booking.run(ctx, inventory.set_inventory, name, KIND, invs)


def book(ctx, requests, start, end):
    lease_id, res_id = reservation(ctx)
    booking.run(ctx, booking.book, res_id, lease_id, requests, start, end)
    return res_id


def held(ctx, res_id):
    with db_api.reader(ctx) as session:
        return booking.bookings_of(session, res_id)


# -- book ---------------------------------------------------------------------

def test_book_within_capacity_and_conflict_names_provider_class_instant(ctx):
    host(ctx, 'h1', vcpus=8)
    book(ctx, [R('h1', 'VCPU', 6)], at(0), at(4))
    book(ctx, [R('h1', 'VCPU', 2)], at(2), at(6))
    # hour 4-6 has 6 free: fine; 3 from hour 3 meets 8 booked at hour 3
    book(ctx, [R('h1', 'VCPU', 6)], at(4), at(5))
    with pytest.raises(exceptions.Conflict) as err:
        book(ctx, [R('h1', 'VCPU', 1)], at(3), at(5))
    assert err.value.code == 409
    assert err.value.kwargs['provider'] == 'h1'
    assert err.value.kwargs['resource_class'] == 'VCPU'
    assert err.value.kwargs['at'] == at(3)
    assert str(err.value) == (
        'Conflict: not enough VCPU on provider h1 at 2090-01-01 03:00:00 '
        'UTC: 8 of 8 are booked then and 1 more are asked')


def _generations(ctx):
    with db_api.reader(ctx) as session:
        return {(row.provider_id, row.resource_class): row.generation
                for row in session.execute(sa.select(
                    models.LedgerInventory.provider_id,
                    models.LedgerInventory.resource_class,
                    models.LedgerInventory.generation))}


def test_every_writer_of_a_providers_capacity_bumps_its_generation(
        ctx, monkeypatch):
    # the write two bookers of a provider on two Galera nodes both make,
    # so that certification fails one of them: every class of each
    # provider touched, none of the others
    host(ctx, 'h1', vcpus=4)
    host(ctx, 'h2', vcpus=4)
    host(ctx, 'h3', vcpus=4)
    before = _generations(ctx)
    lease_id, res_id = reservation(ctx)
    book(ctx, [R('h1', 'VCPU', 1), R('h2', HOST, 1)], at(0), at(1))
    after = _generations(ctx)
    assert {k for k in after if after[k] != before[k]} == {
        k for k in after if k[0] in ('h1', 'h2')}
    assert all(after[k] == before[k] + 1 for k in after if k[0] != 'h3')
    # a move re-checks under the same write
    with db_api.writer(ctx) as session:
        booking.book(session, res_id, lease_id, [R('h3', 'VCPU', 1)], at(0),
                     at(1))
    with db_api.writer(ctx) as session:
        booking.move(session, res_id, at(1), at(2))
    moved = _generations(ctx)
    assert all(moved[k] == after[k] + 2 for k in moved if k[0] == 'h3')
    # an inventory change too
    with db_api.writer(ctx) as session:
        inventory.set_inventory(session, 'h2', inventory.COMPUTE_HOST, {
            cls: inv for cls, inv in inventory.inventories_of(
                session, ['h2'])['h2'].items()})
    assert all(_generations(ctx)[k] == moved[k] + 1 for k in moved
               if k[0] == 'h2')
    # the blind check of the concurrency tests writes nothing
    monkeypatch.setattr(booking, 'LOCKING', False)
    blind = _generations(ctx)
    book(ctx, [R('h1', 'VCPU', 1)], at(3), at(4))
    assert _generations(ctx) == blind


def test_book_with_providers_locked_and_found_free_reads_nothing_again(ctx):
    host(ctx, 'h1', vcpus=4)
    host(ctx, 'h2', vcpus=4)
    lease_id, res_id = reservation(ctx)
    with db_api.writer(ctx) as session:
        locked = booking.lock(session, ['h1'])
        assert not booking.busy_providers(session, ['h1'], at(0), at(1))
        # the lock and the bookings read are not repeated: one insert
        # (and the lease's project, read once per transaction)
        assert _statements(ctx, lambda: booking.book(
            session, res_id, lease_id, [R('h1', HOST, 1)], at(0), at(1),
            locked=locked)) == 2
        # more than the provider has is refused all the same
        with pytest.raises(exceptions.Conflict, match='not enough VCPU'):
            booking.book(session, res_id, lease_id, [R('h1', 'VCPU', 5)],
                         at(2), at(3), locked=locked)
        # a provider not among the locked ones is locked (its generation
        # bumped) and read
        assert _statements(ctx, lambda: booking.book(
            session, res_id, lease_id, [R('h1', 'VCPU', 1),
                                        R('h2', 'VCPU', 1)],
            at(2), at(3), locked=locked)) == 5
    assert {(p, c) for p, c, *_rest in held(ctx, res_id)} == {
        ('h1', HOST), ('h1', 'VCPU'), ('h1', 'MEMORY_MB'), ('h1', 'DISK_GB'),
        ('h2', 'VCPU')}


def test_a_refused_booking_writes_nothing(ctx):
    host(ctx, 'h1', vcpus=4)
    host(ctx, 'h2', vcpus=4)
    lease_id, res_id = reservation(ctx)
    with pytest.raises(exceptions.Conflict):
        booking.run(ctx, booking.book, res_id, lease_id,
                    [R('h1', 'VCPU', 2), R('h2', 'VCPU', 5)], at(0), at(1))
    assert held(ctx, res_id) == []


def test_allocation_ratio_and_reserved_make_usable_capacity(ctx):
    booking.run(ctx, inventory.set_inventory, 'h1', KIND, {
        'VCPU': {'total': 10, 'reserved': 2, 'allocation_ratio': 1.5}})
    book(ctx, [R('h1', 'VCPU', 12)], at(0), at(1))           # (10-2)*1.5
    with pytest.raises(exceptions.Conflict):
        book(ctx, [R('h1', 'VCPU', 1)], at(0), at(1))


def test_unknown_class_or_provider_and_bad_amounts(ctx):
    host(ctx, 'h1')
    with pytest.raises(exceptions.Conflict, match='no FLOATING_IP'):
        book(ctx, [R('h1', 'FLOATING_IP', 1)], at(0), at(1))
    with pytest.raises(exceptions.Conflict, match='provider h9 has no'):
        book(ctx, [R('h9', 'VCPU', 1)], at(0), at(1))
    for bad in (-1, 1.5, True, '2'):
        with pytest.raises(exceptions.InvalidInput):
            book(ctx, [R('h1', 'VCPU', bad)], at(0), at(1))
    with pytest.raises(exceptions.InvalidInput):
        book(ctx, [R('h1', HOST, 2)], at(0), at(1))
    with pytest.raises(exceptions.InvalidInput):
        book(ctx, [R('h1', 'VCPU', 1)], at(1), at(1))


def test_whole_host_and_slots_exclude_each_other_both_ways(ctx):
    host(ctx, 'h1', vcpus=8, memory=1000, disk=10)
    whole = book(ctx, [R('h1', HOST, 1)], at(0), at(4))
    assert held(ctx, whole) == [
        ('h1', 'DISK_GB', 10, at(0), at(4)), ('h1', HOST, 1, at(0), at(4)),
        ('h1', 'MEMORY_MB', 1000, at(0), at(4)),
        ('h1', 'VCPU', 8, at(0), at(4))]
    with pytest.raises(exceptions.Conflict) as err:
        book(ctx, [R('h1', 'MEMORY_MB', 1)], at(3), at(5))
    assert err.value.kwargs['at'] == at(3)
    # a slot after the whole booking, then no whole booking over it
    book(ctx, [R('h1', 'VCPU', 1)], at(4), at(6))
    with pytest.raises(exceptions.Conflict) as err:
        book(ctx, [R('h1', HOST, 1)], at(5), at(7))
    assert err.value.kwargs['resource_class'] == 'VCPU'
    book(ctx, [R('h1', HOST, 1)], at(6), at(7))


def test_release_and_cascade(ctx):
    host(ctx, 'h1', vcpus=2)
    res_id = book(ctx, [R('h1', 'VCPU', 2)], at(0), at(1))
    assert booking.run(ctx, booking.release, res_id) == 1
    res_id = book(ctx, [R('h1', 'VCPU', 2)], at(0), at(1))
    with db_api.writer(ctx) as session:
        session.execute(sa.delete(models.Reservation).where(
            models.Reservation.id == res_id))
    assert held(ctx, res_id) == []
    book(ctx, [R('h1', 'VCPU', 2)], at(0), at(1))


def test_move_and_resize_recheck_without_their_own_bookings(ctx):
    host(ctx, 'h1', vcpus=8)
    mine = book(ctx, [R('h1', 'VCPU', 6)], at(0), at(4))
    book(ctx, [R('h1', 'VCPU', 4)], at(6), at(8))
    # overlapping its own old window is fine
    booking.run(ctx, booking.move, mine, at(2), at(6))
    assert held(ctx, mine) == [('h1', 'VCPU', 6, at(2), at(6))]
    with pytest.raises(exceptions.Conflict) as err:
        booking.run(ctx, booking.move, mine, at(4), at(7))
    assert err.value.kwargs['at'] == at(6)
    assert held(ctx, mine) == [('h1', 'VCPU', 6, at(2), at(6))]
    booking.run(ctx, booking.resize, mine, [R('h1', 'VCPU', 8)], at(2), at(6))
    with pytest.raises(exceptions.Conflict):
        booking.run(ctx, booking.resize, mine, [R('h1', 'VCPU', 5)], at(2),
                    at(7))
    assert held(ctx, mine) == [('h1', 'VCPU', 8, at(2), at(6))]


def test_move_keeps_a_whole_booking_whole(ctx):
    host(ctx, 'h1', vcpus=4, memory=10, disk=1)
    whole = book(ctx, [R('h1', HOST, 1)], at(0), at(2))
    booking.run(ctx, booking.move, whole, at(5), at(9))
    assert {r[1]: r[2] for r in held(ctx, whole)} == {
        HOST: 1, 'VCPU': 4, 'MEMORY_MB': 10, 'DISK_GB': 1}
    assert {r[3] for r in held(ctx, whole)} == {at(5)}


# -- inventory ----------------------------------------------------------------

def test_lowering_below_a_future_booking_is_refused_naming_when(ctx):
    host(ctx, 'h1', vcpus=8)
    book(ctx, [R('h1', 'VCPU', 3)], at(0), at(10))
    book(ctx, [R('h1', 'VCPU', 3)], at(5), at(6))
    with pytest.raises(exceptions.Conflict) as err:
        booking.run(ctx, inventory.set_inventory, 'h1', KIND, {
            HOST: {'total': 1}, 'VCPU': {'total': 5},
            'MEMORY_MB': {'total': 16384}, 'DISK_GB': {'total': 100}},
            now=at(1))
    assert str(err.value) == (
        'Conflict: the usable VCPU of provider h1 cannot become 5: 6 are '
        'booked at 2090-01-01 05:00:00 UTC')
    # a past instant does not count
    booking.run(ctx, inventory.set_inventory, 'h1', KIND, {
        HOST: {'total': 1}, 'VCPU': {'total': 3},
        'MEMORY_MB': {'total': 16384}, 'DISK_GB': {'total': 100}},
        now=at(6))
    with pytest.raises(exceptions.Conflict, match='cannot lose its VCPU'):
        booking.run(ctx, inventory.set_inventory, 'h1', KIND,
                    {HOST: {'total': 1}}, now=at(6))


def test_whole_bookings_follow_the_inventory(ctx):
    host(ctx, 'h1', vcpus=8, memory=10, disk=1)
    whole = book(ctx, [R('h1', HOST, 1)], at(0), at(4))
    booking.run(ctx, inventory.set_inventory, 'h1', KIND, {
        HOST: {'total': 1}, 'VCPU': {'total': 16},
        'MEMORY_MB': {'total': 10}, 'VOLUME_GB': {'total': 5}}, now=at(1))
    assert {r[1]: r[2] for r in held(ctx, whole)} == {
        HOST: 1, 'VCPU': 16, 'MEMORY_MB': 10, 'VOLUME_GB': 5}
    # the grown capacity is still the whole booking's
    with pytest.raises(exceptions.Conflict):
        book(ctx, [R('h1', 'VCPU', 1)], at(1), at(2))
    with pytest.raises(exceptions.Conflict, match='cannot lose its HOST'):
        booking.run(ctx, inventory.set_inventory, 'h1', KIND,
                    {'VCPU': {'total': 16}}, now=at(1))
    # once it is over, the host may change freely
    booking.run(ctx, inventory.set_inventory, 'h1', KIND,
                {'VCPU': {'total': 2}}, now=at(4))


def test_inventory_input_is_checked(ctx):
    bad = [{'total': -1}, {'total': 'x'}, {'total': 4, 'reserved': -1},
           {'total': 4, 'allocation_ratio': 0},
           {'total': 4, 'allocation_ratio': 'a'},
           {'total': 4, 'min_unit': 3, 'max_unit': 2},
           {'total': 4, 'step_size': 0}]
    for values in bad:
        with pytest.raises(exceptions.InvalidInput):
            booking.run(ctx, inventory.set_inventory, 'h1', KIND,
                        {'VCPU': values})
    with pytest.raises(exceptions.InvalidInput):
        booking.run(ctx, inventory.set_inventory, 'h1', KIND,
                    {HOST: {'total': 2}})
    host(ctx, 'h1')
    with pytest.raises(exceptions.InvalidInput, match='is a compute_host'):
        booking.run(ctx, inventory.set_inventory, 'h1', 'volume_pool',
                    {'VOLUME_GB': {'total': 1}})
    with db_api.reader(ctx) as session:
        assert inventory.inventories_of(session, ['h1'])['h1']['VCPU'] == \
            capacity.Inventory(8, 0, 1.0, 1, 8, 1)


def test_delete_provider_refused_while_booked(ctx):
    host(ctx, 'h1')
    res_id = book(ctx, [R('h1', 'VCPU', 1)], at(0), at(3))
    with pytest.raises(exceptions.Conflict) as err:
        booking.run(ctx, inventory.delete_provider, 'h1', now=at(1))
    assert res_id in str(err.value)
    assert 'booked until 2090-01-01 03:00:00 UTC' in str(err.value)
    assert booking.run(ctx, inventory.delete_provider, 'h1', now=at(3)) == 4


# -- search -------------------------------------------------------------------

SHAPE = {'VCPU': 2, 'MEMORY_MB': 1024}


def test_place_best_fit_affinity_and_anti_affinity(ctx):
    for name, vcpus in (('h1', 8), ('h2', 4), ('h3', 16), ('h4', 2)):
        host(ctx, name, vcpus=vcpus)
    book(ctx, [R('h3', 'VCPU', 12)], at(0), at(10))     # 2 slots left

    def place(count, affinity=None, **kw):
        lease_id, res_id = reservation(ctx)
        return booking.run(ctx, slot_search.place, res_id, lease_id, SHAPE,
                           count, at(1), at(2), affinity, **kw)

    # fewest units first: h4 (1), h2 (2) -- h3 (2) loses the tie on id
    assert place(3) == {'h4': 1, 'h2': 2}
    # now h3 (2), h1 (4)
    assert place(2, affinity=True) == {'h3': 2}
    # only h1 has room left
    with pytest.raises(exceptions.Conflict) as err:
        place(2, affinity=False)
    assert 'on distinct providers' in str(err.value)
    with pytest.raises(exceptions.Conflict) as err:
        place(5, affinity=True)
    assert 'on one provider' in str(err.value)
    with pytest.raises(exceptions.Conflict):
        place(1, providers=['h2', 'h3', 'h4'])
    assert place(4, affinity=True, providers=['h1']) == {'h1': 4}


def test_place_refused_says_how_many_fit(ctx):
    host(ctx, 'h1', vcpus=4)
    lease_id, res_id = reservation(ctx)
    for bad_count in (0, -1, 1.5, True):
        with pytest.raises(exceptions.InvalidInput):
            booking.run(ctx, slot_search.place, res_id, lease_id, SHAPE,
                        bad_count, at(0), at(1))
        with pytest.raises(exceptions.InvalidInput):
            booking.run(ctx, unit_search.place_units, res_id, lease_id,
                        'FLOATING_IP', bad_count, at(0), at(1))
    for bad_shape in ({}, {'VCPU': 0}, {'HOST': 1, 'VCPU': 1}):
        with pytest.raises(exceptions.InvalidInput):
            booking.run(ctx, slot_search.place, res_id, lease_id, bad_shape, 1,
                        at(0), at(1))
    with pytest.raises(exceptions.Conflict) as err:
        booking.run(ctx, slot_search.place, res_id, lease_id, SHAPE, 3, at(0),
                    at(1))
    assert str(err.value) == (
        'Conflict: 2 unit(s) of {MEMORY_MB: 1024, VCPU: 2} fit from '
        '2090-01-01 00:00:00 to 2090-01-01 01:00:00 UTC; 3 asked')
    assert held(ctx, res_id) == []


def test_place_refused_after_its_rounds_counts_the_lost_providers_full(
        ctx, monkeypatch):
    """Each provider chosen is filled by a concurrent booker between the
    search and the lock: after PLACE_ROUNDS rounds the refusal's count
    is the search's (the lost ones full, the last round's too), and
    names them, so that no refusal says the units it refused fit."""
    for name in ('h1', 'h2', 'h3', 'h4'):
        host(ctx, name, vcpus=4)
    other_lease, other_res = reservation(ctx)
    read = booking.bookings_over

    def concurrent(session, provider_ids, start, end, *args):
        # committed by another manager once the search had read
        session.execute(sa.insert(models.LedgerBooking), [dict(
            id=str(uuid.uuid4()), reservation_id=other_res,
            lease_id=other_lease, project_id='p', provider_id=p,
            resource_class='VCPU', amount=4, start_date=start,
            end_date=end, span_level=windows.span_level(start, end))
            for p in provider_ids])
        return read(session, provider_ids, start, end, *args)

    monkeypatch.setattr(booking, 'bookings_over', concurrent)
    lease_id, res_id = reservation(ctx)
    with pytest.raises(exceptions.Conflict) as err:
        booking.run(ctx, slot_search.place, res_id, lease_id, SHAPE, 1, at(0),
                    at(1))
    assert err.value.kwargs['taken'] == ['h1', 'h2', 'h3']
    # h4, never reached, is the only one left
    assert err.value.kwargs['available'] == 2
    assert str(err.value).endswith(
        '; 1 asked (3 provider(s) taken meanwhile by concurrent bookers)')


def test_place_units_refused_after_its_rounds_counts_none_it_lost(ctx):
    """Providers refused under the lock (here: nothing usable) are not
    counted free by the refusal once the rounds are spent."""
    for name in ('a1', 'a2', 'a3', 'a4'):
        booking.run(ctx, inventory.set_inventory, name, 'floatingip',
                    {'FLOATING_IP': {'total': 1, 'reserved': int(
                       name != 'a4')}})
    lease_id, res_id = reservation(ctx)
    with pytest.raises(exceptions.Conflict) as err:
        booking.run(ctx, unit_search.place_units, res_id, lease_id,
                    'FLOATING_IP', 1, at(0), at(1),
                    providers=['a1', 'a2', 'a3', 'a4'], kind='floatingip')
    assert err.value.kwargs['available'] == 0
    assert err.value.kwargs['taken'] == ['a1', 'a2', 'a3']
    assert str(err.value).startswith('Conflict: 0 provider(s) are free')


def test_place_honours_unit_bounds_and_kind(ctx):
    host(ctx, 'h1', vcpus=32, max_unit=1)
    host(ctx, 'h2', vcpus=32)
    booking.run(ctx, inventory.set_inventory, 'pool', 'volume_pool',
                {'VCPU': {'total': 64}, 'MEMORY_MB': {'total': 99999}})
    lease_id, res_id = reservation(ctx)
    assert booking.run(ctx, slot_search.place, res_id, lease_id, SHAPE, 16,
                       at(0), at(1), kind=KIND) == {'h2': 16}


def _random_world(ctx, rng, providers=8, bookings=40):
    names = ['p%02d' % i for i in range(providers)]
    for name in names:
        invs = {'VCPU': {'total': rng.randint(0, 12),
                         'reserved': rng.randint(0, 2),
                         'allocation_ratio': rng.choice([1.0, 1.5, 2.0]),
                         'max_unit': rng.choice([None, 2, 4])},
                'MEMORY_MB': {'total': rng.randint(0, 8)}}
        if rng.random() < 0.3:
            invs[HOST] = {'total': 1}
        if invs['VCPU']['max_unit'] is not None and \
                invs['VCPU']['max_unit'] > invs['VCPU']['total']:
            invs['VCPU']['max_unit'] = None
        booking.run(ctx, inventory.set_inventory, name, KIND, invs)
    with db_api.reader(ctx) as session:
        inventories = inventory.inventories_of(session)
    for _ in range(bookings):
        name = rng.choice(names)
        start = at(rng.randint(0, 30))
        end = start + H * rng.choice([1, 2, 5, 300, 2000])
        if HOST in inventories[name] and rng.random() < 0.3:
            requests = [R(name, HOST, 1)]
        else:
            requests = [R(name, 'VCPU', rng.randint(1, 4)),
                        R(name, 'MEMORY_MB', rng.randint(0, 3))]
        try:
            book(ctx, requests, start, end)
        except exceptions.Conflict:
            pass
    return names


def _all_bookings(ctx):
    with db_api.reader(ctx) as session:
        rows = session.execute(sa.select(
            models.LedgerBooking.provider_id,
            models.LedgerBooking.resource_class,
            models.LedgerBooking.start_date,
            models.LedgerBooking.end_date,
            models.LedgerBooking.amount)).all()
        inventories = inventory.inventories_of(session)
    booked = {}
    for provider, cls, start, end, amount in rows:
        booked.setdefault(provider, {}).setdefault(cls, []).append(
            capacity.Booking(start, end, amount))
    return inventories, booked


def _never_over(ctx):
    """Brute force: at every booking endpoint, no (provider, class) holds
    more than its usable capacity."""
    inventories, booked = _all_bookings(ctx)
    for provider, classes in booked.items():
        for cls, rows in classes.items():
            usable = capacity.usable(inventories[provider][cls])
            for instant in {r.start for r in rows}:
                assert sum(r.amount for r in rows
                           if r.start <= instant < r.end) <= usable


def test_search_agrees_with_the_pure_rule_over_every_provider(
        ctx, monkeypatch):
    # small prefixes: the search goes through several rounds
    monkeypatch.setattr(capacity, 'SEARCH_CHUNKS', (2, 3))
    rng = random.Random(17)
    names = _random_world(ctx, rng)
    outcomes = []
    for trial in range(60):
        shape = {'VCPU': rng.randint(1, 3), 'MEMORY_MB': rng.randint(0, 2)}
        count = rng.randint(1, 5)
        affinity = rng.choice([None, True, False])
        start = at(rng.randint(0, 40))
        end = start + H * rng.choice([1, 3, 24])
        allowed = sorted(rng.sample(names, 5)) if trial % 3 == 0 else None
        inventories, booked = _all_bookings(ctx)
        expected = capacity.plan_in_order(
            {p: capacity.provider_fit(inventories[p], booked.get(p, {}),
                                      shape, start, end)
             for p in inventories if allowed is None or p in allowed},
            count, affinity, chunks=(2, 3))
        lease_id, res_id = reservation(ctx)
        try:
            got = booking.run(ctx, slot_search.place, res_id, lease_id, shape,
                              count, start, end, affinity, allowed)
        except exceptions.Conflict:
            got = None
        assert got == expected, (trial, shape, count, affinity)
        outcomes.append(got is not None)
        if got:
            assert sorted(held(ctx, res_id)) == sorted(
                (p, cls, units * amount, start, end)
                for p, units in got.items()
                for cls, amount in shape.items() if amount)
    # both answers were exercised
    assert 10 <= sum(outcomes) <= 50, sum(outcomes)
    _never_over(ctx)


@pytest.mark.parametrize('named', [True, False])
def test_place_units_takes_the_lowest_addresses_free_of_the_class(
        ctx, monkeypatch, named):
    """One unit per provider of capacity one: a booking of another class
    on the provider does not make it busy, one of the class does; the
    lowest free ids win; a provider whose capacity is not one is
    re-checked under the lock, never overbooked.  Candidates named (a
    prefix of them at a time) or all of the kind."""
    monkeypatch.setattr(unit_search, 'UNIT_CHUNKS', (1, 2))
    for name in ('a1', 'a2', 'a3', 'a4'):
        booking.run(ctx, inventory.set_inventory, name, 'floatingip',
                    {'FLOATING_IP': {'total': 1}, 'DISK_GB': {'total': 9}})
    # a4 offers nothing usable: reserved whole
    booking.run(ctx, inventory.set_inventory, 'a4', 'floatingip',
                {'FLOATING_IP': {'total': 1, 'reserved': 1}})
    book(ctx, [R('a1', 'FLOATING_IP', 1)], at(0), at(2))
    book(ctx, [R('a2', 'DISK_GB', 9)], at(0), at(9))
    lease_id, res_id = reservation(ctx)
    assert booking.run(ctx, unit_search.place_units, res_id, lease_id,
                       'FLOATING_IP', 2, at(1), at(3),
                       providers=['a4', 'a3', 'a2', 'a1'] if named else None,
                       kind='floatingip') == ['a2', 'a3']
    lease_id, res_id = reservation(ctx)
    with pytest.raises(exceptions.Conflict, match='0 provider'):
        # a1 is busy at hour 1, a2 and a3 taken, a4 refused by the lock
        booking.run(ctx, unit_search.place_units, res_id, lease_id,
                    'FLOATING_IP', 1, at(1), at(3),
                    providers=['a4', 'a1', 'a2', 'a3'], kind='floatingip')
    assert held(ctx, res_id) == []
    assert booking.run(ctx, unit_search.place_units, res_id, lease_id,
                       'FLOATING_IP', 1, at(2), at(3),
                       providers=['a4', 'a1'], kind='floatingip') == ['a1']
    with pytest.raises(exceptions.InvalidInput):
        booking.run(ctx, unit_search.place_units, res_id, lease_id, HOST, 1,
                    at(5), at(6))
    _never_over(ctx)


def test_free_units_agrees_with_the_overlap_read(ctx, monkeypatch):
    """The one-statement read of :func:`unit_search._free_units` (with a limit)
    against the two-statement overlap read, over random bookings of
    capacity-one providers and of a provider of capacity two."""
    rng = random.Random(11)
    names = ['u%d' % i for i in range(6)]
    for name in names:
        booking.run(ctx, inventory.set_inventory, name, 'floatingip',
                    {'FLOATING_IP': {'total': 1}})
    booking.run(ctx, inventory.set_inventory, 'wide', 'floatingip',
                {'FLOATING_IP': {'total': 2}})
    for _ in range(60):
        start = at(rng.randint(0, 200))
        end = start + H * rng.choice([1, 2, 5, 30])
        try:
            book(ctx, [R(rng.choice(names + ['wide']), 'FLOATING_IP', 1)],
                 start, end)
        except exceptions.Conflict:
            pass
    ids = names + ['wide']
    monkeypatch.setattr(unit_search, 'UNIT_CHUNKS', (2, 3))
    for _ in range(80):
        start = at(rng.randint(0, 220))
        end = start + H * rng.choice([1, 3, 24])
        with db_api.reader(ctx) as session:
            limit = rng.randint(1, 8)
            quick = unit_search._free_units(session, ids, start, end,
                                            'floatingip', 'FLOATING_IP', limit)
            exact = unit_search._free_of(session, ids, start, end,
                                         'floatingip', None, 'FLOATING_IP')
        assert quick == exact[:limit], (start, end, limit)
        # the public read, a prefix of the candidates at a time
        with db_api.reader(ctx) as session:
            assert unit_search.free_units(session, list(reversed(ids)),
                                          'FLOATING_IP', start, end,
                                          'floatingip') == exact, (start, end)


def test_window_read_by_level_finds_every_overlapping_booking(ctx):
    rng = random.Random(3)
    host(ctx, 'h1', vcpus=10 ** 6)
    rows = []
    for _ in range(150):
        start = at(rng.randint(0, 2000)) + datetime.timedelta(
            seconds=rng.randint(0, 3599))
        end = start + datetime.timedelta(seconds=rng.choice(
            [1, 2, 3, 59, 3600, 86400 * rng.randint(1, 400)]))
        book(ctx, [R('h1', 'VCPU', 1)], start, end)
        rows.append((start, end))
    for _ in range(80):
        start = at(rng.randint(-10, 2100)) + datetime.timedelta(
            seconds=rng.randint(0, 3599))
        end = start + datetime.timedelta(seconds=rng.choice([1, 60, 7200]))
        with db_api.reader(ctx) as session:
            found = session.execute(sa.select(sa.func.count()).where(
                windows.window(start, end))).scalar()
        assert found == sum(1 for s, e in rows if s < end and e > start)


def _statements(ctx, func):
    seen = []

    def count(*_args):
        seen.append(1)
    engine = db_api.get_engine()
    sa.event.listen(engine, 'before_cursor_execute', count)
    try:
        func()
    finally:
        sa.event.remove(engine, 'before_cursor_execute', count)
    return len(seen)


def test_statements_do_not_grow_with_the_inventory(ctx, monkeypatch):
    # the first two prefixes (4, then 12 hosts) are full: every search
    # goes through all three rounds, whatever the inventory holds
    monkeypatch.setattr(capacity, 'SEARCH_CHUNKS', (4, 8))
    counts = []
    made = 0
    for size in (20, 200):
        for i in range(made, size):
            host(ctx, 'n%03d' % i, vcpus=4)
            if i < 12:
                book(ctx, [R('n%03d' % i, 'VCPU', 4)], at(0), at(5))
        made = size
        for providers in (None, ['n%03d' % i for i in range(size)]):
            lease_id, res_id = reservation(ctx)
            counts.append(_statements(ctx, lambda: booking.run(
                ctx, slot_search.place, res_id, lease_id, SHAPE, 3, at(1),
                at(2), providers=providers)))
            # found in the third round, past the full ones
            assert min(r[0] for r in held(ctx, res_id)) >= 'n012'
    # three rounds of three reads, lock, generation bump, re-check,
    # insert, and the bound of the longest booking read twice, for the
    # search and under the lock (and BEGIN / COMMIT where the driver
    # sends them)
    assert counts[0] == counts[2] and counts[1] == counts[3], counts
    assert max(counts) <= 17, counts


def test_free_capacity_and_earliest_start(ctx):
    host(ctx, 'h1', vcpus=8)
    host(ctx, 'h2', vcpus=4)
    book(ctx, [R('h1', 'VCPU', 6)], at(0), at(5))
    book(ctx, [R('h2', HOST, 1)], at(0), at(3))
    with db_api.reader(ctx) as session:
        view = availability.free_capacity(session, ['h1', 'h2'], at(1), at(2))
        # every provider: the bookings read by the window alone
        assert availability.free_capacity(session, None, at(1), at(2)) == view
        assert availability.free_capacity(session, None, at(1), at(2),
                                          kind='volume_pool') == {}
        assert view['h1']['VCPU'] == {'usable': 8, 'peak': 6, 'free': 2}
        assert view['h2']['VCPU'] == {'usable': 4, 'peak': 4, 'free': 0}
        assert view['h2'][HOST]['free'] == 0
        # four 2-VCPU units: h2 frees up at hour 3
        assert availability.earliest_start(
            session, SHAPE, 3, 2 * H, at(0)) == at(3)
        assert availability.earliest_start(session, SHAPE, 4, H, at(0),
                                           affinity=True) == at(5)
        assert availability.earliest_start(session, SHAPE, 4, H, at(0),
                                           latest_end=at(5),
                                           affinity=True) is None


def _pure_units(inventories, booked, shape, start, end, affinity, allowed):
    return capacity.total_fit(
        {p: capacity.provider_fit(inventories[p], booked.get(p, {}), shape,
                                  start, end)
         for p in inventories if allowed is None or p in allowed}, affinity)


@pytest.mark.parametrize('named_max,sep', [(1000, ','), (2, ','),
                                           (1000, '0')])
def test_outlook_agrees_with_the_pure_functions(ctx, monkeypatch, named_max,
                                                sep):
    # named_max 2: a longer list of providers is read whole and kept in
    # Python; sep '0': every id holds the separator, the profiles are
    # read one row per provider
    monkeypatch.setattr(availability, 'NAMED_MAX', named_max)
    monkeypatch.setattr(availability, '_SEP', sep)
    rng = random.Random(23)
    names = _random_world(ctx, rng, bookings=60)
    inventories, booked = _all_bookings(ctx)
    answers = collections.Counter()
    for trial in range(40):
        shape = {'VCPU': rng.randint(1, 3), 'MEMORY_MB': rng.randint(0, 2)}
        count = rng.randint(1, 6)
        affinity = rng.choice([None, True, False])
        duration = H * rng.choice([1, 3, 24])
        earliest = at(rng.randint(0, 40))
        latest_end = rng.choice([None, earliest + duration * 3,
                                 at(3000)])
        allowed = sorted(rng.sample(names, 5)) if trial % 3 == 0 else None
        subset = {p: inventories[p] for p in inventories
                  if allowed is None or p in allowed}
        expected = capacity.earliest_window(
            subset, booked, shape, count, duration, earliest, latest_end,
            affinity)
        with db_api.reader(ctx) as session:
            outlook = availability.Outlook(session, shape, allowed, KIND)
            assert outlook.most(affinity) == capacity.total_fit(
                {p: capacity.units_fit(held, {
                    c: capacity.usable(i) for c, i in held.items()}, shape)
                 for p, held in subset.items()}, affinity)
            # a window asked before the search, one after it
            first = earliest + H * rng.randint(0, 5)
            assert outlook.units(first, first + duration, affinity) == \
                _pure_units(inventories, booked, shape, first,
                            first + duration, affinity, allowed)
            found = outlook.earliest(count, duration, earliest, latest_end,
                                     affinity)
            assert (found and found[0]) == expected, trial
            if found:
                assert found[1] == _pure_units(
                    inventories, booked, shape, found[0],
                    found[0] + duration, affinity, allowed) >= count
            later = earliest + H * rng.randint(0, 50)
            assert outlook.units(later, later + duration, affinity) == \
                _pure_units(inventories, booked, shape, later,
                            later + duration, affinity, allowed)
            # asked again after reading further, with a nearer end
            assert (outlook.earliest(count, duration, earliest,
                                     earliest + 2 * duration, affinity) or
                    [None])[0] == capacity.earliest_window(
                subset, booked, shape, count, duration, earliest,
                earliest + 2 * duration, affinity)
            assert availability.earliest_start(
                session, shape, count, duration, earliest, latest_end,
                affinity, allowed, KIND) == expected
        answers[expected is None, expected == earliest] += 1
    # found at once, found later and not found were all exercised
    assert len(answers) == 3, answers


def test_outlook_with_no_provider_reads_nothing(ctx):
    host(ctx, 'h1')
    with db_api.reader(ctx) as session:
        seen = _statements(ctx, lambda: (
            availability.Outlook(session, SHAPE, [], KIND).units(at(0), at(1)),
            availability.Outlook(session, SHAPE, [], KIND).earliest(
                1, H, at(0), at(5))))
    assert seen == 0
