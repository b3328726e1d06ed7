"""No overbooking through the API: 300 lease creates and moves from 20
threads on two managers, mixing ``virtual:instance`` slots and whole
``physical:host`` reservations over the same six hosts, leave no instant
at which a host's bookings of any class exceed its usable capacity --
checked by a brute-force sweep of ``ledger_bookings``, on MariaDB and
PostgreSQL.  The same run with the ledger's lock removed (in the managers,
through a ``sitecustomize``) does overbook: the check can fail."""

import datetime
import random

import pytest

from climate.tests.functional import concurrency
from climate.tests.functional import ledger_sweep
from climate.tests.functional import procs
from climate.tests.functional import test_host_allocation as contention

HOSTS = 6
CREATES = 260
MOVES = 40
THREADS = 20
HOST_FACTS = {'vcpus': 16, 'memory_mb': 65536, 'local_gb': 400}


@pytest.fixture(params=procs.MULTI_WRITER_ENGINES)
def db_engine(request):
    # and on a multi-writer Galera cluster, a manager per node
    return request.param


def _reservation(rng, i):
    if i % 3 == 0:
        low = rng.randint(1, 2)
        return {'resource_type': 'physical:host', 'min': low, 'max': low}
    return {'resource_type': 'virtual:instance',
            'amount': rng.randint(1, 6), 'vcpus': rng.choice([2, 4, 8]),
            'memory_mb': rng.choice([4096, 8192, 16384]),
            'disk_gb': rng.choice([10, 40, 80]),
            'affinity': rng.choice([None, True, False])}


def _bodies(base, rng, prefix='mixed'):
    bodies = []
    for i in range(CREATES):
        start = base + datetime.timedelta(minutes=30 * rng.randint(0, 60))
        end = start + datetime.timedelta(hours=rng.randint(1, 10))
        bodies.append({'name': '%s-%03d' % (prefix, i), 'events': [],
                       'start_date': procs.iso(start),
                       'end_date': procs.iso(end),
                       'reservations': [_reservation(rng, i)]})
    return bodies


@pytest.mark.parametrize('locking', [True, False],
                         ids=['locked', 'lock-removed'])
def test_mixed_host_and_instance_reservations_never_overbook(
        climate, tmp_path, locking):
    cluster = climate.start(
        managers=2, api_threads=8,
        pythonpath=concurrency.pythonpath(tmp_path, locking))
    db = climate.database
    admin = climate.client()
    for i in range(HOSTS):
        admin.request('POST', '/v1/os-hosts', expect=(201,),
                      json=dict(HOST_FACTS, name='mixed-%02d' % i))
    rng = random.Random(17)
    base = procs.utcnow().replace(microsecond=0) + datetime.timedelta(
        days=30)

    def factory():
        return procs.Client(cluster.url)

    # without its lock the ledger's writers also deadlock on MariaDB's gap
    # locks, more often than the transaction's retries absorb: such a
    # create is refused whole (500), which only the unlocked run tolerates
    answers = concurrency.answers(locking, 409, database=db)

    def create(client, body):
        resp = client.request('POST', '/v1/leases', expect=answers,
                              json=body)
        return resp.json()['lease'] if resp.status_code == 201 else None

    results = contention._run(factory, THREADS, create, _bodies(base, rng))
    created = [lease for lease in results if lease]
    first_round = len(created)
    if not locking:
        # without the lock a race is likely, not certain.  Up to three
        # more rounds while none is overbooked yet, each over windows a
        # year later (the first round's are full: no race left there).
        for extra in range(3):
            if ledger_sweep.overbooked(db.engine)[0]:
                break
            later = base + datetime.timedelta(days=365 * (extra + 1))
            results = contention._run(factory, THREADS, create, _bodies(
                later, random.Random(extra), prefix='more%d' % extra))
            created += [lease for lease in results if lease]

    def move(client, lease):
        shift = datetime.timedelta(minutes=30 * rng.randint(-6, 6))
        body = {key: procs.iso(datetime.datetime.strptime(
            lease[key], '%Y-%m-%dT%H:%M:%S.%f') + shift)
            for key in ('start_date', 'end_date')}
        return client.request('PUT', '/v1/leases/%s' % lease['id'],
                              expect=(200, 409) + answers[2:],
                              json=body).status_code

    codes = contention._run(factory, THREADS, move,
                            [rng.choice(created) for _ in range(MOVES)]
                            if created else [])
    over, rows = ledger_sweep.overbooked(db.engine)
    kinds = {}
    for lease in created:
        rtype = lease['reservations'][0]['resource_type']
        kinds[rtype] = kinds.get(rtype, 0) + 1
    leases = db.scalar('SELECT count(*) FROM leases')
    empty = db.query(
        'SELECT r.id FROM reservations r WHERE NOT EXISTS (SELECT 1 FROM '
        'ledger_bookings b WHERE b.reservation_id = r.id)')
    print('\n%s, lock %s: %d creates -> %s granted, %d refused; %d moves: '
          '%d ok, %d refused; %d booking rows, %d overbooked instants' % (
              db.engine_name, 'on' if locking else 'off', CREATES, kinds,
              CREATES - len(created), len(codes), codes.count(200),
              codes.count(409), rows, len(over)))
    assert leases == len(created), 'a refused create left a lease behind'
    assert empty == [], 'granted reservations without bookings: %s' % empty
    # real contention on both kinds
    assert kinds.get('physical:host', 0) >= 5, kinds
    assert kinds.get('virtual:instance', 0) >= 10, kinds
    assert first_round < CREATES, 'nothing was refused: no contention'
    if locking:
        assert over == [], over[:10]
        assert not cluster.errors_in_logs(), cluster.errors_in_logs()[:20]
    else:
        assert over, 'no overbooking without the lock: the test is blind'
