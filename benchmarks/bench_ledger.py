"""The capacity ledger alone (climate.db.ledger), at 10,000 providers and
100,000 existing bookings: how long booking instance slots takes, search
and locked re-check included, in a transaction of its own.

No API and no manager: the ledger's functions run in this process on a
fresh database (MariaDB, or PostgreSQL with
CLIMATE_BENCH_ENGINE=postgresql), schema by alembic.  Inventory: 10,000
compute hosts of 64 VCPU (ratio 4.0), 256 GiB and 2 TB, with HOST.
Bookings: 100,000 placements (a reservation's slots on one host: a row
per class, so 300,000 rows and more), 5 hosts per reservation, one in ten
reservations taking its hosts whole, 1 hour to 7 days long, spread over
the next year.  Measured, over random 4-hour windows of that year:

- ``place``: 1 to 5 slots of 4 VCPU / 16 GiB / 80 GB, no affinity (the
  search's three statements, lock, re-check, insert, commit);
- ``place`` with affinity (all on one host) and anti-affinity;
- ``book``: explicit amounts on a named host (lock, re-check, insert);
- the availability search's reads (``availability.Outlook``, as
  ``POST /v1/instances/availability`` makes them): the three earliest
  windows, one after the other, for 1 to 20 slots for 1 to 48 hours from
  a random day of that year, with the inventories read by each search
  (as ``availability.earliest_start`` does) and handed over from a cache (as
  the API does).
"""

import datetime
import random
import time
import uuid

import common
from climate import context
from climate.db import api as db_api
from climate.db.ledger import availability
from climate.db.ledger import booking
from climate.db.ledger import inventory
from climate.db.ledger import slot_search
from climate.db.ledger import windows as ledger_windows
from climate.db import migration
from climate.db import models
from climate import exceptions
from climate.tests.functional import procs

PROVIDERS = 10000
PLACEMENTS = 100000
HOSTS_PER_RESERVATION = 5
WHOLE_EVERY = 10
BOOKS = 300
WARMUP = 20
SHAPE = {'VCPU': 4, 'MEMORY_MB': 16384, 'DISK_GB': 80}
INVENTORY = {'HOST': dict(total=1), 'VCPU': dict(total=64,
                                                 allocation_ratio=4.0),
             'MEMORY_MB': dict(total=262144, reserved=4096),
             'DISK_GB': dict(total=2000)}
TARGET_P50 = 30.0
TARGET_P99 = 60.0
SEARCHES = 100
TARGET_SEARCH_P50 = 100.0
YEAR = datetime.timedelta(days=365)


def provider_names(count=PROVIDERS):
    """The benchmark's own provider ids."""
    return ['host-%05d' % i for i in range(count)]


def populate(db, base, seed=1, names=None):
    """Inventories and bookings straight into SQL, as the ledger writes
    them, for the providers ``names`` (default :func:`provider_names`);
    returns the number of booking rows."""
    rng = random.Random(seed)
    now = procs.utcnow().replace(microsecond=0)
    names = names or provider_names()
    inv_table = models.LedgerInventory.__table__
    with db.engine.begin() as conn:
        for first in range(0, len(names), 2500):
            conn.execute(inv_table.insert(), [
                dict(provider_id=name,
                     provider_kind=inventory.COMPUTE_HOST, resource_class=cls,
                     total=values['total'],
                     reserved=values.get('reserved', 0),
                     allocation_ratio=values.get('allocation_ratio', 1.0),
                     min_unit=1, max_unit=values['total'], step_size=1,
                     created_at=now, updated_at=None)
                for name in names[first:first + 2500]
                for cls, values in sorted(INVENTORY.items())])
    usable = {cls: int((v['total'] - v.get('reserved', 0)) *
                       v.get('allocation_ratio', 1.0))
              for cls, v in INVENTORY.items()}
    leases = models.Lease.__table__
    reservations = models.Reservation.__table__
    books = models.LedgerBooking.__table__
    lrows, rrows, brows = [], [], []
    total = 0

    def flush():
        with db.engine.begin() as conn:
            conn.execute(leases.insert(), lrows)
            conn.execute(reservations.insert(), rrows)
            conn.execute(books.insert(), brows)
        del lrows[:], rrows[:], brows[:]

    for j in range(PLACEMENTS // HOSTS_PER_RESERVATION):
        start = (base + datetime.timedelta(seconds=rng.randint(
            0, int(YEAR.total_seconds())))).replace(microsecond=0)
        end = start + datetime.timedelta(seconds=rng.randint(
            3600, 7 * 86400))
        lid, rid = str(uuid.uuid4()), str(uuid.uuid4())
        lrows.append(common.lease_row(lid, 'bulk-%06d' % j, start, end,
                                      created=now, user='bench'))
        rrows.append(common.reservation_row(rid, lid, 'virtual:instance',
                                            created=now, resource_id=rid))
        whole = j % WHOLE_EVERY == 0
        level = ledger_windows.span_level(start, end)
        for name in rng.sample(names, HOSTS_PER_RESERVATION):
            if whole:
                amounts = usable
            else:
                units = rng.randint(1, 4)
                amounts = {cls: units * a for cls, a in SHAPE.items()}
            for cls, amount in sorted(amounts.items()):
                brows.append(dict(
                    id=str(uuid.uuid4()), reservation_id=rid, lease_id=lid,
                    provider_id=name, resource_class=cls, amount=amount,
                    start_date=start, end_date=end, span_level=level))
        total += HOSTS_PER_RESERVATION * len(amounts)
        if len(brows) >= 20000:
            flush()
    if brows:
        flush()
    common.analyze(db, ('ledger_inventories', 'ledger_bookings', 'leases',
                        'reservations'))
    return total


def _reservations(count, prefix):
    """Lease and reservation rows the measured bookings hang on."""
    ctx = context.admin_context()
    out = []
    with db_api.writer(ctx) as session:
        for i in range(count):
            lease = models.Lease(name='%s-%05d' % (prefix, i), project_id='p',
                                 start_date=procs.utcnow(),
                                 end_date=procs.utcnow(), status='PENDING')
            session.add(lease)
            session.flush()
            res = models.Reservation(lease_id=lease.id,
                                     resource_type='virtual:instance',
                                     status='pending', params={})
            session.add(res)
            session.flush()
            out.append((lease.id, res.id))
    return out


def _measure(label, ids, ask, base, seed):
    rng = random.Random(seed)
    times, granted = [], 0
    for i, (lease_id, res_id) in enumerate(ids):
        start = base + datetime.timedelta(minutes=rng.randint(
            0, int(YEAR.total_seconds() / 60) - 600))
        end = start + datetime.timedelta(hours=4)
        began = time.perf_counter()
        try:
            booking.run(context.admin_context(), ask(rng), res_id, lease_id,
                        start, end)
            ok = True
        except exceptions.Conflict:
            ok = False
        ms = (time.perf_counter() - began) * 1000
        if i >= WARMUP:
            times.append(ms)
            granted += ok
    p50, p99 = common.percentile(times, 50), common.percentile(times, 99)
    print('    %s: %s; %d of %d granted' % (label, common.summary(times),
                                             granted, len(times)))
    print('      p50 %s; p99 %s' % (common.verdict(p50, TARGET_P50),
                                    common.verdict(p99, TARGET_P99)))
    return {'what': label, 'p50_ms': p50, 'p99_ms': p99}


def _place(affinity):
    def ask(rng):
        count = rng.randint(1, 5)

        def call(session, res_id, lease_id, start, end):
            return slot_search.place(session, res_id, lease_id, SHAPE, count,
                                     start, end, affinity,
                                     kind=inventory.COMPUTE_HOST)
        return call
    return ask


def _book(rng):
    name = 'host-%05d' % rng.randrange(PROVIDERS)
    units = rng.randint(1, 4)
    requests = [booking.Request(name, cls, units * amount)
                for cls, amount in SHAPE.items()]

    def call(session, res_id, lease_id, start, end):
        return booking.book(session, res_id, lease_id, requests, start, end)
    return call


def _availability(label, base, seed, cached):
    """Three consecutive earliest windows per search, on every provider."""
    rng = random.Random(seed)
    ctx = context.admin_context()
    profiles = None
    if cached:
        with db_api.reader(ctx) as session:
            profiles = availability.inventory_profiles(
                session, SHAPE, inventory.COMPUTE_HOST)
    times, windows = [], 0
    for i in range(WARMUP + SEARCHES):
        earliest = base + datetime.timedelta(days=rng.randint(0, 300))
        duration = datetime.timedelta(hours=rng.randint(1, 48))
        amount = rng.randint(1, 20)
        began = time.perf_counter()
        found = []
        with db_api.reader(ctx) as session:
            outlook = availability.Outlook(session, SHAPE, None,
                                           inventory.COMPUTE_HOST,
                                           profiles=profiles)
            cursor = earliest
            while len(found) < 3:
                when = outlook.earliest(amount, duration, cursor,
                                        earliest + YEAR)
                if when is None:
                    break
                found.append(when)
                cursor = when[0] + duration
        ms = (time.perf_counter() - began) * 1000
        if i >= WARMUP:
            times.append(ms)
            windows += len(found)
    p50 = common.percentile(times, 50)
    print('    %s: %s; %d windows' % (label, common.summary(times), windows))
    if cached:
        # the API's path (the target of bench_instances, API included)
        print('      p50 %s' % common.verdict(p50, TARGET_SEARCH_P50))
    return {'what': label, 'p50_ms': p50,
            'p99_ms': common.percentile(times, 99)}


def run():
    engine = common.ENGINE
    print('== ledger: %d providers, %d placements, %s' % (
        PROVIDERS, PLACEMENTS, engine))
    problems = procs.missing_services((engine,))
    if problems:
        raise SystemExit('\n'.join(problems))
    db = procs.Database(engine).create()
    results = []
    try:
        db_api.configure(connection=db.url)
        migration.upgrade()
        base = procs.utcnow().replace(microsecond=0) + datetime.timedelta(
            days=2)
        with common.timed('populating'):
            rows = populate(db, base)
        print('  %d booking rows' % rows)
        count = WARMUP + BOOKS
        for n, (label, ask) in enumerate((
                ('place 1-5 slots, no affinity', _place(None)),
                ('place 1-5 slots, affinity', _place(True)),
                ('place 1-5 slots, anti-affinity', _place(False)),
                ('book on a named host', _book))):
            results.append(_measure(label, _reservations(count, 'm%d' % n),
                                    ask, base, n))
        for n, (label, cached) in enumerate((
                ('availability, 3 windows, inventories read', False),
                ('availability, 3 windows, inventories cached', True))):
            results.append(_availability(label, base, 10 + n, cached))
    finally:
        db_api.get_engine().dispose()
        if not common.KEEP:
            db.drop()
        else:
            print('kept %s' % db.name)
    return results


if __name__ == '__main__':
    run()
