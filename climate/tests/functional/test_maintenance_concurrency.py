"""Maintenance windows under concurrency (microversion 1.16): 12 compute
hosts, 24 leases booked ahead, then 6 windows of 3 hosts each planned
and applied by an operator while 8 threads create 64 more leases over
the same days, on MariaDB, PostgreSQL and a multi-writer Galera cluster
(a manager per node).  Each window is planned with a dry run, each lease
it hits given the first of move, shorten, leave that its plan offers,
and applied; a 409 (a lease booked, moved or shortened since the plan)
is planned again, up to 8 times.

Afterwards:

- no host is booked twice at any instant (the ledger's brute-force
  sweep), the windows' own leases included;
- each window applied books each of its hosts over the whole window,
  and no other lease holds one of them then; every lease it hit went
  where the window says (moved off its hosts, ended before it, or left
  the host, which the window then does not take);
- a refused apply left nothing: no window row, no window lease; a
  window all of whose hits can only be left their hosts is refused as
  such (``MaintenanceNothingLeft``).
"""

import datetime
import random
import threading

import pytest

from climate.tests.functional import concurrency
from climate.tests.functional import procs

HOSTS = 12
BEFORE = 24
DURING = 64
THREADS = 8
V = '1.16'
ATTEMPTS = 8


@pytest.fixture(params=procs.MULTI_WRITER_ENGINES)
def db_engine(request):
    return request.param


def _lease(name, base, rng):
    start = base + datetime.timedelta(hours=rng.randint(0, 47))
    end = start + datetime.timedelta(hours=rng.randint(1, 6))
    count = rng.randint(1, 2)
    return {'name': name, 'start_date': procs.iso(start),
            'end_date': procs.iso(end), 'events': [],
            'reservations': [{'resource_type': 'physical:host',
                              'min': count, 'max': count}]}


def _choice(options):
    for action in ('move', 'shorten', 'leave'):
        if action in options:
            return action
    raise AssertionError(options)


def test_windows_take_their_hosts_and_never_overbook(climate):
    cluster = climate.start(managers=3)
    db = climate.database
    admin = procs.Client(cluster.url, version=V)
    hosts = []
    for i in range(HOSTS):
        hosts.append(admin.request('POST', '/v1/os-hosts', expect=(201,),
                                   json={'name': 'compute-%02d' % i}
                                   ).json()['host']['hypervisor_hostname'])
    rng = random.Random(1616)
    base = procs.utcnow().replace(microsecond=0, minute=0, second=0) + \
        datetime.timedelta(days=10)
    answers = concurrency.answers(True, 409, database=db)

    def create(client, body):
        resp = client.request('POST', '/v1/leases', expect=answers,
                              json=body)
        return body['name'], resp.status_code

    before = concurrency.run(cluster.url, create, [
        _lease('before-%02d' % i, base, rng) for i in range(BEFORE)],
        threads=4, version=V)
    windows = []
    for i in range(6):
        start = base + datetime.timedelta(hours=8 * i + rng.randint(0, 4))
        windows.append({
            'name': 'window-%d' % i, 'start_date': procs.iso(start),
            'end_date': procs.iso(start + datetime.timedelta(
                hours=rng.randint(2, 6))),
            'hosts': rng.sample(hosts, 3), 'reason': 'firmware'})

    applied, refused, attempts = {}, {}, []

    def operator():
        for window in windows:
            for attempt in range(ATTEMPTS):
                plan = admin.request('POST', '/v1/maintenance-windows',
                                     expect=(200,) + answers[1:],
                                     json=dict(window, dry_run=True))
                if plan.status_code != 200:
                    continue
                actions = {hit['lease_id']: _choice(hit['options'])
                           for hit in plan.json()['maintenance_window'][
                               'affected']}
                resp = admin.request('POST', '/v1/maintenance-windows',
                                     expect=answers,
                                     json=dict(window, actions=actions))
                attempts.append((window['name'], resp.status_code))
                if resp.status_code == 201:
                    applied[window['name']] = resp.json()[
                        'maintenance_window']
                    break
                refused[window['name']] = resp.json()
                if refused[window['name']]['error_name'] == \
                        'MaintenanceNothingLeft':
                    break  # its every lease keeps its host: a real no
    thread = threading.Thread(target=operator)
    thread.start()
    during = concurrency.run(cluster.url, create, [
        _lease('during-%02d' % i, base, rng) for i in range(DURING)],
        threads=THREADS, version=V)
    thread.join(timeout=300)
    assert not thread.is_alive(), 'the operator did not finish'
    concurrency.assert_few_busy([code for _n, code in before + during] +
                                [code for _n, code in attempts])
    for name, answer in sorted(refused.items()):
        print('last refusal of %s: %s' % (name, answer['error_message']))
        assert answer['error_name'] in (
            'MaintenanceUnresolved', 'MaintenanceActionImpossible',
            'MaintenanceNothingLeft', 'NotEnoughHosts',
            'DatabaseBusy', 'LeaseBusy'), answer
    assert applied, refused

    by_host = concurrency.bookings_by_provider(db, 'HOST')
    assert concurrency.overlapping_pairs(by_host) == []
    rows = {r.name: r for r in db.query(
        'SELECT name, lease_id, status FROM maintenance_windows')}
    assert set(rows) == set(applied), 'a refused apply left a window'
    holders = {r.name for r in db.query(
        "SELECT name FROM leases WHERE name LIKE 'maintenance: %'")}
    assert holders == {'maintenance: %s' % n for n in applied}
    ids = {h['hypervisor_hostname']: h['id'] for h in admin.request(
        'GET', '/v1/os-hosts').json()['hosts']}
    for name, window in applied.items():
        start, end = (datetime.datetime.strptime(window[k][:19], procs.ISO)
                      for k in ('start_date', 'end_date'))
        taken = {h['name'] for h in window['hosts']}
        left = set()
        for hit in window['affected']:
            if hit['action'] == 'leave':
                left |= set(hit['options']['leave']['hosts'])
        asked = next(w for w in windows if w['name'] == name)
        assert taken == set(asked['hosts']) - left, (name, taken, left)
        for host in taken:
            held = by_host.get(str(ids[host]), [])
            mine = [(s, e) for s, e, lease in held
                    if lease == 'maintenance: %s' % name]
            assert mine == [(start, end)], (name, host, held)
        for hit in window['affected']:
            holding = [(s, e) for host in asked['hosts']
                       for s, e, lease in by_host.get(str(ids[host]), [])
                       if lease == hit['name'] and s < end and e > start]
            if hit['action'] == 'leave':
                continue  # its host is not the window's
            assert holding == [], (name, hit)
    done = [hit['action'] for w in applied.values() for hit in w['affected']]
    assert 'move' in done and 'shorten' in done, done
    print('\n%d windows on %s: %d applied (%s), %d attempts refused; %d '
          'leases hit: %d moved, %d shortened, %d left' % (
              len(windows), db.engine_name, len(applied),
              ', '.join(sorted(applied)), sum(
                  1 for _n, code in attempts if code != 201),
              len(done), done.count('move'), done.count('shorten'),
              done.count('leave')))
    assert not cluster.errors_in_logs(), cluster.errors_in_logs()[:20]
