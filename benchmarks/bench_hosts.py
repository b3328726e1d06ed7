"""physical:host at scale: lease creates and availability searches through
the API with a synthetic static inventory of 1,000 and 10,000 hosts and
100,000 future allocations, filtering on two properties.

The inventory and the allocations are written straight into SQL (as
Climate writes them: each host a capacity ledger provider with HOST, VCPU,
MEMORY_MB and DISK_GB inventories, each allocation a whole booking of
HOST = 1 plus the host's capacity); every measured request goes through
climate-api,
RabbitMQ and a climate-manager.  Hosts carry ``gpu`` (True/False), ``ram``
(128/256/512/1024) and ``rack`` (r0..r9).  Two filters on two
properties: a narrow one (``rack = r3 and ram >= 1024``, 1 host in 40) and
a broad one (``gpu = True and ram >= 512``, 1 host in 4), since the cost
of a create grows with the number of matching hosts, not with the
inventory.  Allocations: each host holds its share of 100,000 allocations
(5 hosts per reservation), one per period, spread over the next year.
"""

import datetime
import itertools
import random
import time
import uuid

import bulk
import common
from climate.db.ledger import inventory
from climate.db.ledger import windows as ledger_windows
from climate.db import models
from climate.tests.functional import procs

ALLOCATIONS = 100000
HOSTS_PER_RESERVATION = 5
CREATES = 300
SEARCHES = 100
WARMUP = 20
FILTERS = (
    ('narrow, 1/40 of hosts',
     '["and", ["=", "$rack", "r3"], [">=", "$ram", 1024]]'),
    ('broad, 1/4 of hosts',
     '["and", ["=", "$gpu", "True"], [">=", "$ram", 512]]'),
)
TARGET_CREATE_P50 = 30.0
TARGET_CREATE_P99 = 100.0
TARGET_SEARCH_P50 = 100.0
YEAR = datetime.timedelta(days=365)
#: Rows per bulk load (hosts; booking rows: 4 per host allocation).
CHUNK_HOSTS = 20000
CHUNK_BOOKINGS = 200000
#: What each synthetic host has, in the ledger's classes.
CAPACITY = {'HOST': 1, 'VCPU': 64, 'MEMORY_MB': 262144, 'DISK_GB': 2000}


def _ascending_ids():
    """UUIDs in ascending order, random in their first half: InnoDB
    appends rows in primary key order to its clustered index instead of
    splitting pages at random (a 1M-allocation population's bookings
    went in several times faster)."""
    prefix = uuid.uuid4().int >> 64 << 64
    for n in itertools.count():
        yield str(uuid.UUID(int=prefix | n))


def _ts(now):
    return dict(created_at=now, updated_at=None)


def populate(db, hosts, allocations=ALLOCATIONS, seed=1):
    """The synthetic inventory and ``allocations`` host allocations;
    returns (first, last) allocation times."""
    rng = random.Random(seed)
    now = procs.utcnow().replace(microsecond=0)
    base = now + datetime.timedelta(days=2)
    props = models.ResourceProperty.__table__
    caps = models.HostCapability.__table__
    host_table = models.ComputeHost.__table__
    inv_table = models.LedgerInventory.__table__
    with db.engine.begin() as conn:
        conn.execute(props.insert(), [
            dict(id=i + 1, resource_type='physical:host', property_name=name,
                 private=False, **_ts(now))
            for i, name in enumerate(('gpu', 'ram', 'rack'))])
    for first in range(0, hosts, CHUNK_HOSTS):
        ids = range(first + 1, min(hosts, first + CHUNK_HOSTS) + 1)
        bulk.load(db, host_table, [
            dict(id=i, hypervisor_hostname='bench-%06d' % i,
                 service_name='bench-%06d' % i, vcpus=64,
                 memory_mb=262144, local_gb=2000, cpu_info=None,
                 hypervisor_type='static', hypervisor_version=None,
                 trust_id=None, reservable=True, disabled=False,
                 **_ts(now)) for i in ids])
        rows = []
        for i in ids:
            ram = str((128, 256, 512, 1024)[(i // 2) % 4])
            for prop_id, value in ((1, 'True' if i % 2 else 'False'),
                                   (2, ram), (3, 'r%d' % (i % 10))):
                rows.append(dict(computehost_id=i, property_id=prop_id,
                                 capability_value=value,
                                 num_value=float(value)
                                 if value.isdigit() else None))
        bulk.load(db, caps, rows)
        bulk.load(db, inv_table, [
            dict(provider_id=str(i), provider_kind=inventory.COMPUTE_HOST,
                 resource_class=cls, total=total, reserved=0,
                 allocation_ratio=1.0, min_unit=1, max_unit=total,
                 step_size=1, **_ts(now))
            for i in ids for cls, total in sorted(CAPACITY.items())])

    reservations = allocations // HOSTS_PER_RESERVATION
    rounds = -(-reservations // (hosts // HOSTS_PER_RESERVATION))
    period = YEAR / rounds
    leases = models.Lease.__table__
    res_table = models.Reservation.__table__
    alloc_table = models.LedgerBooking.__table__
    lrows, rrows, arows = [], [], []

    def flush():
        bulk.load(db, leases, lrows)
        bulk.load(db, res_table, rrows)
        bulk.load(db, alloc_table, arows)
        del lrows[:], rrows[:], arows[:]

    with bulk.without_indexes(db, alloc_table):
        _allocate(rng, base, period, hosts, reservations, now, flush,
                  lrows, rrows, arows)
    common.analyze(db, ('computehosts', 'computehost_extra_capabilities',
                        'resource_properties', 'ledger_inventories',
                        'ledger_bookings',
                        'leases', 'reservations'))
    return base, base + YEAR


def allocated_span(db):
    """``(first, last)`` of a database :func:`populate` filled: the
    first booking's start and a year after it (within a period of what
    :func:`populate` returned, which a later run cannot know)."""
    first = db.scalar('SELECT min(start_date) FROM ledger_bookings')
    return first, first + YEAR


def _allocate(rng, base, period, hosts, reservations, now, flush, lrows,
              rrows, arows):
    """The host allocations' leases, reservations and bookings, flushed
    every CHUNK_BOOKINGS bookings."""
    per_round = hosts // HOSTS_PER_RESERVATION
    order = list(range(1, hosts + 1))
    ids = _ascending_ids()
    for j in range(reservations):
        rnd, slot = divmod(j, per_round)
        if slot == 0:
            rng.shuffle(order)
        start = base + period * rnd + datetime.timedelta(
            seconds=rng.randint(0, int(period.total_seconds() / 2)))
        start = start.replace(microsecond=0)
        end = start + datetime.timedelta(seconds=rng.randint(
            3600, max(3601, int(period.total_seconds() / 2) - 60)))
        lid, rid = next(ids), next(ids)
        lrows.append(common.lease_row(lid, 'bulk-%07d' % j, start, end,
                                      created=now, user='bench'))
        rrows.append(common.reservation_row(
            rid, lid, 'physical:host', {'min': 5, 'max': 5,
                                        'hypervisor_properties': '',
                                        'resource_properties': '',
                                        'before_end': 'default'},
            now, resource_id=rid))
        level = ledger_windows.span_level(start, end)
        for h in order[slot * HOSTS_PER_RESERVATION:
                       (slot + 1) * HOSTS_PER_RESERVATION]:
            arows.extend(dict(id=next(ids), reservation_id=rid,
                              lease_id=lid, provider_id=str(h),
                              resource_class=cls, amount=amount,
                              start_date=start, end_date=end,
                              span_level=level)
                         for cls, amount in sorted(CAPACITY.items()))
        if len(arows) >= CHUNK_BOOKINGS:
            flush()
    if arows:
        flush()


def _timed(fn):
    began = time.perf_counter()
    result = fn()
    return (time.perf_counter() - began) * 1000, result


def measure(env, first, last, label, expression, seed):
    client = env.client()
    search = procs.Client(env.cluster.url, version='1.2')
    rng = random.Random(seed)
    create_ms, granted = [], 0
    for i in range(WARMUP + CREATES):
        start = first + datetime.timedelta(minutes=rng.randint(
            0, int((last - first).total_seconds() / 60) - 600))
        body = {'name': 'bench-%d-%05d' % (seed, i), 'events': [],
                'start_date': procs.iso(start),
                'end_date': procs.iso(start + datetime.timedelta(hours=4)),
                'reservations': [{
                    'resource_type': 'physical:host', 'min': 2, 'max': 2,
                    'resource_properties': expression}]}
        ms, resp = _timed(lambda: client.request(
            'POST', '/v1/leases', expect=(201, 409), json=body))
        if i >= WARMUP:
            create_ms.append(ms)
            granted += resp.status_code == 201
    search_ms, windows, matching = [], 0, 0
    for i in range(WARMUP + SEARCHES):
        body = {'count': rng.randint(2, 20),
                'duration': '%dh' % rng.randint(1, 48),
                'resource_properties': expression,
                'earliest_start': procs.iso(first + datetime.timedelta(
                    days=rng.randint(0, 300)))}
        ms, resp = _timed(lambda: search.request(
            'POST', '/v1/os-hosts/availability', json=body))
        if i >= WARMUP:
            search_ms.append(ms)
            found = resp.json()['availability']
            windows += len(found['windows'])
            matching = found['matching_hosts']
    client.close()
    search.close()
    c50, c99 = (common.percentile(create_ms, 50),
                common.percentile(create_ms, 99))
    s50 = common.percentile(search_ms, 50)
    print('  filter %s: %d hosts match' % (label, matching))
    print('    create (min=max=2, 4 h): %s; %d of %d granted' % (
        common.summary(create_ms), granted, CREATES))
    print('    availability search (2-20 hosts, 1-48 h): %s; %d windows' % (
        common.summary(search_ms), windows))
    print('    create p50 %s; p99 %s; search p50 %s' % (
        common.verdict(c50, TARGET_CREATE_P50),
        common.verdict(c99, TARGET_CREATE_P99),
        common.verdict(s50, TARGET_SEARCH_P50)))
    return {'filter': label, 'matching': matching, 'create_p50_ms': c50,
            'create_p99_ms': c99, 'search_p50_ms': s50}


def run_scale(hosts, allocations=ALLOCATIONS):
    print('== physical:host, %d hosts, %d future allocations, filters on '
          'two properties, %s' % (hosts, allocations, common.ENGINE))
    with common.Climate(managers=1, api_threads=2) as env:
        with common.timed('populating'):
            first, last = populate(env.database, hosts, allocations)
        return [dict(measure(env, first, last, label, expression,
                             hosts + i), hosts=hosts,
                     allocations=allocations)
                for i, (label, expression) in enumerate(FILTERS)]


def run(args=()):
    """``run.py hosts [HOSTS[:ALLOCATIONS] ...]``: each inventory size
    (allocations 100,000 unless given), by default 1,000 and 10,000
    hosts; e.g. ``hosts 100000:1000000``."""
    sizes = []
    for arg in args or ('1000', '10000'):
        hosts, _sep, allocations = arg.partition(':')
        sizes.append((int(hosts), int(allocations or ALLOCATIONS)))
    results = []
    for hosts, allocations in sizes:
        results += run_scale(hosts, allocations)
    return results


if __name__ == '__main__':
    import sys
    run(sys.argv[1:])
