"""One server, one lease at any instant, through the API under
concurrency: 20 threads on two managers race to create pre-created
``virtual:instance`` leases (microversion 1.4) naming the same server
over overlapping windows, on MariaDB and PostgreSQL.

- Round one: 20 creates whose windows all share one instant, naming a
  server never named before (so the 20 also race to make its ledger
  inventory row, ``climate.db.servers.ensure``): exactly one is granted,
  19 are refused with the 409 naming the server, none fails.
- Round two: 200 creates naming another new server over random windows
  on a 30-minute grid, then 40 moves of granted leases: the granted
  windows never overlap (a brute-force sweep of ``ledger_bookings``:
  ``SERVER`` never above 1), and every refusal overlaps a granted lease
  (refusals are never spurious: leases are never deleted here).
- Round three: 20 creates naming the first server again (its row is
  there: only the ledger's lock orders them) over one instant: exactly
  one is granted.

Every granted lease holds ``SERVER = 1`` on ``server:<id>`` over its
window and its slot; every refused create left nothing.  The hosts have
room for every slot: only the server rule refuses.  The managers run
the static inventory ([hosts] inventory = static) made to answer for
servers by a ``sitecustomize`` (Nova is not called: the static backend
acts nowhere).  The same run with the ledger's lock removed (up to three
rounds three) holds a server twice: the check can fail.  (Round one
stays exact even then: the 20 inserts of the new inventory row wait for
the first inserter's commit.)
"""

import concurrent.futures
import datetime
import random
import threading
import time
import uuid

import pytest

from climate.tests.functional import concurrency
from climate.tests.functional import ledger_sweep
from climate.tests.functional import procs

THREADS = concurrency.THREADS  # 20
CREATES = 200
MOVES = 40
HOSTS = 4
#: Room for every slot of every lease: 64 x 1-VCPU slots per host.
HOST_FACTS = {'vcpus': 64, 'memory_mb': 65536, 'local_gb': 640}
PROJECT = 'ft-project'
#: What the test needs, whatever the default list holds.
PLUGINS = {'plugins': ['noop', 'physical.host.plugin',
                       'virtual.instance.plugin']}

SERVERS = """\
# test only: the static instance inventory answers for any server id as
# a server of project %(project)s with a 1-VCPU flavor (no Nova)
from climate.plugins.virtual_instance.backends import static


def _server(self, server_id):
    return {'id': server_id, 'project_id': %(project)r,
            'status': 'SHELVED_OFFLOADED',
            'flavor': {'id': 'ft.tiny', 'vcpus': 1, 'memory_mb': 256,
                       'disk_gb': 1, 'resources': {}, 'traits': {}}}


static.StaticInstanceBackend.holds_servers = True
static.StaticInstanceBackend.server = _server
""" % {'project': PROJECT}

UNLOCK = concurrency.UNLOCK


def _body(name, server_id, start, end):
    return {'name': name, 'events': [], 'start_date': procs.iso(start),
            'end_date': procs.iso(end),
            'reservations': [{'resource_type': 'virtual:instance',
                              'server_id': server_id}]}


def _window(lease):
    return tuple(datetime.datetime.strptime(lease[k], '%Y-%m-%dT%H:%M:%S.%f')
                 for k in ('start_date', 'end_date'))


def _overlap(a, b):
    return a[0] < b[1] and b[0] < a[1]


def _run(url, work, items):
    """``work(client, item)`` for each item, THREADS at a time, one
    client per thread (at microversion 1.4); bounded by the volume
    test's DEADLINE."""
    deadline = time.monotonic() + concurrency.DEADLINE
    local = threading.local()
    clients, lock = [], threading.Lock()

    def one(item):
        assert time.monotonic() < deadline, 'took over %ds' % (
            concurrency.DEADLINE)
        if getattr(local, 'client', None) is None:
            local.client = procs.Client(url, project=PROJECT, version='1.4')
            with lock:
                clients.append(local.client)
        return work(local.client, item)

    try:
        with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:
            return list(pool.map(one, items))
    finally:
        for client in clients:
            client.close()


def _held(db, server_id):
    """``{lease name: [(start, end)]}`` of the server's bookings."""
    found = {}
    for name, start, end in db.query(
            'SELECT l.name, b.start_date, b.end_date FROM ledger_bookings b '
            'JOIN leases l ON l.id = b.lease_id WHERE b.provider_id = :p '
            "AND b.resource_class = 'SERVER' AND b.amount = 1",
            p='server:' + server_id):
        found.setdefault(name, []).append((start, end))
    return found


def _common_instant(rng, prefix, server_id, instant):
    """THREADS bodies naming ``server_id`` whose windows all hold
    ``instant``."""
    bodies = []
    for i in range(THREADS):
        start = instant - datetime.timedelta(minutes=30 * rng.randint(0, 8))
        end = instant + datetime.timedelta(minutes=30 * rng.randint(1, 8))
        bodies.append(_body('%s-%02d' % (prefix, i), server_id, start, end))
    return bodies


@pytest.mark.parametrize('locking', [True, False],
                         ids=['locked', 'lock-removed'])
def test_one_server_is_held_by_one_lease_at_any_instant(climate, tmp_path,
                                                        locking):
    site = tmp_path / 'site'
    site.mkdir()
    (site / 'sitecustomize.py').write_text(
        SERVERS + ('' if locking else '\n' + UNLOCK))
    cluster = climate.start(managers=2, api_threads=8,
                            pythonpath=[str(site)], manager_opts=PLUGINS)
    db = climate.database
    admin = climate.client()
    for i in range(HOSTS):
        admin.request('POST', '/v1/os-hosts', expect=(201,),
                      json=dict(HOST_FACTS, name='srv-host-%02d' % i))
    base = procs.utcnow().replace(microsecond=0, second=0) + \
        datetime.timedelta(days=30)
    # without its lock the ledger's writers also deadlock on MariaDB's gap
    # locks, more often than the transaction's retries absorb: such a
    # create is refused whole (500), which only the unlocked run tolerates
    answers = (201, 409) if locking else (201, 409, 500)
    # the holder is named: it is a lease of the caller's project (without
    # the lock, MariaDB's plain reads answer from the transaction's
    # snapshot: the refusal may not find the holder's inventory or lease)
    refusal = 'Conflict: server %s is already held by lease ' if locking \
        else 'Conflict: '

    def create(client, body):
        resp = client.request('POST', '/v1/leases', expect=answers,
                              json=body)
        if resp.status_code == 201:
            return body['name'], 201, resp.json()['lease']
        if resp.status_code == 409:
            error = resp.json()
            server_id = body['reservations'][0]['server_id']
            assert error['error_name'] == 'Conflict' and \
                error['error_message'].startswith(
                    refusal.replace('%s', server_id)), resp.text
        return body['name'], resp.status_code, None

    def run(work, items):
        return _run(cluster.url, work, items)

    def winners(outcomes):
        return sorted(name for name, code, _l in outcomes if code == 201)

    # -- round one: a new server, every window holding one instant -------
    first_server = str(uuid.uuid4())
    rng = random.Random(31)
    outcomes = run(create, _common_instant(
        rng, 'one', first_server, base + datetime.timedelta(hours=4)))
    one = winners(outcomes)
    codes = sorted(code for _n, code, _l in outcomes)
    inventories = db.scalar(
        'SELECT count(*) FROM ledger_inventories WHERE provider_id = :p',
        p='server:' + first_server)
    print('\n%s, lock %s: round one (a new server, one instant): %s' % (
        db.engine_name, 'on' if locking else 'off',
        {c: codes.count(c) for c in sorted(set(codes))}))
    # the 20 made its inventory row at once: one row, no failure
    assert inventories == 1, inventories
    if locking:
        assert codes == [201] + [409] * (THREADS - 1), codes
        assert sorted(_held(db, first_server)) == one

    # -- round two: another new server, random windows, then moves -------
    second_server = str(uuid.uuid4())
    rng = random.Random(37)
    bodies = []
    for i in range(CREATES):
        start = base + datetime.timedelta(minutes=30 * rng.randint(0, 96))
        end = start + datetime.timedelta(minutes=30 * rng.randint(1, 12))
        bodies.append(_body('two-%03d' % i, second_server, start, end))
    results = run(create, bodies)
    outcomes += results
    granted = {name: lease for name, code, lease in results if code == 201}
    refused = [body for body, (_n, code, _l) in zip(bodies, results)
               if code != 201]

    def move(client, lease):
        shift = datetime.timedelta(minutes=30 * rng.randint(-4, 4))
        start, end = _window(lease)
        resp = client.request('PUT', '/v1/leases/%s' % lease['id'],
                              expect=(200, 409) + answers[2:], json={
                                  'start_date': procs.iso(start + shift),
                                  'end_date': procs.iso(end + shift)})
        if resp.status_code == 409:
            assert resp.json()['error_message'].startswith(
                refusal.replace('%s', second_server)), resp.text
        return resp.status_code

    ordered = [granted[name] for name in sorted(granted)]
    moves = run(move, [rng.choice(ordered) for _ in range(MOVES)]
                if ordered else [])
    print('%s, lock %s: round two (random windows): %d creates -> %d '
          'granted, %d refused; %d moves: %d ok, %d refused' % (
              db.engine_name, 'on' if locking else 'off', CREATES,
              len(granted), len(refused), len(moves), moves.count(200),
              moves.count(409)))

    # -- round three: the first server again (its row is there: only the
    # ledger's lock orders the bookers), one instant each time -----------
    three = []
    for attempt in range(1 if locking else 3):
        if not locking and [o for o in ledger_sweep.overbooked(db.engine)[0]
                            if o[1] == 'SERVER']:
            break
        results = run(create, _common_instant(
            random.Random(attempt), 'three%d' % attempt, first_server,
            base + datetime.timedelta(days=5 + attempt)))
        outcomes += results
        three.append(winners(results))
    print('%s, lock %s: round three (a known server, one instant): %s '
          'granted' % (db.engine_name, 'on' if locking else 'off',
                       [len(w) for w in three]))

    over, rows = ledger_sweep.overbooked(db.engine)
    server_over = [o for o in over if o[1] == 'SERVER']
    print('%s, lock %s: %d booking rows, %d overbooked instants (%d of a '
          'server)' % (db.engine_name, 'on' if locking else 'off', rows,
                       len(over), len(server_over)))
    if not locking:
        assert server_over, 'the server held twice without the lock: ' \
                            'the test is blind'
        return
    assert [len(w) for w in three] == [1], three
    # every 201 holds its server over its lease's window (moved with it),
    # once, and its slot; every refusal left nothing
    now_held = {row.name: (row.start_date, row.end_date) for row in db.query(
        'SELECT name, start_date, end_date FROM leases')}
    expected = set(winners(outcomes))
    assert set(now_held) == expected, (sorted(set(now_held) - expected)[:5],
                                       sorted(expected - set(now_held))[:5])
    held = _held(db, first_server)
    held.update(_held(db, second_server))
    assert set(held) == expected, sorted(set(held) ^ expected)[:5]
    for name, windows in held.items():
        assert windows == [now_held[name]], (name, windows, now_held[name])
    assert over == [], over[:10]
    slots = db.scalar(
        "SELECT count(*) FROM ledger_bookings WHERE resource_class = 'VCPU'")
    assert slots == len(expected), (slots, len(expected))
    # refusals are never spurious: each overlaps the window a lease was
    # granted at its create (the creates ran before the moves; nothing is
    # deleted)
    created = [_window(lease) for lease in granted.values()]
    spurious = [b['name'] for b in refused if not any(
        _overlap((datetime.datetime.strptime(b['start_date'], procs.ISO),
                  datetime.datetime.strptime(b['end_date'], procs.ISO)), w)
        for w in created)]
    assert spurious == [], spurious[:10]
    # real contention, both answers
    assert len(granted) >= 10 and len(refused) >= 60, (
        len(granted), len(refused))
    assert not cluster.errors_in_logs(), cluster.errors_in_logs()[:20]
