"""virtual:volume at scale: lease creates and the pool listing through the
API, with a static inventory of 1,000 volume pools and 100,000 existing
volume reservations booked on the capacity ledger.

Issue 18's proof: volume reservation create at 1,000 pools / 100,000
bookings p50 <= 30 ms.

Databases (``CLIMATE_BENCH_ENGINE``, as the other benchmarks, or the
engines named on the command line: ``python benchmarks/bench_volumes.py
sqlite mariadb postgresql``):

- ``mariadb``, ``postgresql``: climate-api (2 threads) and one
  climate-manager over RabbitMQ (``common.Climate``);
- ``sqlite``: the embedded default, ``climate-all`` (API and manager in
  one process, ``fake://`` transport) on a SQLite file.

The pools and the ledger are written straight into SQL, set-based, as
Climate writes them (``climate.db.volume_pools``): each pool a row of
``volume_pools`` and a ledger provider ``volume_pool:<id>`` with
``VOLUME_GB`` (``floor(total * (1 - reserved%) * ratio)``) and ``VOLUME``
(``max_volumes``, else 2**31-1).  Pools: 10 backends, ``tier``
(gold/silver/bronze/standard), ``iops`` (1000/2500/5000/10000), 10, 20, 40
or 80 TB, 0/5/10 % reserved, over-subscription 1.0/1.5/2.0 (at most 160
TB usable), one in eleven with ``max_volumes`` 1000.  Bookings: 100,000
reservations (a lease, a reservation and one ledger unit each,
``{VOLUME_GB: size_gb, VOLUME: count or size_gb}`` on one pool, as
``virtual_volume.plugin.shape_of`` books it), 10 GB to 5 TB
(log-uniform), ``count`` 1..20 or none, 1 hour to 30 days long, spread
over the next year; the leases carry their listing body, so no body
filler runs during the measurement.

Measured, every request through the API (and RabbitMQ and a manager, or
climate-all), sequential, with the lean client (``common.CLIENT``):

- ``POST /v1/leases`` with one ``virtual:volume`` reservation, 4 hours,
  1 day or 7 days somewhere in that year, ``size_gb`` (the total, 10 GB
  to 5 TB), ``count`` given for half of them: without
  ``resource_properties``, with a one-property filter (``$backend``, 1
  pool in 10) and a two-property filter (``$tier`` and ``$iops``, 1 in
  8); and large requests (20 to 250 TB, no filter) that only some pools
  hold, those above 160 TB on none (409: the refusal's own path, with
  ``earliest_start`` when they would fit later);
- ``POST /v1/leases`` with one ``noop`` reservation on the same database
  (the API, RPC and lease rows alone: what the volume create costs on
  top of it is the plugin; on SQLite it shows what climate-all's
  in-process transport costs, oslo.messaging's fake driver polling its
  queues every 50 ms);
- ``GET /v1/volume-pools`` (microversion 1.5): the 1,000 pools.

Then, in this process on the same database (no API, no RPC), the
plugin's two steps of a create: ``matching`` (the reservable pools read
and filtered) and ``slot_search.place`` (search, lock, re-check, insert), in a
transaction rolled back: where the create's time goes.

Bounded: each series stops at its count or after ``SERIES_SECONDS``.
"""

import datetime
import json
import math
import os
import random
import shutil
import sys
import tempfile
import time
import types
import uuid

import sqlalchemy as sa

import common
from climate import context
from climate.db import api as db_api
from climate.db.ledger import inventory
from climate.db.ledger import slot_search
from climate.db.ledger import windows
from climate.db import models
from climate.db import volume_pools as db_pools
from climate import exceptions
from climate.plugins.virtual_volume import plugin as volume_plugin
from climate.scheduling import filters
from climate.tests.functional import procs

SQLITE = 'sqlite'
ENGINES = (SQLITE, procs.MARIADB, procs.POSTGRESQL)
POOLS = 1000
PLACEMENTS = 100000
CREATES = 300
LARGE_CREATES = 100
NOOP_CREATES = 100
LISTS = 50
WARMUP = 20
SERIES_SECONDS = 180
INPROCESS = 100
TARGET_CREATE_P50 = 30.0
YEAR = datetime.timedelta(days=365)
BACKENDS = ('ceph-ssd', 'ceph-hdd', 'netapp-a', 'netapp-b', 'lvm-a',
            'lvm-b', 'pure-1', 'pure-2', 'nfs-1', 'nfs-2')
TIERS = ('gold', 'silver', 'bronze', 'standard')
IOPS = (1000, 2500, 5000, 10000)
MAX_VOLUMES = 1000
#: One pool in this many states ``max_volumes``.
LIMITED_EVERY = 11
#: (label, resource_properties, size range in GB)
MIXES = (
    ('no filter', None, (10, 5000)),
    ('$backend filter, 1/10 of pools', '["=", "$backend", "ceph-ssd"]',
     (10, 5000)),
    ('$tier and $iops filter, 1/8 of pools',
     '["and", ["=", "$tier", "gold"], [">=", "$iops", 5000]]', (10, 5000)),
    ('large, 20-250 TB, no filter', None, (20000, 250000)),
)
#: The plugins the benchmark uses (the default list may name plugins
#: being written whose entry points a tox env does not have yet).
PLUGINS = ['noop', 'virtual.volume.plugin']
DURATIONS = (datetime.timedelta(hours=4), datetime.timedelta(days=1),
             datetime.timedelta(days=7))


# -- the inventory and the ledger --------------------------------------------

def pool_values(i, now):
    """Pool ``i`` (1..POOLS) as a ``volume_pools`` row."""
    backend = BACKENDS[i % len(BACKENDS)]
    caps = {'tier': TIERS[(i // 10) % 4], 'iops': IOPS[(i // 40) % 4],
            'storage_protocol': 'ceph' if backend.startswith('ceph')
            else 'iSCSI', 'thin_provisioning_support': i % 3 != 0}
    if i % LIMITED_EVERY == 0:
        caps['max_volumes'] = MAX_VOLUMES
    return dict(id=i, name='cinder-%02d@%s#pool-%04d' % (i % 50, backend, i),
                backend=backend, reservable=True,
                total_capacity_gb=(10, 20, 40, 80)[i % 4] * 1000,
                reserved_percentage=(0, 5, 10)[i % 3],
                max_over_subscription_ratio=(1.0, 1.5, 2.0)[(i // 3) % 3],
                capabilities=json.dumps(caps, sort_keys=True),
                created_at=now, updated_at=None)


def _analyze(db, tables):
    if db.engine_name == SQLITE:
        with db.engine.begin() as conn:
            conn.execute(sa.text('ANALYZE'))
    else:
        common.analyze(db, tables)


def _log_uniform(rng, low, high):
    return int(round(math.exp(rng.uniform(math.log(low), math.log(high)))))


def _ascending_ids():
    """Ids shaped as uuids, ascending: a bulk insert then appends to each
    primary key instead of writing into a random page of it per row
    (InnoDB's clustered index holds the rows, bodies included; with
    uuid4 ids MariaDB's default 128 MB buffer pool thrashes and seeding
    takes minutes)."""
    prefix = uuid.uuid4().int >> 64 << 64
    for n in range(1, 2 ** 63):
        yield str(uuid.UUID(int=prefix + n))


def populate(db, seed=1):
    """Pools, their inventories and the bookings, set-based; returns
    ``(first, last, pools, booking rows, samples)``: the bookings' span,
    the pools as rows, and a few (lease id, reservation id) pairs."""
    rng = random.Random(seed)
    now = procs.utcnow().replace(microsecond=0)
    base = now + datetime.timedelta(days=2)
    rows = [pool_values(i, now) for i in range(1, POOLS + 1)]
    inventories = {}
    for row in rows:
        held = db_pools.inventories(types.SimpleNamespace(**row))
        inventories[row['id']] = {c: v['total'] for c, v in held.items()}
    with db.engine.begin() as conn:
        conn.execute(models.VolumePool.__table__.insert(), rows)
        conn.execute(models.LedgerInventory.__table__.insert(), [
            dict(provider_id=db_pools.provider(pool_id),
                 provider_kind=inventory.VOLUME_POOL, resource_class=cls,
                 total=total, reserved=0, allocation_ratio=1.0, min_unit=1,
                 max_unit=max(1, total), step_size=1, created_at=now,
                 updated_at=None)
            for pool_id, held in sorted(inventories.items())
            for cls, total in sorted(held.items())])
        if db.engine_name == procs.POSTGRESQL:  # explicit ids given
            conn.execute(sa.text(
                "SELECT setval(pg_get_serial_sequence('volume_pools', "
                "'id'), %d)" % POOLS))
    names = {r['id']: r['name'] for r in rows}
    limited = {r['id'] for r in rows if r['id'] % LIMITED_EVERY == 0}
    leases = models.Lease.__table__
    reservations = models.Reservation.__table__
    books = models.LedgerBooking.__table__
    lrows, rrows, brows = [], [], []
    samples = []
    total = 0
    ids = _ascending_ids()

    def flush():
        with db.engine.begin() as conn:
            conn.execute(leases.insert(), lrows)
            conn.execute(reservations.insert(), rrows)
            conn.execute(books.insert(), brows)
        del lrows[:], rrows[:], brows[:]

    span = int(YEAR.total_seconds())
    placements = []
    for _j in range(PLACEMENTS):
        start = base + datetime.timedelta(seconds=rng.randint(0, span))
        end = start + datetime.timedelta(seconds=rng.randint(
            3600, 30 * 86400))
        pool_id = rng.randint(1, POOLS)
        size = _log_uniform(rng, 10, 5000)
        # a pool limited in volumes gets reservations that state a count
        count = rng.randint(1, min(20, size)) if pool_id in limited or \
            rng.random() < 0.5 else None
        placements.append((start, end, pool_id, size, count))
    # in time order, as they would have come: the time indexes of the
    # bookings grow at their end rather than everywhere
    placements.sort(key=lambda p: p[0])
    for j, (start, end, pool_id, size, count) in enumerate(placements):
        params = dict(size_gb=size, count=count, volume_type=None,
                      resource_properties='', on_end='delete', volumes=None,
                      pool=names[pool_id], volume_ids=[], snapshot_ids=[])
        lid, rid = next(ids), next(ids)
        lease = common.lease_row(lid, 'bulk-%06d' % j, start, end,
                                 created=now, user='bench')
        res = common.reservation_row(rid, lid, 'virtual:volume', params, now,
                                     resource_id=rid)
        common.with_body(lease, [res])
        lrows.append(lease)
        rrows.append(res)
        level = windows.span_level(start, end)
        for cls, amount in sorted(volume_plugin.shape_of(params).items()):
            brows.append(dict(
                id=next(ids), reservation_id=rid, lease_id=lid,
                provider_id=db_pools.provider(pool_id), resource_class=cls,
                amount=amount, start_date=start, end_date=end,
                span_level=level))
            total += 1
        if j < 10:
            samples.append((lid, rid))
        if len(lrows) >= 5000:
            flush()
    if lrows:
        flush()
    _analyze(db, ('volume_pools', 'ledger_inventories', 'ledger_bookings',
                  'leases', 'reservations'))
    return base, base + YEAR, rows, total, samples


def matching_pools(rows, expression):
    """How many pools the plugin's filter picks (as ``matching`` does)."""
    tree = filters.parse(expression, 'resource_properties')
    return sum(1 for r in rows if filters.evaluate(
        tree, volume_plugin.pool_props(dict(
            r, capabilities=json.loads(r['capabilities'])))))


# -- the embedded default on SQLite -------------------------------------------

class SqliteDatabase:
    """A SQLite file, with what ``procs.Database`` offers the benchmark."""

    engine_name = SQLITE

    def __init__(self, path):
        self.path = path
        self.name = path
        self.url = 'sqlite:///%s' % path
        self._engine = None

    @property
    def engine(self):
        if self._engine is None:
            self._engine = sa.create_engine(self.url)
        return self._engine

    def drop(self):
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None


class Embedded:
    """``climate-all`` (API and manager in one process, fake transport) on
    a SQLite file, seeded by ``seed(database)`` before it starts (a
    writer beside a running climate-all would wait on SQLite's lock)."""

    #: ``[manager] plugins`` of the climate-all.
    plugins = PLUGINS

    def __init__(self, seed, api_threads=2):
        self.seed = seed
        self.api_threads = api_threads
        self.workdir = tempfile.mkdtemp(prefix='climate-bench-')
        self.database = SqliteDatabase(os.path.join(self.workdir,
                                                    'climate.sqlite'))
        self.cluster = None
        self.seeded = None

    def __enter__(self):
        try:
            port = procs.free_port()
            config = procs.write_config(
                os.path.join(self.workdir, 'climate.conf'), self.database.url,
                'fake:/', port, api_threads=self.api_threads,
                manager={'plugins': self.plugins})
            procs.db_upgrade(config)
            self.seeded = self.seed(self.database)
            self.cluster = procs.Cluster(self.workdir, config, port)
            proc = self.cluster._start('climate-all')
            procs.wait_answering(proc.popen, self.cluster.url,
                                 proc.log_path, 'climate-all')
        except BaseException:
            self.__exit__(*sys.exc_info())
            raise
        return self

    def __exit__(self, exc_type, exc, tb):
        if self.cluster is not None:
            self.cluster.stop()
            if exc_type is not None:
                print(self.cluster.report(30), file=sys.stderr)
        self.database.drop()
        if common.KEEP:
            print('kept %s' % self.workdir)
        elif exc_type is None:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def latency_client(self, **kwargs):
        if common.CLIENT == 'requests':
            return procs.Client(self.cluster.url, **kwargs)
        return common.LeanClient(self.cluster.url, **kwargs)


# -- measuring ----------------------------------------------------------------

def _load():
    return '%.2f %.2f %.2f' % os.getloadavg()


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


def _request(rng, first, last, expression, sizes):
    """A virtual:volume reservation request and its window."""
    duration = rng.choice(DURATIONS)
    span = int((last - first - duration).total_seconds() / 60)
    start = first + datetime.timedelta(minutes=rng.randint(0, span))
    res = {'resource_type': 'virtual:volume',
           'size_gb': _log_uniform(rng, *sizes)}
    if rng.random() < 0.5:
        res['count'] = rng.randint(1, min(20, res['size_gb']))
    if expression:
        res['resource_properties'] = expression
    return res, start, start + duration


def measure_creates(env, first, last, rows, seed):
    client = env.latency_client()
    rng = random.Random(seed)
    results = []
    for n, (label, expression, sizes) in enumerate(MIXES):
        def create(i):
            res, start, end = _request(rng, first, last, expression, sizes)
            body = {'name': 'bench-vol-%d-%05d' % (n, i), 'events': [],
                    'start_date': procs.iso(start),
                    'end_date': procs.iso(end), 'reservations': [res]}
            return client.request('POST', '/v1/leases', expect=(201, 409),
                                  json=body).status_code
        count = LARGE_CREATES if sizes[0] >= 20000 else CREATES
        times, statuses = _series(label, count, create)
        p50 = common.percentile(times, 50)
        print('  create, %s (%d pools match): %s' % (
            label, matching_pools(rows, expression), common.summary(times)))
        granted, refused = statuses.get(201, []), statuses.get(409, [])
        print('    %d granted%s, %d refused (409)%s; p50 %s' % (
            len(granted), ' (p50 %.1f ms)' % common.percentile(granted, 50)
            if granted else '', len(refused),
            ' (p50 %.1f ms, max %.1f ms)' % (common.percentile(refused, 50),
                                            max(refused))
            if refused else '', common.verdict(p50, TARGET_CREATE_P50)))
        results.append({'what': 'create, ' + label, 'p50_ms': p50,
                        'p90_ms': common.percentile(times, 90),
                        'p99_ms': common.percentile(times, 99),
                        'granted': len(granted), 'refused': len(refused)})

    def noop(i):
        return client.request('POST', '/v1/leases', expect=(201,), json={
            'name': 'bench-noop-%05d' % i, 'events': [],
            'start_date': '2099-01-01 00:00', 'end_date': '2099-01-02 00:00',
            'reservations': [{'resource_type': 'noop'}]}).status_code
    times, _statuses = _series('noop', NOOP_CREATES, noop)
    print('  create, one noop reservation (API + RPC + lease rows): %s' %
          common.summary(times))
    results.append({'what': 'create, noop', 'p50_ms': common.percentile(
        times, 50), 'p99_ms': common.percentile(times, 99)})
    client.close()

    lister = env.latency_client(version='1.5')
    seen = []

    def listing(i):
        resp = lister.request('GET', '/v1/volume-pools')
        if not seen:
            seen.append(len(resp.json()['volume_pools']))
            seen.append(len(resp.content))
        return resp.status_code
    times, _statuses = _series('list', LISTS, listing)
    lister.close()
    print('  GET /v1/volume-pools (%d pools, %d KB): %s' % (
        seen[0], seen[1] // 1024, common.summary(times)))
    results.append({'what': 'volume-pool list', 'p50_ms': common.percentile(
        times, 50), 'p99_ms': common.percentile(times, 99)})
    return results


class _Rollback(Exception):
    pass


def measure_inprocess(db, first, last, samples, seed):
    """The plugin's two steps of a create, timed in this process on the
    same database, each create's transaction rolled back."""
    db_api.configure(connection=db.url)
    plugin = volume_plugin.VirtualVolumePlugin()
    ctx = context.admin_context()
    rng = random.Random(seed)
    lease_id, res_id = samples[0]
    try:
        for label, expression, sizes in MIXES[:2]:
            match_ms, place_ms, refused = [], [], 0
            for i in range(WARMUP + INPROCESS):
                res, start, end = _request(rng, first, last, expression,
                                           sizes)
                params = plugin.validate({k: v for k, v in res.items()
                                          if k != 'resource_type'})
                try:
                    with db_api.writer(ctx) as session:
                        t0 = time.perf_counter()
                        providers = plugin.matching(ctx, params)
                        t1 = time.perf_counter()
                        try:
                            slot_search.place(
                                session, res_id, lease_id,
                                volume_plugin.shape_of(params), 1, start,
                                end, affinity=True, providers=providers,
                                kind=inventory.VOLUME_POOL)
                        except exceptions.Conflict:
                            refused += i >= WARMUP
                        t2 = time.perf_counter()
                        raise _Rollback()
                except _Rollback:
                    pass
                if i >= WARMUP:
                    match_ms.append((t1 - t0) * 1000)
                    place_ms.append((t2 - t1) * 1000)
            print('  in-process, %s: matching %s' % (
                label, common.summary(match_ms)))
            print('    slot_search.place (1 unit, %d refused) %s' % (
                refused, common.summary(place_ms)))
    finally:
        db_api.get_engine().dispose()


def run_engine(engine):
    print('== virtual:volume, %d pools, %d bookings on the ledger, %s, %s '
          'client' % (POOLS, PLACEMENTS, engine, common.CLIENT))
    print('  load average at start: %s' % _load())
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
        first, last, rows, total, samples = seeded['v']
        print('  %d pools, %d booking rows' % (len(rows), total))
        results = measure_creates(env, first, last, rows, seed=18)
        measure_inprocess(env.database, first, last, samples, seed=19)
    print('  load average at end: %s' % _load())
    return [dict(r, engine=engine) for r in results]


def run():
    return run_engine(common.ENGINE)


def run_engines(argv, run_engine):
    """``run_engine`` on each engine named in ``argv`` (default
    ``common.ENGINE``), each with its time and the CPU reference loop."""
    engines = argv or [common.ENGINE]
    unknown = [e for e in engines if e not in ENGINES]
    if unknown:
        sys.exit('unknown engine(s) %s; choose from %s' % (
            ', '.join(unknown), ', '.join(ENGINES)))
    for engine in engines:
        began = time.monotonic()
        before = common.cpu_reference()
        run_engine(engine)
        print('  [%s took %.0fs; CPU reference loop %.1f ms before, %.1f ms '
              'after]\n' % (engine, time.monotonic() - began, before,
                            common.cpu_reference()))


def main(argv):
    run_engines(argv, run_engine)


if __name__ == '__main__':
    main(sys.argv[1:])
