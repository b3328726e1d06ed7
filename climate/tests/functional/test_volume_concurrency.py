"""No overbooking of volume pools through the API: 300 competing
``virtual:volume`` lease creates from 20 threads on two managers, over
random overlapping windows, for a mix of sizes and counts (some pinned to
a backend by ``resource_properties``) on three small pools of the static
inventory, leave no instant at which a pool's bookings of ``VOLUME_GB``
or ``VOLUME`` exceed its usable capacity -- a brute-force sweep of
``ledger_bookings`` -- on MariaDB and PostgreSQL.

Each granted (201) reservation holds exactly its one unit of the
contract's shape (``VOLUME_GB = size_gb``, ``VOLUME = count or size_gb``)
on one matching reservable pool, over the lease's window, and names that
pool; each refused one (409, Blazar's sentence) left nothing behind.
The same run with the ledger's lock removed (in the managers, through a
``sitecustomize``) does overbook: the check can fail.
"""

import datetime
import math
import random
import time

import pytest

from climate.tests.functional import concurrency
from climate.tests.functional import ledger_sweep
from climate.tests.functional import procs

CREATES = 300
THREADS = concurrency.THREADS  # 20
DEADLINE = concurrency.DEADLINE
#: The pools of the static inventory ([volumes] inventory = static, the
#: default): small, so that most requests compete.  The usable VOLUME_GB
#: is floor(total * (1 - reserved% / 100) * ratio): 100, 120, 67.
POOLS = [
    {'name': 'stor1@lvm#fast', 'total_capacity_gb': 100,
     'capabilities': {'max_volumes': 40, 'tier': 'gold'}},
    {'name': 'stor1@lvm#bulk', 'total_capacity_gb': 80,
     'reserved_percentage': 25, 'max_over_subscription_ratio': 2.0,
     'capabilities': {'max_volumes': 60}},
    {'name': 'stor2@ceph#rbd', 'total_capacity_gb': 50,
     'reserved_percentage': 10, 'max_over_subscription_ratio': 1.5,
     'capabilities': {'max_volumes': 30}},
]
#: Large and free, but not reservable: never booked.
IDLE_POOL = {'name': 'stor3@lvm#idle', 'total_capacity_gb': 100000,
             'reservable': False}
REFUSAL = 'Not enough volume capacity available: '

UNLOCK = concurrency.UNLOCK


@pytest.fixture(params=procs.MULTI_WRITER_ENGINES)
def db_engine(request):
    # and on a multi-writer Galera cluster, a manager per node
    return request.param


def _usable_gb(pool):
    return int(math.floor(
        pool['total_capacity_gb'] *
        (1 - pool.get('reserved_percentage', 0) / 100.0) *
        pool.get('max_over_subscription_ratio', 1.0) + 1e-9))


def _reservation(rng, i):
    size = rng.randint(4, 48)
    reservation = {'resource_type': 'virtual:volume', 'size_gb': size}
    kind = i % 4
    if kind == 1:
        reservation['count'] = 1
    elif kind == 2:
        reservation['count'] = rng.randint(1, min(size, 12))
    # kind 0 and 3: no count (the ledger counts size_gb volumes)
    pin = i % 5
    if pin == 1:
        reservation['resource_properties'] = '["=", "$backend", "ceph"]'
    elif pin == 2:
        reservation['resource_properties'] = '["=", "$backend", "lvm"]'
    return reservation


def _bodies(base, rng, prefix='vol'):
    bodies = []
    for i in range(CREATES):
        start = base + datetime.timedelta(minutes=30 * rng.randint(0, 48))
        end = start + datetime.timedelta(minutes=30 * rng.randint(2, 16))
        bodies.append({'name': '%s-%03d' % (prefix, i), 'events': [],
                       'start_date': procs.iso(start),
                       'end_date': procs.iso(end),
                       'reservations': [_reservation(rng, i)]})
    return bodies


def _check_granted(db, granted, pools):
    """Each granted lease holds one reservation whose bookings are the
    contract's one unit on one matching pool over the lease's window, and
    names that pool.  Returns the problems."""
    by_provider = {'volume_pool:%d' % p['id']: p for p in pools}
    found = concurrency.holdings(db)
    problems = []
    for name, body in granted.items():
        entry = found.get(name)
        if entry is None or len(entry.reservations) != 1:
            problems.append((name, 'reservations', entry))
            continue
        asked = body['reservations'][0]
        window = concurrency.window_of(body)
        bookings = entry.bookings
        providers = {b.provider for b in bookings}
        want = {('VOLUME_GB', asked['size_gb']),
                ('VOLUME', asked.get('count') or asked['size_gb'])}
        got = {(b.cls, b.amount) for b in bookings}
        if len(providers) != 1 or len(bookings) != 2 or got != want or \
                any((b.start, b.end) != window for b in bookings):
            problems.append((name, 'bookings', asked, bookings))
            continue
        pool = by_provider.get(providers.pop())
        pin = asked.get('resource_properties')
        stored = next(iter(entry.reservations.values()))
        if pool is None or not pool['reservable'] or (
                pin and '"%s"' % pool['backend'] not in pin) or \
                stored.get('pool') != pool['name']:
            problems.append((name, 'pool', pin, pool, stored))
    return problems


@pytest.mark.parametrize('locking', [True, False],
                         ids=['locked', 'lock-removed'])
def test_competing_volume_reservations_never_overbook_a_pool(
        climate, tmp_path, locking):
    cluster = climate.start(
        managers=2, api_threads=8,
        pythonpath=concurrency.pythonpath(tmp_path, locking))
    db = climate.database
    admin = climate.client(version='1.5')
    pools = [admin.request('POST', '/v1/volume-pools', expect=(201,),
                           json=body).json()['volume_pool']
             for body in POOLS + [IDLE_POOL]]
    # the sweep's capacities are the pools' as the contract computes them
    inventory = {(r.provider_id, r.resource_class): r.total for r in db.query(
        'SELECT provider_id, resource_class, total FROM ledger_inventories')}
    for pool, body in zip(pools, POOLS):
        provider = 'volume_pool:%d' % pool['id']
        assert pool['capacity_gb'] == _usable_gb(body), pool
        assert inventory[provider, 'VOLUME_GB'] == _usable_gb(body)
        assert inventory[provider, 'VOLUME'] == \
            body['capabilities']['max_volumes']
    base = procs.utcnow().replace(microsecond=0) + datetime.timedelta(
        days=30)

    # 500 only without the lock (MariaDB's deadlocks: see concurrency)
    answers = concurrency.answers(locking, 409, database=db)

    def create(client, body):
        resp = client.request('POST', '/v1/leases', expect=answers,
                              json=body)
        if resp.status_code == 409:
            error = resp.json()
            assert error['error_name'] == 'NotEnoughVolumeCapacity' and \
                error['error_message'].startswith(REFUSAL), resp.text
        return body['name'], resp.status_code

    began = time.monotonic()
    bodies = _bodies(base, random.Random(23))
    outcomes = concurrency.run(cluster.url, create, bodies)
    took = time.monotonic() - began
    first_round = [code for _name, code in outcomes]

    def more(extra):
        # without the lock a race is likely, not certain: more rounds,
        # while none is overbooked yet, each over windows a year later
        # (the first round's windows are full: no race left there)
        later = base + datetime.timedelta(days=365 * (extra + 1))
        added = _bodies(later, random.Random(extra), prefix='more%d' % extra)
        bodies.extend(added)
        outcomes.extend(concurrency.run(cluster.url, create, added))

    rounds = concurrency.more_rounds(db, locking, more)
    by_name = {body['name']: body for body in bodies}
    granted = {name: by_name[name] for name, code in outcomes if code == 201}
    refused = [name for name, code in outcomes if code != 201]

    over, rows = ledger_sweep.overbooked(db.engine)
    problems = _check_granted(db, granted, pools)
    idle = db.scalar('SELECT count(*) FROM ledger_bookings WHERE '
                     'provider_id = :p', p='volume_pool:%d' % pools[-1]['id'])
    kinds = {'no count': 0, 'count': 0, 'pinned': 0}
    for body in granted.values():
        asked = body['reservations'][0]
        kinds['count' if asked.get('count') else 'no count'] += 1
        kinds['pinned'] += 'resource_properties' in asked
    print('\n%s, lock %s: %d creates (%d round(s)) from %d threads, the '
          'first in %.1fs -> %d granted %s, %d refused; %d booking rows, %d '
          'overbooked instants %s' % (
              db.engine_name, 'on' if locking else 'off', len(outcomes),
              rounds, THREADS, took, len(granted), kinds, len(refused), rows,
              len(over), sorted({(p, c) for p, c, *_x in over})))
    # every 201 holds its booking, every refusal wrote nothing
    concurrency.assert_only_granted_written(db, granted)
    assert problems == [], problems[:10]
    assert idle == 0, 'a pool that is not reservable was booked'
    # real contention, both answers given, every kind of request granted
    assert first_round.count(201) >= 30, first_round.count(201)
    assert min(kinds.values()) >= 5, kinds
    if locking:
        # (without the lock more creates overbook instead of being refused)
        assert first_round.count(409) >= 60, first_round.count(409)
        assert over == [], over[:10]
        assert not cluster.errors_in_logs(), cluster.errors_in_logs()[:20]
    else:
        assert over, 'no overbooking without the lock: the test is blind'
