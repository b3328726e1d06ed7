"""How long after its start_date a lease becomes ACTIVE (loose bound here;
the tight target is in benchmarks/)."""

import datetime
import time

from climate.tests.functional import procs

LEASES = 5
BOUND = 3.0


def _wait_status(db, lease_id, status, timeout):
    deadline = time.monotonic() + timeout
    while True:
        if db.scalar('SELECT status FROM leases WHERE id = :i',
                     i=lease_id) == status:
            return procs.utcnow()
        assert time.monotonic() < deadline, '%s never %s' % (lease_id,
                                                              status)
        time.sleep(0.01)


def test_start_to_active_lag(climate):
    climate.start(managers=2)
    client = climate.client()
    db = climate.database
    lags = []
    before_end_lags = []
    for i in range(LEASES):
        start = (procs.utcnow() + datetime.timedelta(seconds=2)).replace(
            microsecond=0)
        lease = client.create_lease('lag-%d' % i, start,
                                    start + datetime.timedelta(minutes=30))
        active = _wait_status(db, lease['id'], 'ACTIVE', 30)
        lags.append((active - start).total_seconds())
        # the before_end event (due at the start too: the lease is shorter
        # than minutes_before_end_lease, 60) runs as soon as the start is
        # done
        deadline = time.monotonic() + 40
        while db.scalar("SELECT status FROM events WHERE lease_id = :i AND "
                        "event_type = 'before_end_lease'",
                        i=lease['id']) != 'DONE':
            assert time.monotonic() < deadline
            time.sleep(0.01)
        before_end_lags.append((procs.utcnow() - active).total_seconds())
    print('\nstart_date -> ACTIVE lag (s): %s; ACTIVE -> before_end DONE '
          '(s): %s' % (' '.join('%.2f' % lag for lag in lags),
                       ' '.join('%.2f' % lag for lag in before_end_lags)))
    assert max(lags) < BOUND, lags
    assert min(lags) >= 0, lags
    assert max(before_end_lags) < BOUND, before_end_lags
