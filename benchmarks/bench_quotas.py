"""What the quota check adds to a lease create (target <= 2 ms).

Ten volume pools; two projects of 1,000 volume leases each over the next
20 days (rows straight into SQL), one without limits and one with a
concurrent limit and a monthly budget of ``VOLUME_GB`` (high enough never
to refuse: the check is measured, not the refusal); and a third project,
limited as well, of 100 leases.  The budget's sum reads each booking of
the project within the month: its cost grows with them (about 1 us
each on MariaDB).  Measured through
climate-api (2 threads) and one manager, the creates of the two projects
interleaved (one each in turn, so that drift hits both alike): a 1 GB
volume for an hour within those 20 days.  And in this process on the same
database, the check alone (``climate.manager.quotas.enforce``: the lock
of the project's quota row and the read of what it holds over the lease's
window and budget month), each in a transaction rolled back, for the
heavy and the typical project.
"""

import datetime
import random
import time
import uuid

import common
from climate import context
from climate.db import api as db_api
from climate.db.ledger import windows
from climate.db import models
from climate.manager import quotas
from climate.tests.functional import procs

POOLS = 10
LEASES = 1000
CREATES = 300
WARMUP = 20
CHECKS = 300
TARGET_ADDED = 2.0
FREE, LIMITED, TYPICAL = 'bench-free', 'bench-limited', 'bench-typical'
#: Leases each project holds over the 20 days: the limited one as many
#: as the free one (50 a day: a heavy user), the typical one a tenth.
LEASES_OF = {FREE: LEASES, LIMITED: LEASES, TYPICAL: LEASES // 10}
LIMITS = {'max_concurrent': {'VOLUME_GB': 1000000, 'VOLUME': 1000000},
          'budget': {'VOLUME_GB': 1000000000}, 'budget_period': 'month',
          'max_lease_duration': '30d'}
DAYS = 20


def populate(db, pools, now, seed=1):
    """Each project's leases, their volume reservations and bookings."""
    rng = random.Random(seed)
    rows = [[] for _ in range(3)]
    for project, count in sorted(LEASES_OF.items()):
        for n in range(count):
            start = now + datetime.timedelta(
                days=1, minutes=rng.randint(0, DAYS * 24 * 60))
            end = start + datetime.timedelta(hours=1)
            lease, res, _events = common.lease_rows(
                '%s-%04d' % (project, n), start, end, project,
                event_status='DONE', resource_type='virtual:volume')
            rows[0].append(lease)
            rows[1].append(res)
            pool = 'volume_pool:%d' % rng.choice(pools)
            for cls, amount in (('VOLUME_GB', 1), ('VOLUME', 1)):
                rows[2].append(dict(
                    id=str(uuid.uuid4()), reservation_id=res['id'],
                    lease_id=lease['id'], project_id=project,
                    provider_id=pool,
                    resource_class=cls, amount=amount, start_date=start,
                    end_date=end, span_level=windows.span_level(start, end)))
    with db.engine.begin() as conn:
        for table, batch in zip((models.Lease.__table__,
                                 models.Reservation.__table__,
                                 models.LedgerBooking.__table__), rows):
            conn.execute(table.insert(), batch)
    common.analyze(db, ('leases', 'reservations', 'ledger_bookings'))


def _body(rng, name, now):
    start = now + datetime.timedelta(days=1, minutes=rng.randint(
        0, DAYS * 24 * 60))
    return {'name': name, 'events': [], 'start_date': procs.iso(start),
            'end_date': procs.iso(start + datetime.timedelta(hours=1)),
            'reservations': [{'resource_type': 'virtual:volume',
                              'size_gb': 1, 'count': 1}]}


def _inprocess(db, now, project):
    """The check alone, timed, in transactions rolled back."""
    db_api.configure(connection=db.url)
    ctx = context.admin_context()
    rng = random.Random(7)
    lease_ids = [r.id for r in db.query(
        'SELECT id FROM leases WHERE project_id = :p', p=project)]
    times = []
    for i in range(WARMUP + CHECKS):
        start = now + datetime.timedelta(days=1, minutes=rng.randint(
            0, DAYS * 24 * 60))
        end = start + datetime.timedelta(hours=1)
        session = None
        with db_api.writer(ctx) as session:
            began = time.perf_counter()
            quotas.enforce(session, project, rng.choice(lease_ids), start,
                           end)
            elapsed = (time.perf_counter() - began) * 1000
            # nothing to keep: the row lock goes with the rollback
            session.rollback()
        if i >= WARMUP:
            times.append(elapsed)
    db_api.get_engine().dispose()
    return times


def run():
    print('== quota check on lease creates: %d pools, 2 projects of %d '
          'leases, API 2 threads, 1 manager, %s, %s client' % (
              POOLS, LEASES, common.ENGINE, common.CLIENT))
    results = {}
    with common.Climate(managers=1, api_threads=2) as env:
        now = procs.utcnow().replace(microsecond=0)
        admin = env.latency_client(project='admin',
                                   roles='admin,member,reader',
                                   version='1.9')
        pools = [admin.request('POST', '/v1/volume-pools', expect=(201,),
                               json={'name': 'pool-%02d' % n,
                                     'total_capacity_gb': 100000,
                                     'capabilities': {'max_volumes': 100000}}
                               ).json()['volume_pool']['id']
                 for n in range(POOLS)]
        with common.timed('populating'):
            populate(env.database, pools, now)
        for project in (LIMITED, TYPICAL):
            admin.request('PUT', '/v1/quotas/%s' % project, json=LIMITS)
        clients = {p: env.latency_client(project=p, roles='member,reader')
                   for p in (FREE, LIMITED)}
        rng = random.Random(3)
        times = {FREE: [], LIMITED: []}
        for i in range(WARMUP + CREATES):
            for project in (FREE, LIMITED):
                body = _body(rng, 'new-%s-%04d' % (project, i), now)
                began = time.perf_counter()
                clients[project].request('POST', '/v1/leases',
                                         expect=(201,), json=body)
                if i >= WARMUP:
                    times[project].append(
                        (time.perf_counter() - began) * 1000)
        p50 = {p: common.percentile(t, 50) for p, t in times.items()}
        print('  create, no limits:          %s' % common.summary(
            times[FREE]))
        print('  create, concurrent+budget:  %s' % common.summary(
            times[LIMITED]))
        added = p50[LIMITED] - p50[FREE]
        print('  added at p50: %.2f ms  %s' % (
            added, common.verdict(added, TARGET_ADDED)))
        results.update(added_p50_ms=added)
        for project in (LIMITED, TYPICAL):
            checks = _inprocess(env.database, now, project)
            check_p50 = common.percentile(checks, 50)
            print('  the check alone, in-process, %d leases in 20 days: %s  '
                  '%s' % (LEASES_OF[project], common.summary(checks),
                          common.verdict(check_p50, TARGET_ADDED)))
            results['check_p50_ms_%d' % LEASES_OF[project]] = check_p50
        for client in list(clients.values()) + [admin]:
            client.close()
    return results


if __name__ == '__main__':
    run()
