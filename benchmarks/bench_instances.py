"""virtual:instance at scale: lease creates and slot availability through
the API, with a static inventory of 10,000 compute hosts and 100,000
existing placements on the capacity ledger.

The hosts (``computehosts``, 64 VCPU at ratio 4.0, 256 GiB, 2 TB) and the
ledger's inventories and bookings are written straight into SQL, as
Climate writes them (``bench_ledger.populate``: 100,000 placements, 5
hosts per reservation, one reservation in ten taking its hosts whole, 1
hour to 7 days long, over the next year).  Every measured request goes
through climate-api, RabbitMQ and a climate-manager:

- ``POST /v1/leases`` with one ``virtual:instance`` reservation of 1 to 5
  slots of 4 VCPU / 16 GiB / 80 GB, affinity null, true or false, 4 hours
  somewhere in that year;
- ``POST /v1/instances/availability`` (microversion 1.3): the earliest
  windows for 1 to 20 slots of that shape for 1 to 48 hours.
"""

import datetime
import random
import time

import bench_ledger
import common
from climate.db import models
from climate.tests.functional import procs

HOSTS = bench_ledger.PROVIDERS
CREATES = 300
SEARCHES = 100
WARMUP = 20
SHAPE = {'vcpus': 4, 'memory_mb': 16384, 'disk_gb': 80}
TARGET_CREATE_P50 = 30.0
TARGET_CREATE_P99 = 60.0
TARGET_SEARCH_P50 = 100.0
YEAR = bench_ledger.YEAR


def populate(db):
    """The hosts and the ledger; returns (first, last) booking times."""
    now = procs.utcnow().replace(microsecond=0)
    base = now + datetime.timedelta(days=2)
    host_table = models.ComputeHost.__table__
    with db.engine.begin() as conn:
        for first in range(1, HOSTS + 1, 5000):
            conn.execute(host_table.insert(), [
                dict(id=i, hypervisor_hostname='bench-%05d' % i,
                     service_name='bench-%05d' % i, vcpus=64,
                     memory_mb=262144, local_gb=2000, cpu_info=None,
                     hypervisor_type='static', hypervisor_version=None,
                     trust_id=None, reservable=True, disabled=False,
                     created_at=now, updated_at=None)
                for i in range(first, min(HOSTS, first + 4999) + 1)])
    rows = bench_ledger.populate(
        db, base, names=[str(i) for i in range(1, HOSTS + 1)])
    common.analyze(db, ('computehosts',))
    return base, base + YEAR, rows


def _timed(fn):
    began = time.perf_counter()
    result = fn()
    return (time.perf_counter() - began) * 1000, result


def measure(env, first, last, seed=7):
    client = env.client()
    search = procs.Client(env.cluster.url, version='1.3')
    rng = random.Random(seed)
    create_ms, granted = [], 0
    span = int((last - first).total_seconds() / 60) - 600
    for i in range(WARMUP + CREATES):
        start = first + datetime.timedelta(minutes=rng.randint(0, span))
        body = {'name': 'bench-%05d' % i, 'events': [],
                'start_date': procs.iso(start),
                'end_date': procs.iso(start + datetime.timedelta(hours=4)),
                'reservations': [dict(
                    SHAPE, resource_type='virtual:instance',
                    amount=rng.randint(1, 5),
                    affinity=rng.choice([None, True, False]))]}
        ms, resp = _timed(lambda: client.request(
            'POST', '/v1/leases', expect=(201, 409), json=body))
        if i >= WARMUP:
            create_ms.append(ms)
            granted += resp.status_code == 201
    search_ms, windows = [], 0
    for i in range(WARMUP + SEARCHES):
        body = dict(SHAPE, amount=rng.randint(1, 20),
                    duration='%dh' % rng.randint(1, 48),
                    earliest_start=procs.iso(first + datetime.timedelta(
                        days=rng.randint(0, 300))))
        ms, resp = _timed(lambda: search.request(
            'POST', '/v1/instances/availability', json=body))
        if i >= WARMUP:
            search_ms.append(ms)
            windows += len(resp.json()['availability']['windows'])
    client.close()
    search.close()
    c50, c99 = (common.percentile(create_ms, 50),
                common.percentile(create_ms, 99))
    s50 = common.percentile(search_ms, 50)
    print('    create (1-5 slots, any affinity, 4 h): %s; %d of %d '
          'granted' % (common.summary(create_ms), granted, CREATES))
    print('    availability (1-20 slots, 1-48 h): %s; %d windows' % (
        common.summary(search_ms), windows))
    print('    create p50 %s; p99 %s; availability p50 %s' % (
        common.verdict(c50, TARGET_CREATE_P50),
        common.verdict(c99, TARGET_CREATE_P99),
        common.verdict(s50, TARGET_SEARCH_P50)))
    return {'create_p50_ms': c50, 'create_p99_ms': c99,
            'search_p50_ms': s50}


def run():
    print('== virtual:instance, %d hosts, %d placements on the ledger, %s'
          % (HOSTS, bench_ledger.PLACEMENTS, common.ENGINE))
    with common.Climate(managers=1, api_threads=2) as env:
        with common.timed('populating'):
            first, last, rows = populate(env.database)
        print('  %d booking rows' % rows)
        return measure(env, first, last)


if __name__ == '__main__':
    run()
