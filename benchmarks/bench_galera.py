"""physical:host creates on a 3-node Galera cluster against one MariaDB
server, side by side in one run.

Two Climates run at once, each climate-api (2 threads) and three
climate-managers: one on the machine's MariaDB server, one on the
Galera cluster of ``tools/galera-cluster.sh`` (started if need be) with a
manager per node.  Each has the same static inventory of hosts.

* **Latency**: creates of one host for an hour at a random time within a
  year (no contention: every create books), one client, in interleaved
  rounds (one round on each in turn, so that drift hits both alike):
  p50/p90/p99 of each and their ratio.
* **Contention** (the issue's scene): 24 threads, 240 creates of 1-2 of
  6 hosts for 1-3 h within three days on each: the answers (201, 409,
  503), the overbooked instants (must be 0) and the conflicts the
  database reported (Galera: certification failures and brute-force
  aborts summed over the nodes; MariaDB: InnoDB deadlocks), each a
  transaction re-run, per create.
"""

import concurrent.futures
import datetime
import random
import time

import common
from climate.tests.functional import ledger_sweep
from climate.tests.functional import procs

HOSTS = 60
ROUNDS = 6
PER_ROUND = 50
WARMUP = 20
CONTENDED_HOSTS = 6
CONTENDED_CREATES = 240
THREADS = 24
DEADLINE = 300


def _register(env, count, prefix):
    """Hosts ``prefix-NNN`` with the property ``pool = prefix``."""
    admin = env.client()
    try:
        for i in range(count):
            admin.request('POST', '/v1/os-hosts', expect=(201,), json={
                'name': '%s-%03d' % (prefix, i), 'pool': prefix})
    finally:
        admin.close()


def _body(rng, base, name, hosts=1, days=365, hours=(1, 1), pool='lat'):
    start = base + datetime.timedelta(minutes=rng.randint(0, days * 24 * 60))
    end = start + datetime.timedelta(hours=rng.randint(*hours))
    return {'name': name, 'events': [], 'start_date': procs.iso(start),
            'end_date': procs.iso(end),
            'reservations': [{
                'resource_type': 'physical:host', 'min': hosts,
                'max': hosts,
                'resource_properties': '["=", "$pool", "%s"]' % pool}]}


def _conflicts(database):
    """Conflicts the database has counted so far (summed over nodes)."""
    return sum(int(value) for url in database.node_urls
               for value in procs.server_status(url, (
                   'wsrep_local_cert_failures', 'wsrep_local_bf_aborts',
                   'Innodb_deadlocks')).values())


def _latency(envs, base):
    clients = {name: env.latency_client() for name, env in envs.items()}
    rng = random.Random(3)
    times = {name: [] for name in envs}
    try:
        for name, client in clients.items():
            for i in range(WARMUP):
                client.request('POST', '/v1/leases', expect=(201,),
                               json=_body(rng, base, 'warm-%s-%d' % (
                                   name, i)))
        for rnd in range(ROUNDS):
            for name, client in clients.items():
                for i in range(PER_ROUND):
                    body = _body(rng, base, 'lat-%d-%d' % (rnd, i))
                    began = time.perf_counter()
                    client.request('POST', '/v1/leases', expect=(201,),
                                   json=body)
                    times[name].append(
                        (time.perf_counter() - began) * 1000)
    finally:
        for client in clients.values():
            client.close()
    return times


def _contention(env, base):
    rng = random.Random(9)
    bodies = [_body(rng, base, 'hot-%03d' % i, hosts=rng.randint(1, 2),
                    days=3, hours=(1, 3), pool='hot')
              for i in range(CONTENDED_CREATES)]
    before = _conflicts(env.database)
    deadline = time.monotonic() + DEADLINE
    url = env.cluster.url

    def create(body):
        assert time.monotonic() < deadline, 'took over %ds' % DEADLINE
        client = procs.Client(url)
        try:
            return client.request('POST', '/v1/leases',
                                  expect=(201, 409, 503),
                                  json=body).status_code
        finally:
            client.close()

    began = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:
        codes = list(pool.map(create, bodies))
    took = time.monotonic() - began
    conflicts = _conflicts(env.database) - before
    over, _rows = ledger_sweep.overbooked(env.database.engine)
    return codes, conflicts, len(over), took


def run():
    procs.galera('up')
    print('physical:host creates: one MariaDB server against a 3-node '
          'Galera cluster (a manager per node), side by side')
    with common.Climate(managers=3, engine=procs.MARIADB) as single, \
            common.Climate(managers=3, engine=procs.GALERA) as galera:
        envs = {'mariadb': single, 'galera': galera}
        for name, env in envs.items():
            _register(env, HOSTS, 'lat')
        base = procs.utcnow().replace(microsecond=0) + datetime.timedelta(
            days=2)
        times = _latency(envs, base)
        for name in envs:
            print('  %-8s create %s' % (name, common.summary(times[name])))
        print('  galera / mariadb: p50 x%.2f, p99 x%.2f' % tuple(
            common.percentile(times['galera'], pct) /
            common.percentile(times['mariadb'], pct) for pct in (50, 99)))
        for name, env in envs.items():
            _register(env, CONTENDED_HOSTS, 'hot')
        for name, env in envs.items():
            codes, conflicts, over, took = _contention(env, base)
            print('  %-8s %d creates from %d threads in %.1f s: %d x 201, '
                  '%d x 409, %d x 503; %d conflicts re-run (%.2f per '
                  'create); %d overbooked instants' % (
                      name, len(codes), THREADS, took, codes.count(201),
                      codes.count(409), codes.count(503), conflicts,
                      conflicts / len(codes), over))
