"""GET /v1/leases (microversion 1.1, limit=100) as the table grows to
100,000 leases: first page and a deep page (marker), per project and as
admin across projects."""

import datetime
import time

import common
from climate.tests.functional import procs

SIZES = (1000, 10000, 100000)
REQUESTS = 200
WARMUP = 10
LIMIT = 100
TARGET_P50 = 20.0


def _measure(client, params, requests=REQUESTS):
    times = []
    for i in range(WARMUP + requests):
        began = time.perf_counter()
        body = client.request('GET', '/v1/leases', params=params).json()
        elapsed = (time.perf_counter() - began) * 1000
        if i >= WARMUP:
            times.append(elapsed)
    assert len(body['leases']) == LIMIT, len(body['leases'])
    return times


def run(sizes=SIZES):
    print('== GET /v1/leases?limit=%d (reservation 1.1), API 2 threads, '
          '1 manager, %s, %s client' % (LIMIT, common.ENGINE, common.CLIENT))
    with common.Climate(managers=1, api_threads=2) as env:
        db = env.database
        member = env.latency_client(project='bench', roles='member,reader',
                                    version='1.1')
        admin = env.latency_client(
            project='admin', roles='admin,member,reader', version='1.1')
        start = datetime.datetime(2099, 1, 1)
        end = start + datetime.timedelta(days=1)
        created = procs.utcnow().replace(microsecond=0)
        have = 0
        results = {}
        for size in sizes:
            with common.timed('bulk insert of %d leases' % (size - have)):
                common.bulk_leases(db, size - have, start, end,
                                   first=have, created=created)
            have = size
            # a marker ~LIMIT+50 leases before the end of the listing
            marker = db.scalar(
                'SELECT id FROM leases ORDER BY created_at DESC, id DESC '
                'LIMIT 1 OFFSET %d' % (LIMIT + 50))
            rows = []
            for label, client, params in (
                    ('member first page', member, {'limit': LIMIT}),
                    ('member deep page ', member, {'limit': LIMIT,
                                                   'marker': marker}),
                    ('admin first page ', admin, {'limit': LIMIT}),
                    ('admin deep page  ', admin, {'limit': LIMIT,
                                                  'marker': marker})):
                times = _measure(client, params)
                p50 = common.percentile(times, 50)
                results[(size, label.strip())] = p50
                rows.append('  %6d rows, %s: %s  %s' % (
                    size, label, common.summary(times),
                    common.verdict(p50, TARGET_P50)))
            print('\n'.join(rows))
        member.close()
        admin.close()
        return results


if __name__ == '__main__':
    run()
