"""No overbooking in the capacity ledger: 300 competing bookings from 20
threads -- providers taken whole, explicit amounts, searched slots of a
shape and moves of earlier bookings to other windows, over random
overlapping windows on four shared providers --
leave no instant at which a (provider, class) holds more than its usable
capacity, checked by a brute-force sweep of ``ledger_bookings``; on
MariaDB and PostgreSQL.  The same run with the ledger's lock turned off
does overbook: the check can fail."""

import collections
import concurrent.futures
import datetime
import random
import threading
import time

import pytest

from climate import context
from climate.db import api as db_api
from climate.db.ledger import booking
from climate.db.ledger import inventory
from climate.db.ledger import slot_search
from climate.db import migration
from climate import exceptions
from climate.scheduling import capacity
from climate.tests.functional import concurrency
from climate.tests.functional import ledger_sweep

PROVIDERS = 4
BOOKINGS = 300
THREADS = 20
DEADLINE = 180
T0 = datetime.datetime(2091, 1, 1)
INVENTORY = {capacity.WHOLE: {'total': 1},
             'VCPU': {'total': 16, 'allocation_ratio': 2.0, 'max_unit': 8},
             'MEMORY_MB': {'total': 65536, 'reserved': 4096},
             'DISK_GB': {'total': 400}}
SHAPE = {'VCPU': 4, 'MEMORY_MB': 8192, 'DISK_GB': 40}


def _asks(rng, names):
    """What each of the competing bookers asks: a random kind of booking
    over a random window within two days."""
    asks = []
    for i in range(BOOKINGS):
        start = T0 + datetime.timedelta(minutes=30 * rng.randint(0, 80))
        end = start + datetime.timedelta(hours=rng.randint(1, 10))
        kind = ('whole', 'amounts', 'place', 'move')[i % 4]
        if kind == 'whole':
            what = [rng.choice(names)]
        elif kind == 'amounts':
            name = rng.choice(names)
            what = [booking.Request(name, 'VCPU', rng.randint(1, 12)),
                    booking.Request(name, 'MEMORY_MB',
                                    1024 * rng.randint(1, 24)),
                    booking.Request(name, 'DISK_GB', rng.randint(0, 100))]
        elif kind == 'place':
            what = (rng.randint(1, 6), rng.choice([None, True, False]))
        else:
            # a reservation asked for a little earlier (booked, refused
            # or still being booked by another thread)
            what = max(0, i - rng.randint(1, 40))
        asks.append((kind, what, start, end))
    return asks


def _book(ids, ask, all_ids):
    (lease_id, res_id), (kind, what, start, end) = ids, ask
    ctx = context.admin_context()
    try:
        if kind == 'whole':
            booking.run(ctx, booking.book, res_id, lease_id,
                        [booking.Request(what[0], capacity.WHOLE, 1)], start,
                        end)
        elif kind == 'amounts':
            booking.run(ctx, booking.book, res_id, lease_id, what, start, end)
        elif kind == 'move':
            if not booking.run(ctx, booking.move, all_ids[what][1], start,
                               end):
                return 'nothing to move'
        else:
            count, affinity = what
            booking.run(ctx, slot_search.place, res_id, lease_id, SHAPE, count,
                        start, end, affinity, kind=inventory.COMPUTE_HOST)
        return 'booked'
    except exceptions.Conflict:
        return 'refused'


@pytest.mark.parametrize('locking', [True, False],
                         ids=['locked', 'lock-removed'])
def test_300_competing_bookings_never_overbook(database, monkeypatch,
                                               locking):
    monkeypatch.setattr(booking, 'LOCKING', locking)
    db_api.configure(connection=database.url, max_pool_size=THREADS,
                     max_overflow=5)
    try:
        migration.upgrade()
        names = ['compute-%d' % i for i in range(PROVIDERS)]
        for name in names:
            booking.run(context.admin_context(), inventory.set_inventory, name,
                        inventory.COMPUTE_HOST, INVENTORY)
        ids = concurrency.bulk_reservations(db_api.get_engine(), BOOKINGS,
                                            'ledger', T0)
        asks = _asks(random.Random(11), names)
        deadline = time.monotonic() + DEADLINE

        def one(pair):
            assert time.monotonic() < deadline, 'took over %ds' % DEADLINE
            return _book(pair[0], pair[1], ids)

        with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:
            outcomes = collections.Counter(pool.map(one, zip(ids, asks)))
        over, rows = ledger_sweep.overbooked(database.engine)
    finally:
        db_api.get_engine().dispose()
    print('%s, lock %s: %s, %d booking rows, %d overbooked instants' % (
        database.engine_name, 'on' if locking else 'off', dict(outcomes),
        rows, len(over)))
    # real contention: both answers were given
    assert outcomes['booked'] >= 30 and outcomes['refused'] >= 30, outcomes
    if locking:
        assert over == []
    else:
        assert over, 'no overbooking without the lock: the test is blind'


def test_bookers_of_other_providers_never_wait_and_see_what_committed(
        database):
    """Two properties the ledger's locking rests on, on MariaDB and
    PostgreSQL, step by step:

    * a booker holding one provider's lock does not hold up a booker of
      another provider (MariaDB scanned the whole small inventory table
      when not told which index to use, so a locking read waited on every
      row another transaction held, and two lease creates booking several
      kinds of provider deadlocked);
    * a booker whose transaction began before another's booking committed
      sees that booking once it has the lock (MariaDB's default REPEATABLE
      READ would answer from the older snapshot: an overbooking).
    """
    db_api.configure(connection=database.url)
    try:
        migration.upgrade()
        names = ['compute-%d' % i for i in range(PROVIDERS)]
        for name in names:
            booking.run(context.admin_context(), inventory.set_inventory, name,
                        inventory.COMPUTE_HOST, INVENTORY)
        (first_lease, first), (late_lease, late) = \
            concurrency.bulk_reservations(db_api.get_engine(), 2, 'ledger', T0)
        start, end = T0, T0 + datetime.timedelta(hours=1)
        held = threading.Event()
        release = threading.Event()

        def hold_first_provider():
            with db_api.writer(context.admin_context()) as session:
                booking.lock(session, [names[0]])
                held.set()
                assert release.wait(30)

        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            holder = pool.submit(hold_first_provider)
            assert held.wait(30)
            # (two providers: MariaDB picked the table scan for an IN
            # list of more than one)
            other = pool.submit(booking.run, context.admin_context(),
                                booking.book, first, first_lease,
                                [booking.Request(names[1], capacity.WHOLE, 1),
                                 booking.Request(names[2], capacity.WHOLE, 1)],
                                start, end)
            try:
                other.result(timeout=10)
            finally:
                release.set()
                holder.result(timeout=30)

        # the late booker's transaction reads before the whole booking of
        # names[3] commits, then books a slot there: refused
        began = threading.Event()
        committed = threading.Event()

        def late_booker():
            with db_api.writer(context.admin_context()) as session:
                inventory.inventories_of(session, [names[3]])
                began.set()
                assert committed.wait(30)
                booking.book(session, late, late_lease,
                             [booking.Request(names[3], 'VCPU', 1)], start,
                             end)

        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            outcome = pool.submit(late_booker)
            assert began.wait(30)
            booking.run(context.admin_context(), booking.book, first,
                        first_lease,
                        [booking.Request(names[3], capacity.WHOLE, 1)],
                        start, end)
            committed.set()
            with pytest.raises(exceptions.Conflict):
                outcome.result(timeout=30)
        over, _rows = ledger_sweep.overbooked(database.engine)
        assert over == []
    finally:
        db_api.get_engine().dispose()
