"""Temporary holds under concurrency (microversion 1.14): 120 hold
creates of one or two of 4 compute hosts over overlapping windows (some
refused: what they ask is held or booked), from 12 threads on three
managers, each held 1 to 3 s; half of them confirmed after a random
pause that lands before or after the expiry, on MariaDB, PostgreSQL and
a multi-writer Galera cluster (a manager per node).

Afterwards, once no lease is HELD any more:

- every confirm answered 200 left a PENDING lease holding its bookings,
  and none of those ever expired; every other hold is EXPIRED (a confirm
  that came too late was answered 409 and changed nothing);
- each expired hold was expired exactly once across the managers (one
  "EXPIRED" line in all their logs) and holds no booking: the ledger's
  bookings are exactly the confirmed leases' ones;
- no host is booked twice at any instant (the ledger's brute-force
  sweep), holds and confirms included.
"""

import datetime
import random
import re
import time

import pytest

from climate.tests.functional import concurrency
from climate.tests.functional import procs

HOSTS = 4
HOLDS = 120
THREADS = 12
MANAGERS = 3
V = '1.14'
#: Seconds for every hold to have been confirmed or expired.
SETTLE = 60


@pytest.fixture(params=procs.MULTI_WRITER_ENGINES)
def db_engine(request):
    return request.param


def _bodies(base, rng):
    bodies = []
    for i in range(HOLDS):
        start = base + datetime.timedelta(hours=2 * rng.randint(0, 23))
        end = start + datetime.timedelta(hours=rng.randint(1, 4))
        count = rng.randint(1, 2)
        bodies.append({
            'name': 'hold-%03d' % i, 'start_date': procs.iso(start),
            'end_date': procs.iso(end), 'events': [],
            'hold_for': rng.randint(1, 3),
            'reservations': [{'resource_type': 'physical:host',
                              'min': count, 'max': count}],
            # the pause before the confirm (None: never confirmed)
            '_confirm_after': rng.uniform(0, 3.5) if i % 2 else None})
    return bodies


def test_holds_are_confirmed_or_expire_once_and_never_overbook(climate):
    cluster = climate.start(managers=MANAGERS, extra={
        'leases': {'hold_poll_interval': 1}})
    db = climate.database
    admin = climate.client()
    for i in range(HOSTS):
        admin.request('POST', '/v1/os-hosts', expect=(201,),
                      json={'name': 'compute-%02d' % i})
    rng = random.Random(38)
    base = procs.utcnow().replace(microsecond=0) + datetime.timedelta(
        days=30)
    answers = concurrency.answers(True, 409, database=db)

    def hold_and_confirm(client, body):
        body = dict(body)
        pause = body.pop('_confirm_after')
        resp = client.request('POST', '/v1/leases', expect=answers,
                              json=body)
        if resp.status_code != 201:
            return body['name'], resp.status_code, None, None
        lease = resp.json()['lease']
        assert lease['status'] == 'HELD', lease
        if pause is None:
            return body['name'], 201, lease, None
        time.sleep(pause)
        resp = client.request('POST', '/v1/leases/%s/confirm' % lease['id'],
                              expect=(200,) + answers[1:])
        return body['name'], 201, lease, resp

    results = concurrency.run(cluster.url, hold_and_confirm,
                              _bodies(base, rng), threads=THREADS,
                              version=V)
    held = {name: lease for name, code, lease, _c in results if lease}
    confirmed = {name for name, _code, _l, resp in results
                 if resp is not None and resp.status_code == 200}
    late = {}
    for name, _code, _lease, resp in results:
        if resp is not None and resp.status_code == 409:
            late[name] = resp.json()
    concurrency.assert_few_busy(
        [code for _n, code, _l, _c in results] +
        [resp.status_code for _n, _code, _l, resp in results if resp])

    deadline = time.monotonic() + SETTLE
    while db.scalar("SELECT count(*) FROM leases WHERE status = 'HELD'"):
        assert time.monotonic() < deadline, \
            'holds still HELD %d s after the last one was made' % SETTLE
        time.sleep(0.5)

    status = {row.name: row.status for row in db.query(
        'SELECT name, status FROM leases')}
    print('\n%d hold creates on %s: %d made, %d refused, %d confirmed in '
          'time, %d confirms too late, %d expired' % (
              HOLDS, db.engine_name, len(held), HOLDS - len(held),
              len(confirmed), len(late),
              sum(1 for s in status.values() if s == 'EXPIRED')))
    assert set(status) == set(held), 'a refused hold left a lease'
    for name in held:
        want = 'PENDING' if name in confirmed else 'EXPIRED'
        assert status[name] == want, (name, status[name], late.get(name))
    for name, answer in late.items():
        assert answer['error_name'] == 'HoldNotConfirmable', answer
        assert re.search('it is EXPIRED, not HELD|its hold expired at',
                         answer['error_message']), answer
    assert confirmed and late and len(confirmed) < len(held), (
        'the confirms did not race the expiries')

    # once: one expiry among all the managers' logs for each expired hold
    logs = '\n'.join(proc.log() for proc in cluster.procs)
    for name, lease in held.items():
        if status[name] == 'EXPIRED':
            assert logs.count('Lease %s EXPIRED' % lease['id']) == 1, name

    # what the expired holds booked is free: only the confirmed book
    booked = concurrency.holdings(db)
    for name, holding in booked.items():
        amounts = sum(b.amount for b in holding.bookings)
        want = held[name]['reservations'][0]['min'] \
            if name in confirmed else 0
        assert amounts == want, (name, status[name], holding)
    by_host = concurrency.bookings_by_provider(db, 'HOST')
    assert concurrency.overlapping_pairs(by_host) == []
    assert not cluster.errors_in_logs(), cluster.errors_in_logs()[:20]
