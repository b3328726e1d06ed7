"""start_date -> ACTIVE lag: single leases, then 1,000 leases due in the
same second with two managers.

``run.py lag LEASES:MANAGERS ...`` runs only bursts, of each size given
(e.g. ``lag 10000:4``: 10,000 leases due in the same second, four
managers)."""

import datetime
import time

import common
from climate.tests.functional import procs

SINGLE = 60
TARGET_SINGLE_P99 = 1.0
BURST = 1000
TARGET_BURST = 10.0


def _single(env):
    """SINGLE leases due one per second, created ahead through the API;
    each lease's ACTIVE moment observed by polling SQL every 5 ms."""
    db = env.database
    client = env.client()
    first = (procs.utcnow() + datetime.timedelta(seconds=8)).replace(
        microsecond=0)
    starts = {}
    for i in range(SINGLE):
        start = first + datetime.timedelta(seconds=i)
        lease = client.create_lease('single-%03d' % i, start,
                                    start + datetime.timedelta(hours=2))
        starts[lease['id']] = start
    assert procs.utcnow() < first, 'creating took too long'
    active_at = {}
    deadline = time.monotonic() + SINGLE + 60
    while len(active_at) < SINGLE:
        now = procs.utcnow()
        for row in db.query("SELECT id FROM leases WHERE status = 'ACTIVE'"):
            active_at.setdefault(row.id, now)
        assert time.monotonic() < deadline, 'leases never became ACTIVE'
        time.sleep(0.005)
    lags = [(active_at[i] - starts[i]).total_seconds() * 1000
            for i in starts]
    # leases created 0.5-1.5 s before their start: the engines learn of
    # them through the wake-up fanout, not their own timer
    late = []
    for i in range(10):
        start = (procs.utcnow() + datetime.timedelta(seconds=1.5)).replace(
            microsecond=0)
        lease = client.create_lease('late-%03d' % i, start,
                                    start + datetime.timedelta(hours=2))
        deadline = time.monotonic() + 30
        while db.scalar('SELECT status FROM leases WHERE id = :i',
                        i=lease['id']) != 'ACTIVE':
            assert time.monotonic() < deadline
            time.sleep(0.005)
        late.append((procs.utcnow() - start).total_seconds() * 1000)
    client.close()
    return lags, late


def _burst(env, length=datetime.timedelta(hours=2), burst=BURST):
    """``burst`` leases inserted in SQL, due in the same second; one more
    created through the API, due then too, wakes the managers."""
    db = env.database
    # time to insert them first (about 1,000 a second with their bodies)
    lead = 6 + burst / 500
    due = (procs.utcnow() + datetime.timedelta(seconds=lead)).replace(
        microsecond=0)
    ids = common.bulk_leases(db, burst, due, due + length, project='burst')
    client = env.client()
    # due in the same second too, so the managers are told (any create of
    # a lease due soon wakes them; rows inserted in SQL do not)
    client.create_lease('wake', due, due + datetime.timedelta(hours=2))
    client.close()
    assert procs.utcnow() < due, 'inserting took too long'
    deadline = time.monotonic() + 120 + burst / 100
    first = last = None
    while True:
        count = db.scalar("SELECT count(*) FROM leases WHERE status = "
                          "'ACTIVE' AND project_id = 'burst'")
        now = procs.utcnow()
        if count and first is None:
            first = now
        if count == burst:
            last = now
            break
        assert time.monotonic() < deadline, '%d/%d ACTIVE' % (count, burst)
        time.sleep(0.02)
    by_manager = dict(db.query(
        "SELECT manager, count(*) FROM noop_actions WHERE action = "
        "'on_start' AND lease_id IN (SELECT id FROM leases WHERE "
        "project_id = 'burst') GROUP BY manager"))
    return ((first - due).total_seconds(), (last - due).total_seconds(),
            by_manager, len(ids))


def run(args=()):
    if args:
        results = {}
        for arg in args:
            burst, _sep, managers = arg.partition(':')
            results.update(_bursts(int(burst), int(managers or 2)))
        return results
    print('== start_date -> ACTIVE lag, API 2 threads, 2 managers, %s' %
          common.ENGINE)
    results = {}
    with common.Climate(managers=2, api_threads=2) as env:
        lags, late = _single(env)
        p99 = common.percentile(lags, 99) / 1000
        print('  %d single leases created ahead, due 1 s apart: %s' % (
            len(lags), common.summary(lags)))
        print('  %d single leases created ~1 s before start: %s' % (
            len(late), common.summary(late)))
        p99_all = common.percentile(lags + late, 99) / 1000
        print('  single-lease p99 %.2f s (all %.2f s): %s' % (
            p99, p99_all, common.verdict(p99_all, TARGET_SINGLE_P99)))
        results['single_p99_s'] = p99_all
    results.update(_bursts(BURST, 2))
    return results


def _bursts(burst, managers):
    results = {}
    print('== %d leases due in the same second, %d managers, %s' % (
        burst, managers, common.ENGINE))
    for label, length in (
            ('2 h leases', datetime.timedelta(hours=2)),
            # shorter than minutes_before_end_lease: their before_end
            # events are due in the same second too
            ('30 min leases', datetime.timedelta(minutes=30))):
        with common.Climate(managers=managers, api_threads=2) as env:
            first, last, by_manager, n = _burst(env, length, burst)
            print('  %d %s due in the same second: first ACTIVE after '
                  '%.2f s, all ACTIVE after %.2f s: %s; on_start per '
                  'manager %s' % (n, label, first, last, common.verdict(
                      last, TARGET_BURST), by_manager))
            results['burst_all_active_s', burst, managers, label] = last
    return results


if __name__ == '__main__':
    import sys
    run(sys.argv[1:])
