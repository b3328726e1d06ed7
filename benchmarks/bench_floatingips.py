"""virtual:floatingip and network (segment) reservations at scale: lease
creates and the inventory listings through the API, with 5,000
registered addresses on 10 external networks under 100,000 floating IP
reservations, and 4,000 VLAN segments under 50,000 network reservations,
all booked on the capacity ledger.

Target, as for volumes and instances: create p50 <= 30 ms.

Databases (``CLIMATE_BENCH_ENGINE``, or the engines named on the command
line: ``python benchmarks/bench_floatingips.py sqlite mariadb
postgresql``): ``mariadb`` and ``postgresql`` run climate-api (2
threads) and one climate-manager over RabbitMQ (``common.Climate``);
``sqlite`` the embedded default, climate-all on a SQLite file
(``bench_volumes.Embedded``'s way).

The inventories and the ledger are written straight into SQL,
set-based, as Climate writes them (``climate.db.floatingips``,
``climate.db.network_segments``), with ascending ids (see
``bench_volumes._ascending_ids``):

- addresses: 500 per network (``172.<16+n>.x.y``), one in 100 not
  reservable; each a ledger provider ``floatingip:<id>`` with
  ``FLOATING_IP`` = 1;
- segments: ``vlan`` 1001-2000 on ``physnet1``..``physnet4`` (4,000),
  extra capabilities ``site`` (uc for physnet1-2, tacc for 3-4) and
  ``stitchable`` (yes on one in ten); each a ledger provider
  ``network_segment:<id>`` with ``NETWORK_SEGMENT`` = 1;
- floating IP reservations: 100,000 (a lease, a reservation, and one
  ledger booking per address), ``amount`` 1-4 on one network, one in
  five with ``required_floatingips`` (one address, taken at random among
  the free ones), 1 hour to 7 days (log-uniform) over the next year;
- network reservations: 50,000, one segment each, 1 hour to 30 days.

The bookings are placed as the ledger would place them, in start order:
the required address by name, the rest on the lowest free provider ids
(the ledger's order), so that no address or segment is ever held twice
at an instant and the low ids are the busiest, as in a real inventory.
The leases carry their listing body.

Measured, sequential, every request through the API with the lean client
(``common.CLIENT``):

- ``POST /v1/leases`` with one ``virtual:floatingip`` reservation (4
  hours, 1 day or 7 days somewhere in that year): ``amount`` 1-4;
  ``amount`` 1-4 with one ``required_floatingips`` address (taken at
  random: refused, 400, when it is booked then); ``amount`` 150-450
  (refused, 400, about one in three, with the earliest start
  searched);
- ``POST /v1/leases`` with one ``network`` reservation: no filter;
  ``$physical_network`` (1 segment in 4); ``$site`` and a ``$segment_id``
  range (1 in 4); one named segment, the busiest (lowest id: refused,
  409, with the earliest start searched);
- ``POST /v1/leases`` with one ``noop`` reservation (the API, RPC and
  lease rows alone);
- ``GET /v1/floatingips`` (5,000) and ``GET /v1/networks`` (4,000).

Then, in this process on the same database (no API, no RPC), the
plugins' steps of a create, in a transaction rolled back: the
network's registered addresses read (``floatingips.on_network``) and
the whole placement (``_place``); the matching segments
(``NetworkPlugin._matching``) and ``slot_search.place``.

Bounded: each series stops at its count or after ``SERIES_SECONDS``.
"""

import datetime
import heapq
import json
import math
import random
import sys
import time
import types

import bench_volumes
import common
from climate import context
from climate.db import api as db_api
from climate.db import floatingips as db_fips
from climate.db.ledger import windows
from climate.db import models
from climate.db import network_segments as db_segments
from climate import exceptions
from climate.plugins.network import plugin as network_plugin
from climate.plugins.virtual_floatingip import plugin as fip_plugin
from climate.tests.functional import procs

SQLITE = bench_volumes.SQLITE
NETWORKS = 10
ADDRESSES = 5000
FIP_RESERVATIONS = 100000
PHYSNETS = ('physnet1', 'physnet2', 'physnet3', 'physnet4')
VLANS = range(1001, 2001)
SEGMENTS = len(PHYSNETS) * len(VLANS)
SEGMENT_RESERVATIONS = 50000
#: One reservation in this many lists one required address.
REQUIRED_EVERY = 5
#: One address in this many is not reservable.
CLOSED_EVERY = 100
CREATES = 200
SMALL_CREATES = 50
NOOP_CREATES = 100
LISTS = 30
WARMUP = 20
SERIES_SECONDS = 150
INPROCESS = 60
TARGET_CREATE_P50 = 30.0
YEAR = datetime.timedelta(days=365)
DURATIONS = bench_volumes.DURATIONS
PLUGINS = ['noop', 'virtual.floatingip.plugin', 'network.plugin']
#: (label, amount range, required address?, count)
FIP_MIXES = (
    ('amount 1-4', (1, 4), False, CREATES),
    ('amount 1-4, one required address', (1, 4), True, CREATES),
    ('amount 150-450 (large)', (150, 450), False, SMALL_CREATES),
)
#: (label, resource_properties, count)
SEGMENT_MIXES = (
    ('no filter', None, CREATES),
    ('$physical_network filter, 1/4 of segments',
     '["=", "$physical_network", "physnet3"]', CREATES),
    ('$site and $segment_id range, 1/4 of segments',
     '["and", ["=", "$site", "uc"], [">=", "$segment_id", 1501]]', CREATES),
    ('one named segment (the busiest: refused)',
     '["and", ["=", "$physical_network", "physnet1"], '
     '["=", "$segment_id", 1001]]', SMALL_CREATES),
)


# -- the inventories ----------------------------------------------------------

def network_ids():
    return ['%08x-0000-4000-8000-%012d' % (0xe7e7e7e7, n)
            for n in range(NETWORKS)]


def address_of(network, j):
    return '172.%d.%d.%d' % (16 + network, j // 250, j % 250 + 2)


def _inventory_row(provider_id, kind, cls, now):
    return dict(provider_id=provider_id, provider_kind=kind,
                resource_class=cls, total=1, reserved=0,
                allocation_ratio=1.0, min_unit=1, max_unit=1, step_size=1,
                created_at=now, updated_at=None)


class Allocator:
    """Providers ``0..size-1`` of one pool of a kind, given out as the
    ledger would in start order: the lowest free first, or one named."""

    def __init__(self, size):
        self.free = [True] * size
        self.heap = list(range(size))
        self.busy = []  # (end, index)

    def advance(self, now):
        while self.busy and self.busy[0][0] <= now:
            _end, i = heapq.heappop(self.busy)
            self.free[i] = True
            heapq.heappush(self.heap, i)

    def take(self, i, end):
        self.free[i] = False
        heapq.heappush(self.busy, (end, i))

    def lowest(self, count, end, allowed=None):
        """Up to ``count`` of the lowest free (and ``allowed``) ones."""
        got, put_back = [], []
        while self.heap and len(got) < count:
            i = heapq.heappop(self.heap)
            if not self.free[i]:
                continue  # a stale entry: taken by name meanwhile
            if allowed is not None and not allowed(i):
                put_back.append(i)
                continue
            got.append(i)
        for i in put_back:
            heapq.heappush(self.heap, i)
        for i in got:
            self.take(i, end)
        return got


def _window(rng, base, span_seconds, longest_hours):
    start = base + datetime.timedelta(seconds=rng.randint(0, span_seconds))
    hours = math.exp(rng.uniform(0, math.log(longest_hours)))
    return start, start + datetime.timedelta(seconds=int(hours * 3600))


class Seeder:
    """The rows of leases, reservations and bookings, flushed in batches."""

    def __init__(self, db, now):
        self.db = db
        self.now = now
        self.ids = bench_volumes._ascending_ids()
        self.lrows, self.rrows, self.brows = [], [], []
        self.bookings = 0
        #: ``{resource type: (lease id, reservation id)}``, one of each
        self.samples = {}

    def add(self, name, rtype, start, end, params, providers, cls):
        lid, rid = next(self.ids), next(self.ids)
        lease = common.lease_row(lid, name, start, end, created=self.now,
                                 user='bench')
        res = common.reservation_row(rid, lid, rtype, params, self.now,
                                     resource_id=rid)
        common.with_body(lease, [res])
        self.lrows.append(lease)
        self.rrows.append(res)
        self.samples.setdefault(rtype, (lid, rid))
        level = windows.span_level(start, end)
        for provider_id in providers:
            self.brows.append(dict(
                id=next(self.ids), reservation_id=rid, lease_id=lid,
                provider_id=provider_id, resource_class=cls, amount=1,
                start_date=start, end_date=end, span_level=level))
            self.bookings += 1
        if len(self.lrows) >= 5000:
            self.flush()

    def flush(self):
        if not self.lrows:
            return
        with self.db.engine.begin() as conn:
            conn.execute(models.Lease.__table__.insert(), self.lrows)
            conn.execute(models.Reservation.__table__.insert(), self.rrows)
            conn.execute(models.LedgerBooking.__table__.insert(), self.brows)
        del self.lrows[:], self.rrows[:], self.brows[:]


def populate(db, seed=1):
    """Both inventories and their bookings; returns a namespace with the
    window (``first``, ``last``), the networks' addresses and counts."""
    rng = random.Random(seed)
    now = procs.utcnow().replace(microsecond=0)
    base = now + datetime.timedelta(days=2)
    span = int(YEAR.total_seconds())
    ids = bench_volumes._ascending_ids()
    nets = network_ids()
    per_net = ADDRESSES // NETWORKS
    # addresses: network by network, in address order, ids ascending: the
    # ledger's order within a network is the address order
    fips = {n: [] for n in range(NETWORKS)}
    frows, irows = [], []
    for n in range(NETWORKS):
        for j in range(per_net):
            fid = next(ids)
            frows.append(dict(
                id=fid, floating_network_id=nets[n],
                floating_ip_address=address_of(n, j), subnet_id=None,
                reservable=(n * per_net + j) % CLOSED_EVERY !=
                CLOSED_EVERY - 1, created_at=now, updated_at=None))
            fips[n].append(frows[-1])
            irows.append(_inventory_row(db_fips.provider(fid), db_fips.KIND,
                                        db_fips.FLOATING_IP, now))
    srows = []
    for p, physnet in enumerate(PHYSNETS):
        for vlan in VLANS:
            sid = next(ids)
            caps = {'site': 'uc' if p < 2 else 'tacc'}
            if vlan % 10 == 0:
                caps['stitchable'] = 'yes'
            srows.append(dict(
                id=sid, network_type='vlan', physical_network=physnet,
                segment_id=vlan, reservable=True,
                capabilities=json.dumps(caps, sort_keys=True),
                created_at=now, updated_at=None))
            irows.append(_inventory_row(db_segments.provider(sid),
                                        db_segments.KIND,
                                        db_segments.NETWORK_SEGMENT, now))
    with db.engine.begin() as conn:
        conn.execute(models.FloatingIP.__table__.insert(), frows)
        conn.execute(models.NetworkSegment.__table__.insert(), srows)
        conn.execute(models.LedgerInventory.__table__.insert(), irows)
        conn.execute(models.InventoryVersion.__table__.insert(), [
            dict(kind=db_segments.KIND, version=1)])

    seeder = Seeder(db, now)
    # floating IP reservations, in start order
    wanted = []
    for _j in range(FIP_RESERVATIONS):
        start, end = _window(rng, base, span, 7 * 24)
        wanted.append((start, end, rng.randrange(NETWORKS),
                       rng.randint(1, 4), rng.randrange(REQUIRED_EVERY) == 0))
    wanted.sort(key=lambda w: w[0])
    pools = {n: Allocator(per_net) for n in range(NETWORKS)}
    placed = short = 0
    for j, (start, end, n, amount, named) in enumerate(wanted):
        pool, rows = pools[n], fips[n]
        pool.advance(start)
        required = []
        if named:
            for _try in range(10):
                i = rng.randrange(per_net)
                if pool.free[i] and rows[i]['reservable']:
                    pool.take(i, end)
                    required.append(i)
                    break
        got = required + pool.lowest(amount - len(required), end,
                                     lambda i: rows[i]['reservable'])
        if len(got) < amount:
            short += 1
            if not got:
                continue
        held = sorted(got)
        params = {'network_id': nets[n], 'amount': len(got),
                  'required_floatingips': [rows[i]['floating_ip_address']
                                           for i in required],
                  # index order is numeric order (address_of)
                  'floatingips': [rows[i]['floating_ip_address']
                                  for i in held]}
        seeder.add('bulk-fip-%06d' % j, fip_plugin.RESOURCE_TYPE, start, end,
                   params, [db_fips.provider(rows[i]['id']) for i in held],
                   db_fips.FLOATING_IP)
        placed += 1
    seeder.flush()
    fip_bookings = seeder.bookings
    # network reservations, in start order
    wanted = sorted((_window(rng, base, span, 30 * 24)
                     for _j in range(SEGMENT_RESERVATIONS)),
                    key=lambda w: w[0])
    pool = Allocator(len(srows))
    for j, (start, end) in enumerate(wanted):
        pool.advance(start)
        got = pool.lowest(1, end)
        if not got:
            continue
        row = srows[got[0]]
        params = {'network_name': 'bulk-net-%06d' % j,
                  'network_description': None, 'resource_properties': '',
                  'network_properties': '', 'segment_id': row['segment_id'],
                  'network_type': 'vlan',
                  'physical_network': row['physical_network'],
                  'network_id': None, 'cleanup_errors': []}
        seeder.add('bulk-net-%06d' % j, network_plugin.RESOURCE_TYPE, start,
                   end, params, [db_segments.provider(row['id'])],
                   db_segments.NETWORK_SEGMENT)
    seeder.flush()
    bench_volumes._analyze(db, ('floatingips', 'network_segments',
                                'ledger_inventories', 'ledger_bookings',
                                'leases', 'reservations'))
    return types.SimpleNamespace(
        first=base, last=base + YEAR, networks=nets, fips=fips,
        segments=srows, samples=seeder.samples, fip_reservations=placed,
        fip_short=short, fip_bookings=fip_bookings,
        segment_bookings=seeder.bookings - fip_bookings)


# -- the embedded default on SQLite -------------------------------------------

class Embedded(bench_volumes.Embedded):
    """``bench_volumes.Embedded`` with this benchmark's plugins."""

    plugins = PLUGINS


# -- measuring ----------------------------------------------------------------

def _series(label, count, call):
    """``call(i)`` for WARMUP + count requests, at most SERIES_SECONDS;
    returns (times after the warm-up, their times by status)."""
    times, statuses = [], {}
    deadline = time.monotonic() + SERIES_SECONDS
    for i in range(WARMUP + count):
        if time.monotonic() > deadline:
            print('    (%s: stopped after %ds)' % (label, SERIES_SECONDS))
            break
        began = time.perf_counter()
        status = call(i)
        ms = (time.perf_counter() - began) * 1000
        if i >= WARMUP:
            times.append(ms)
            statuses.setdefault(status, []).append(ms)
    return times, statuses


def _dates(rng, first, last):
    duration = rng.choice(DURATIONS)
    span = int((last - first - duration).total_seconds() / 60)
    start = first + datetime.timedelta(minutes=rng.randint(0, span))
    return start, start + duration


def fip_request(rng, seeded, amounts, named):
    n = rng.randrange(NETWORKS)
    res = {'resource_type': fip_plugin.RESOURCE_TYPE,
           'network_id': seeded.networks[n],
           'amount': rng.randint(*amounts)}
    if named:
        rows = [r for r in seeded.fips[n] if r['reservable']]
        res['required_floatingips'] = [
            rng.choice(rows)['floating_ip_address']]
    return res


def segment_request(rng, expression, i):
    res = {'resource_type': network_plugin.RESOURCE_TYPE,
           'network_name': 'bench-net-%05d' % i}
    if expression:
        res['resource_properties'] = expression
    return res


def _report(results, kind, label, times, statuses, ok, refused_code):
    p50 = common.percentile(times, 50)
    print('  create, %s: %s' % (label, common.summary(times)))
    granted, refused = statuses.get(ok, []), statuses.get(refused_code, [])
    print('    %d granted (201)%s, %d refused (%d)%s; p50 %s' % (
        len(granted), ' (p50 %.1f ms)' % common.percentile(granted, 50)
        if granted else '', len(refused), refused_code,
        ' (p50 %.1f ms, max %.1f ms)' % (
            common.percentile(refused, 50), max(refused))
        if refused else '', common.verdict(p50, TARGET_CREATE_P50)))
    results.append({'what': '%s create, %s' % (kind, label), 'p50_ms': p50,
                    'p90_ms': common.percentile(times, 90),
                    'p99_ms': common.percentile(times, 99),
                    'granted': len(granted), 'refused': len(refused)})


def measure_creates(env, seeded, seed):
    client = env.latency_client()
    rng = random.Random(seed)
    results = []

    def post(name, res, start, end, expect):
        return client.request('POST', '/v1/leases', expect=expect, json={
            'name': name, 'events': [], 'start_date': procs.iso(start),
            'end_date': procs.iso(end), 'reservations': [res]}).status_code

    print('  virtual:floatingip, %d addresses on %d networks:' % (
        ADDRESSES, NETWORKS))
    for n, (label, amounts, named, count) in enumerate(FIP_MIXES):
        def create(i):
            start, end = _dates(rng, seeded.first, seeded.last)
            return post('bench-fip-%d-%05d' % (n, i),
                        fip_request(rng, seeded, amounts, named), start, end,
                        (201, 400))
        times, statuses = _series(label, count, create)
        _report(results, 'floatingip', label, times, statuses, 201, 400)

    print('  network, %d vlan segments:' % SEGMENTS)
    for n, (label, expression, count) in enumerate(SEGMENT_MIXES):
        def create(i):
            start, end = _dates(rng, seeded.first, seeded.last)
            return post('bench-net-%d-%05d' % (n, i),
                        segment_request(rng, expression, i), start, end,
                        (201, 409))
        times, statuses = _series(label, count, create)
        _report(results, 'network', label, times, statuses, 201, 409)

    def noop(i):
        return post('bench-noop-%05d' % i, {'resource_type': 'noop'},
                    datetime.datetime(2099, 1, 1),
                    datetime.datetime(2099, 1, 2), (201,))
    times, _statuses = _series('noop', NOOP_CREATES, noop)
    print('  create, one noop reservation (API + RPC + lease rows): %s' %
          common.summary(times))
    results.append({'what': 'create, noop', 'p50_ms': common.percentile(
        times, 50), 'p99_ms': common.percentile(times, 99)})
    client.close()

    lister = env.latency_client()
    for path, key in (('/v1/floatingips', 'floatingips'),
                      ('/v1/networks', 'networks')):
        seen = []

        def listing(i):
            resp = lister.request('GET', path)
            if not seen:
                seen.append(len(resp.json()[key]))
                seen.append(len(resp.content))
            return resp.status_code
        times, _statuses = _series(path, LISTS, listing)
        print('  GET %s (%d, %d KB): %s' % (path, seen[0], seen[1] // 1024,
                                            common.summary(times)))
        results.append({'what': 'GET ' + path,
                        'p50_ms': common.percentile(times, 50),
                        'p99_ms': common.percentile(times, 99)})
    lister.close()
    return results


class _Rollback(Exception):
    pass


def _rolled_back(ctx, steps):
    """Run ``steps(session)`` (returning its split times) in a writer
    transaction rolled back."""
    out = []
    try:
        with db_api.writer(ctx) as session:
            out.extend(steps(session))
            raise _Rollback()
    except _Rollback:
        pass
    return out


def measure_inprocess(db, seeded, seed):
    """The plugins' steps of a create, in this process on the same
    database, each create's transaction rolled back."""
    db_api.configure(connection=db.url)
    ctx = context.admin_context()
    rng = random.Random(seed)
    # a seeded lease and reservation (the bookings' foreign keys): its
    # bookings are read as others'
    lease_id, res_id = seeded.samples[fip_plugin.RESOURCE_TYPE]
    fips = fip_plugin.FloatingIPPlugin()
    nets = network_plugin.NetworkPlugin()
    try:
        for label, amounts, named, _count in FIP_MIXES[:2]:
            read_ms, place_ms, refused = [], [], [0]
            for i in range(WARMUP + INPROCESS):
                res = fip_request(rng, seeded, amounts, named)
                params = fips.validate({k: v for k, v in res.items()
                                        if k != 'resource_type'})
                start, end = _dates(rng, seeded.first, seeded.last)

                def steps(session):
                    t0 = time.perf_counter()
                    db_fips.on_network(session, params['network_id'])
                    t1 = time.perf_counter()
                    try:
                        fips._place(session, res_id, lease_id, params, start,
                                    end, params['amount'])
                    except exceptions.NotEnoughFloatingIPs:
                        refused[0] += i >= WARMUP
                    return t0, t1, time.perf_counter()
                t0, t1, t2 = _rolled_back(ctx, steps)
                if i >= WARMUP:
                    read_ms.append((t1 - t0) * 1000)
                    place_ms.append((t2 - t1) * 1000)
            print('  in-process floatingip, %s: on_network %s' % (
                label, common.summary(read_ms)))
            print('    _place (%d refused) %s' % (refused[0],
                                                  common.summary(place_ms)))
        for label, expression, _count in SEGMENT_MIXES[:2]:
            match_ms, place_ms, refused = [], [], [0]
            lease_id, res_id = seeded.samples[network_plugin.RESOURCE_TYPE]
            for i in range(WARMUP + INPROCESS):
                params = nets.validate({k: v for k, v in segment_request(
                    rng, expression, i).items() if k != 'resource_type'})
                start, end = _dates(rng, seeded.first, seeded.last)

                def steps(session):
                    t0 = time.perf_counter()
                    nets._matching(session, params)
                    t1 = time.perf_counter()
                    try:
                        nets._place(session, res_id, lease_id, params,
                                    start, end)
                    except exceptions.Conflict:
                        refused[0] += i >= WARMUP
                    return t0, t1, time.perf_counter()
                t0, t1, t2 = _rolled_back(ctx, steps)
                if i >= WARMUP:
                    match_ms.append((t1 - t0) * 1000)
                    place_ms.append((t2 - t1) * 1000)
            print('  in-process network, %s: _matching %s' % (
                label, common.summary(match_ms)))
            print('    _place (%d refused) %s' % (
                refused[0], common.summary(place_ms)))
    finally:
        db_api.get_engine().dispose()


def run_engine(engine):
    print('== virtual:floatingip (%d addresses, %d reservations) and '
          'network (%d segments, %d reservations), %s, %s client' % (
              ADDRESSES, FIP_RESERVATIONS, SEGMENTS, SEGMENT_RESERVATIONS,
              engine, common.CLIENT))
    print('  load average at start: %s' % bench_volumes._load())
    seeded = {}

    def seed(db):
        with common.timed('populating'):
            seeded['v'] = populate(db)
        return seeded['v']

    if engine == SQLITE:
        env = Embedded(seed)
    else:
        env = common.Climate(managers=1, api_threads=2, engine=engine,
                             manager_opts={'plugins': PLUGINS})
    with env:
        if engine != SQLITE:
            seed(env.database)
        s = seeded['v']
        print('  %d floating IP reservations (%d short of their amount), '
              '%d bookings; %d network reservations' % (
                  s.fip_reservations, s.fip_short, s.fip_bookings,
                  s.segment_bookings))
        results = measure_creates(env, s, seed=28)
        measure_inprocess(env.database, s, seed=29)
    print('  load average at end: %s' % bench_volumes._load())
    return [dict(r, engine=engine) for r in results]


def run():
    return run_engine(common.ENGINE)


def main(argv):
    bench_volumes.run_engines(argv, run_engine)


if __name__ == '__main__':
    main(sys.argv[1:])
