"""GET /v1/usage (microversion 1.8) with 100,000 leases in the database:
one project's usage over a year, and the planning view.

100 projects of 1,000 leases each, spread over a year centred on now,
1 hour to 3 days long; each holds instance capacity on one host
(``VCPU``, ``MEMORY_MB``, ``DISK_GB``), one in ten a host whole (with
``HOST``).  Leases ended before now have their bookings in
``usage_records``, as their END event leaves them; the others in the
ledger.  Rows go straight into SQL; every event is marked done, so that
the manager runs none of them meanwhile.

Measured through climate-api (2 threads) and one manager:

- a member's ``GET /v1/usage`` over the year of their project (about
  1,000 leases, 3,300 bookings and records), target p50 <= 50 ms; and
  the same per lease (``by_lease``: 1,000 leases in the answer), figures
  only;
- an administrator's ``GET /v1/usage/capacity`` over 30 days, a step a
  day (every project's bookings of that month: about 8,000 leases'),
  figures only.
"""

import datetime
import random
import time
import uuid

import common
from climate.db.ledger import inventory
from climate.db.ledger import windows
from climate.db import models
from climate.tests.functional import procs

PROJECTS = 100
LEASES_PER_PROJECT = 1000
WHOLE_EVERY = 10
HOSTS = 500
SHAPE = {'VCPU': 4, 'MEMORY_MB': 16384, 'DISK_GB': 80}
WHOLE = {'HOST': 1, 'VCPU': 256, 'MEMORY_MB': 258048, 'DISK_GB': 2000}
YEAR = datetime.timedelta(days=365)
REQUESTS = 100
WARMUP = 5
TARGET_P50 = 50.0


def _project(n):
    return 'usage-project-%02d' % n


def populate(db, now, seed=1):
    """The leases, their reservations and events, and their bookings (or
    records, for those ended); returns the number of booking and record
    rows."""
    rng = random.Random(seed)
    tables = (models.Lease.__table__, models.Reservation.__table__,
              models.Event.__table__, models.LedgerBooking.__table__,
              models.UsageRecord.__table__)
    rows = [[] for _ in tables]
    count = 0

    def flush():
        with db.engine.begin() as conn:
            for table, batch in zip(tables, rows):
                if batch:
                    conn.execute(table.insert(), batch)
        for batch in rows:
            del batch[:]

    first = now - YEAR / 2
    for n in range(PROJECTS * LEASES_PER_PROJECT):
        project = _project(n % PROJECTS)
        start = first + datetime.timedelta(
            seconds=rng.randint(0, int(YEAR.total_seconds())))
        end = start + datetime.timedelta(seconds=rng.randint(3600,
                                                             3 * 86400))
        status = ('TERMINATED' if end <= now else
                  'ACTIVE' if start <= now else 'PENDING')
        lease, res, events = common.lease_rows(
            'usage-%06d' % n, start, end, project, status=status,
            event_status='DONE', resource_type='virtual:instance')
        rows[0].append(lease)
        rows[1].append(res)
        rows[2].extend(events)
        # one in ten of each project's leases
        amounts = WHOLE if (n // PROJECTS) % WHOLE_EVERY == 0 else {
            cls: amount * rng.randint(1, 4) for cls, amount in SHAPE.items()}
        host = 'host-%04d' % rng.randrange(HOSTS)
        for cls, amount in sorted(amounts.items()):
            if status == 'TERMINATED':
                rows[4].append(dict(
                    project_id=project, lease_id=lease['id'],
                    lease_name=lease['name'],
                    lease_created_at=lease['created_at'],
                    lease_start_date=start, reservation_id=res['id'],
                    resource_type=res['resource_type'], resource_class=cls,
                    amount=amount, start_date=start, end_date=end))
            else:
                rows[3].append(dict(
                    id=str(uuid.uuid4()), reservation_id=res['id'],
                    lease_id=lease['id'], provider_id=host,
                    resource_class=cls, amount=amount, start_date=start,
                    end_date=end, span_level=windows.span_level(start, end)))
            count += 1
        if len(rows[0]) >= 5000:
            flush()
    flush()
    inventories = [dict(provider_id='host-%04d' % h,
                        provider_kind=inventory.COMPUTE_HOST,
                        resource_class=cls, total=total, reserved=0,
                        allocation_ratio=1.0, min_unit=1, max_unit=total,
                        step_size=1, created_at=now)
                   for h in range(HOSTS) for cls, total in WHOLE.items()]
    with db.engine.begin() as conn:
        conn.execute(models.LedgerInventory.__table__.insert(), inventories)
    common.analyze(db, ('leases', 'reservations', 'events',
                        'ledger_bookings', 'usage_records',
                        'ledger_inventories'))
    return count


def _measure(client, path, params, check):
    times = []
    for i in range(WARMUP + REQUESTS):
        began = time.perf_counter()
        body = client.request('GET', path, params=params).json()
        elapsed = (time.perf_counter() - began) * 1000
        if i >= WARMUP:
            times.append(elapsed)
    check(body)
    return times


def run():
    print('== GET /v1/usage (reservation 1.8): %d leases of %d projects, '
          'API 2 threads, 1 manager, %s, %s client' % (
              PROJECTS * LEASES_PER_PROJECT, PROJECTS, common.ENGINE,
              common.CLIENT))
    results = {}
    with common.Climate(managers=1, api_threads=2) as env:
        now = procs.utcnow().replace(microsecond=0)
        with common.timed('populating'):
            rows = populate(env.database, now)
        print('  %d booking and record rows' % rows)
        project = _project(42)
        member = env.latency_client(project=project, roles='member,reader',
                                    version='1.8')
        admin = env.latency_client(project='admin',
                                   roles='admin,member,reader',
                                   version='1.8')
        year = {'start': (now - YEAR / 2).isoformat(),
                'end': (now + YEAR / 2).isoformat()}

        def totals(body):
            classes = {t['resource_class'] for t in body['usage']['totals']}
            assert classes == set(WHOLE), classes

        times = _measure(member, '/v1/usage', year, totals)
        p50 = common.percentile(times, 50)
        results['usage'] = p50
        print('  a project over a year (%d leases), totals: %s  %s' % (
            LEASES_PER_PROJECT, common.summary(times),
            common.verdict(p50, TARGET_P50)))

        def whole_year(body):
            leases = body['usage']['leases']
            assert len(leases) == LEASES_PER_PROJECT, len(leases)

        times = _measure(member, '/v1/usage', dict(year, by_lease='true'),
                         whole_year)
        results['usage_by_lease'] = common.percentile(times, 50)
        print('  the same, per lease too: %s (no target)' %
              common.summary(times))

        month = {'start': now.isoformat(),
                 'end': (now + datetime.timedelta(days=30)).isoformat(),
                 'step': '1d'}

        def thirty_steps(body):
            classes = body['capacity']['classes']
            assert [len(c['steps']) for c in classes] == [30] * 4, classes

        times = _measure(admin, '/v1/usage/capacity', month, thirty_steps)
        results['capacity'] = common.percentile(times, 50)
        print('  planning view, 30 days a day at a time: %s (no target)' %
              common.summary(times))
        member.close()
        admin.close()
    return results


if __name__ == '__main__':
    run()
