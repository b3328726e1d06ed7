"""200 ``with_retries`` leases waiting for compute hosts, granted as the
leases before them end and release the hosts: each granted exactly once,
in arrival order, never more at once than there are hosts, and none lost
when one of the two managers is killed with kill -9 halfway (MariaDB and
PostgreSQL, RabbitMQ).

Each lease holds one of 10 hosts for a second or two: its end releases the
host, which wakes the managers' passes over the waiting leases
(``climate.manager.workers.retries``); no counted attempt falls within the run
(``[leases] retry_interval`` is ten minutes), so releases alone drive it.
"""

import datetime
import time

from climate.tests.functional import procs

HOSTS = 10
WAITING = 200
#: how long each waiting lease holds its host once granted (seconds)
HOLD = 2
GRANTED = ('STARTING', 'ACTIVE', 'TERMINATING', 'TERMINATED')


def _host_request():
    return [{'resource_type': 'physical:host', 'min': 1, 'max': 1}]


def _max_overlap(windows):
    """The most windows ``[start, end)`` open at one instant."""
    edges = sorted([(start, 1) for start, _end in windows] +
                   [(end, -1) for _start, end in windows])
    most = current = 0
    for _when, step in edges:  # an end sorts before a start at one instant
        current += step
        most = max(most, current)
    return most


def test_waiting_leases_are_granted_once_in_order(climate):
    cluster = climate.start(managers=2, extra={'leases': {
        'retry_interval': 600, 'max_retries': 10}})
    db = climate.database
    admin = climate.client(version='1.11')
    for n in range(HOSTS):
        admin.request('POST', '/v1/os-hosts', expect=(201,),
                      json={'name': 'host-%d' % n})
    now = procs.utcnow()
    holders = [admin.create_lease('holder-%d' % n, 'now',
                                  now + datetime.timedelta(hours=1),
                                  _host_request()) for n in range(HOSTS)]
    waiting = []
    for n in range(WAITING):
        lease = admin.request('POST', '/v1/leases', expect=(201,), json={
            'name': 'waiting-%03d' % n, 'lease_type': 'with_retries',
            'end_date': procs.iso(procs.utcnow() + datetime.timedelta(
                seconds=HOLD)),
            'reservations': _host_request()}).json()['lease']
        assert lease['status'] == 'WAITING', lease
        waiting.append(lease['id'])
    # no host was free: nothing granted yet
    assert db.scalar("SELECT count(*) FROM leases WHERE status = 'WAITING'"
                     ) == WAITING

    started = time.monotonic()
    for holder in holders:
        admin.delete_lease(holder['id'])

    def granted():
        return db.scalar(
            "SELECT count(*) FROM leases WHERE lease_type = 'with_retries' "
            "AND status IN ('STARTING', 'ACTIVE', 'TERMINATING', "
            "'TERMINATED')")

    # as fast as the machine is: a wait that ends when the grants stop
    procs.wait_progress(granted, lambda count: count >= WAITING // 2,
                        quiet=120, cap=900,
                        message='half the leases granted')
    victim = cluster.managers[0]
    victim.kill9()
    assert not victim.alive()
    killed_at = granted()

    def counts():
        return dict(db.query(
            "SELECT status, count(*) FROM leases WHERE lease_type = "
            "'with_retries' GROUP BY status"))

    # (quiet for long enough to cover the killed manager's claims running
    # out before the other one takes its events over)
    procs.wait_progress(counts, lambda seen: seen == {'TERMINATED': WAITING},
                        quiet=180, cap=1200, interval=0.5,
                        message='end of every waiting lease')
    elapsed = time.monotonic() - started

    rows = db.query(
        "SELECT id, arrival, start_date, end_date, retry_attempts FROM "
        "leases WHERE lease_type = 'with_retries'")
    assert {r.id for r in rows} == set(waiting)
    # granted exactly once: one start and one end each, both run once
    events = db.query(
        "SELECT e.lease_id, e.event_type, e.status, e.attempts FROM events "
        "e JOIN leases l ON l.id = e.lease_id WHERE l.lease_type = "
        "'with_retries' AND e.event_type IN ('start_lease', 'end_lease')")
    assert sorted((e.event_type, e.status) for e in events) == sorted(
        [('start_lease', 'DONE'), ('end_lease', 'DONE')] * WAITING)
    assert len({(e.lease_id, e.event_type) for e in events}) == 2 * WAITING
    # never more leases holding a host at once than there are hosts
    windows = [(r.start_date, r.end_date) for r in rows]
    assert _max_overlap(windows) <= HOSTS
    # in arrival order: a lease is never granted before an older one
    by_arrival = sorted(rows, key=lambda r: r.arrival)
    starts = [r.start_date for r in by_arrival]
    assert starts == sorted(starts)
    # each as long as it asked (whole seconds, at least one)
    assert all(1 <= (r.end_date - r.start_date).total_seconds() <= HOLD + 1
               for r in rows)
    print('\n%s: %d waiting leases on %d hosts granted in arrival order in '
          '%.0f s, %d before the kill -9 of %s; granted at most %d at once' % (
              db.engine_name, WAITING, HOSTS, elapsed, killed_at,
              victim.manager_name, _max_overlap(windows)))
