"""Stacks are booked whole or not at all, and never overbook: 160
competing ``virtual:stack`` lease creates from 20 threads on two
managers, over random overlapping windows, each a template of a group of
servers, a volume and sometimes a floating IP, on five small hosts, one
volume pool and two addresses of the static inventories, leave no
instant at which any provider's bookings exceed its usable capacity (a
brute-force sweep of ``ledger_bookings``), on MariaDB and PostgreSQL.

Each granted (201) lease holds its stack's reservation and one part per
need, each part naming the stack (``reservations.part_of``) and holding
what the template asks over the lease's window; each refused one (409 for
servers or gigabytes, Blazar's 400 for addresses, the message starting
with the template resources that did not fit) left nothing behind: no
lease, no part, no booking.
"""

import datetime
import random
import time

import pytest

from climate.tests.functional import concurrency
from climate.tests.functional import ledger_sweep
from climate.tests.functional import procs

CREATES = 160
HOSTS = 5
#: Each host holds two m1.small (1 VCPU, 2048 MB, 20 GB) of [stacks]
#: static_flavors.
HOST_FACTS = {'vcpus': 4, 'memory_mb': 4096, 'local_gb': 40}
POOL = {'name': 'stacks@lvm#lvm', 'total_capacity_gb': 100}
ADDRESSES = ['172.24.4.10', '172.24.4.11']
NET = 'ext-net'
THREADS = 20
REFUSAL = "the template's "


def _template(rng, i):
    resources = {
        'web': {'type': 'OS::Heat::ResourceGroup', 'properties': {
            'count': rng.randint(1, 2),
            'resource_def': {'type': 'OS::Nova::Server', 'properties': {
                'flavor': 'm1.small', 'image': 'cirros'}}}},
        'data': {'type': 'OS::Cinder::Volume',
                 'properties': {'size': rng.randint(10, 40)}},
        'net': {'type': 'OS::Neutron::Net'},
    }
    if i % 2 == 0:
        resources['ip'] = {'type': 'OS::Neutron::FloatingIP',
                           'properties': {'floating_network': NET}}
    return {'heat_template_version': '2018-08-31', 'resources': resources}


def _bodies(base, rng):
    bodies = []
    for i in range(CREATES):
        start = base + datetime.timedelta(minutes=30 * rng.randint(0, 40))
        end = start + datetime.timedelta(minutes=30 * rng.randint(2, 12))
        bodies.append({'name': 'stack-%03d' % i, 'events': [],
                       'start_date': procs.iso(start),
                       'end_date': procs.iso(end),
                       'reservations': [{'resource_type': 'virtual:stack',
                                         'template': _template(rng, i)}]})
    return bodies


def _wanted(template):
    """What each part type of a template holds: {type: (class, amount)}."""
    res = template['resources']
    wanted = {
        'virtual:instance': ('MEMORY_MB',
                             2048 * res['web']['properties']['count']),
        'virtual:volume': ('VOLUME_GB', res['data']['properties']['size'])}
    if 'ip' in res:
        wanted['virtual:floatingip'] = ('FLOATING_IP', 1)
    return wanted


def _check_granted(db, granted):
    """Each granted lease: its stack and one part per need, each part
    naming the stack and holding what the template asks over the lease's
    window.  Returns the problems."""
    rows = db.query(
        'SELECT l.name, r.id, r.resource_type, r.part_of FROM leases l '
        'JOIN reservations r ON r.lease_id = l.id')
    by_lease = {}
    for row in rows:
        by_lease.setdefault(row.name, []).append(row)
    found = concurrency.holdings(db)
    problems = []
    for name, body in granted.items():
        reservations = by_lease.get(name, [])
        stacks = [r for r in reservations
                  if r.resource_type == 'virtual:stack']
        wanted = _wanted(body['reservations'][0]['template'])
        parts = {r.resource_type: r for r in reservations
                 if r.resource_type != 'virtual:stack'}
        if len(stacks) != 1 or sorted(parts) != sorted(wanted) or \
                len(reservations) != len(wanted) + 1 or any(
                    p.part_of != stacks[0].id for p in parts.values()):
            problems.append((name, 'reservations', reservations))
            continue
        window = concurrency.window_of(body)
        for rtype, (cls, amount) in wanted.items():
            held = [b for b in found[name].bookings
                    if b.reservation == parts[rtype].id and b.cls == cls]
            if sum(b.amount for b in held) != amount or any(
                    (b.start, b.end) != window for b in held):
                problems.append((name, rtype, held))
    return problems


def _inventories(climate):
    """The hosts, the pool and the addresses; returns the admin's
    client."""
    admin = climate.client(version='1.5')
    for i in range(HOSTS):
        admin.request('POST', '/v1/os-hosts', expect=(201,),
                      json=dict(HOST_FACTS, name='stack-host-%d' % i))
    admin.request('POST', '/v1/volume-pools', expect=(201,), json=POOL)
    for address in ADDRESSES:
        admin.request('POST', '/v1/floatingips', expect=(201,), json={
            'floating_network_id': NET, 'floating_ip_address': address})
    return admin


def test_competing_stack_reservations_are_whole_and_never_overbook(
        climate):
    cluster = climate.start(managers=2, api_threads=8)
    db = climate.database
    admin = _inventories(climate)
    base = procs.utcnow().replace(microsecond=0) + datetime.timedelta(
        days=30)

    def create(client, body):
        resp = client.request('POST', '/v1/leases',
                              expect=(201, 400, 409, 500), json=body)
        # a 500 fails the test with the services' tracebacks, its cause
        assert resp.status_code != 500, '\n'.join(
            [resp.text] + cluster.errors_in_logs()[-60:])
        if resp.status_code != 201:
            message = resp.json()['error_message']
            assert message.startswith(REFUSAL), resp.text
            return body['name'], resp.status_code, message.split('): ')[0]
        return body['name'], 201, None

    began = time.monotonic()
    bodies = _bodies(base, random.Random(31))
    outcomes = concurrency.run(cluster.url, create, bodies, threads=THREADS)
    took = time.monotonic() - began
    by_name = {body['name']: body for body in bodies}
    granted = {name: by_name[name] for name, code, _w in outcomes
               if code == 201}
    refusals = {}
    for _name, code, what in outcomes:
        if code != 201:
            refusals[what] = refusals.get(what, 0) + 1

    over, rows = ledger_sweep.overbooked(db.engine)
    problems = _check_granted(db, granted)
    print('\n%s: %d stack creates from %d threads in %.1fs -> %d granted, '
          'refused %s; %d booking rows, %d overbooked instants' % (
              db.engine_name, len(outcomes), THREADS, took,
              len(granted), refusals, rows, len(over)))
    concurrency.assert_only_granted_written(db, granted)
    assert problems == [], problems[:10]
    assert over == [], over[:10]
    # real contention: grants and refusals (which need runs out first
    # depends on the threads' interleaving)
    assert len(granted) >= 20, len(granted)
    assert sum(refusals.values()) >= 40, refusals
    # more servers than every host holds: refused for them, nothing written
    too_many = _bodies(base, random.Random(5))[0]
    too_many['name'] = 'too-many'
    resources = too_many['reservations'][0]['template']['resources']
    resources.pop('ip', None)  # (addresses are booked before servers)
    resources['web']['properties']['count'] = 2 * HOSTS + 1
    resp = admin.request('POST', '/v1/leases', expect=(409,), json=too_many)
    assert resp.json()['error_message'].startswith(
        "the template's resource web/resource_def (virtual:instance): "), \
        resp.text
    concurrency.assert_only_granted_written(db, granted)
    assert not cluster.errors_in_logs(), cluster.errors_in_logs()[:20]


@pytest.mark.parametrize('db_engine', [procs.MARIADB])
def test_without_the_ledger_lock_stacks_do_overbook(climate, tmp_path):
    """The sweep above can fail: the same stack creates from managers
    whose ledger books without its lock leave overbooked instants."""
    cluster = climate.start(
        managers=2, api_threads=8,
        pythonpath=concurrency.pythonpath(tmp_path, False))
    db = climate.database
    _inventories(climate)
    base = procs.utcnow().replace(microsecond=0) + datetime.timedelta(
        days=30)
    answers = concurrency.answers(False, 400, 409)

    def create(client, body):
        return client.request('POST', '/v1/leases', expect=answers,
                              json=body).status_code

    def one_round(i):
        # each round a year after the last: the earlier rounds' windows
        # are full, no race is left there
        bodies = _bodies(base + datetime.timedelta(days=365 * i),
                         random.Random(60 + i))
        return concurrency.run(cluster.url, create, bodies[:CREATES // 2],
                               threads=THREADS)

    codes = one_round(0)
    rounds = concurrency.more_rounds(
        db, False, lambda i: codes.extend(one_round(i + 1)))
    over, rows = ledger_sweep.overbooked(db.engine)
    print('\nlock removed, %d round(s): %d stack creates, %d granted; %d '
          'booking rows, %d overbooked instants' % (
              rounds, len(codes), codes.count(201), rows, len(over)))
    assert over, 'no overbooking without the lock: the test is blind'
