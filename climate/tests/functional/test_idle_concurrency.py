"""Idle reclaim under concurrency (microversion 1.17): 16 leases of a
compute host each, started at once, 4 of them ``keep_idle``; three
managers with ``[idle] enabled`` looking every second at them, the
project's policy warning after 2 s and ending after 5 s of nothing used
(the hosts' backend patched to read "no server on the host": the static
inventory knows no servers), on MariaDB, PostgreSQL and a multi-writer
Galera cluster (a manager per node).

Afterwards, once every lease not kept has ended:

- each was warned exactly once (one ``notification`` event, one
  "warned" line in all the managers' logs) and ended early exactly once
  (one "ended early" line), its reason saying so;
- the kept leases are ACTIVE, never warned;
- nothing is booked twice (the ledger's sweep), no error in any log.
"""

import datetime
import time

import pytest

from climate.tests.functional import concurrency
from climate.tests.functional import procs

HOSTS = 16
KEPT = 4
V = '1.17'
SETTLE = 90
#: the static backend reads no server on every host, as Nova would read
#: hosts nobody boots on
IDLE_HOSTS = ('from climate.plugins.physical_host.backends import static\n'
              'static.StaticBackend.reports_servers = True\n')


@pytest.fixture(params=procs.MULTI_WRITER_ENGINES)
def db_engine(request):
    return request.param


def test_idle_leases_are_warned_and_ended_once(climate, tmp_path):
    cluster = climate.start(
        managers=3, extra={'idle': {'enabled': True, 'poll_interval': 1}},
        pythonpath=concurrency.pythonpath(tmp_path, True, IDLE_HOSTS))
    db = climate.database
    client = procs.Client(cluster.url, version=V)
    for i in range(HOSTS):
        client.request('POST', '/v1/os-hosts', expect=(201,),
                       json={'name': 'compute-%02d' % i})
    client.request('PUT', '/v1/idle-policies/ft-project', expect=(200,),
                   json={'warn_after': 2, 'end_after': 5})
    end = procs.iso(procs.utcnow() + datetime.timedelta(hours=2))
    leases = {}
    for i in range(HOSTS):
        body = {'name': 'lease-%02d' % i, 'start_date': 'now',
                'end_date': end, 'events': [],
                'reservations': [{'resource_type': 'physical:host',
                                  'min': 1, 'max': 1}]}
        if i < KEPT:
            body['keep_idle'] = True
        leases[body['name']] = client.request(
            'POST', '/v1/leases', expect=(201,), json=body).json()['lease']
    reclaimed = {n: l for n, l in leases.items() if not l['keep_idle']}
    deadline = time.monotonic() + SETTLE
    while True:
        status = {r.name: r.status for r in db.query(
            'SELECT name, status FROM leases')}
        if all(status[n] == 'TERMINATED' for n in reclaimed):
            break
        assert time.monotonic() < deadline, (
            'idle leases not ended %d s after their start: %s' % (
                SETTLE, sorted(n for n in reclaimed
                               if status[n] != 'TERMINATED')))
        time.sleep(0.5)
    logs = '\n'.join(proc.log() for proc in cluster.procs)
    for name, lease in leases.items():
        shown = client.request('GET', '/v1/leases/%s' % lease['id'],
                               expect=(200,)).json()['lease']
        notices = [e for e in shown['events']
                   if e['event_type'] == 'notification']
        if lease['keep_idle']:
            assert shown['status'] == 'ACTIVE', shown
            assert shown['idle_warned_at'] is None and not notices, shown
            continue
        assert len(notices) == 1, (name, notices)
        assert logs.count('Lease %s warned: idle since' % lease['id']) == 1
        assert logs.count('Lease %s ended early: idle since' %
                          lease['id']) == 1, name
        assert shown['status_reason'].startswith(
            'ended early by idle reclaim'), shown
    print('\n%d leases on %s: %d warned and ended once, %d kept' % (
        HOSTS, db.engine_name, len(reclaimed), KEPT))
    by_host = concurrency.bookings_by_provider(db, 'HOST')
    assert concurrency.overlapping_pairs(by_host) == []
    assert not cluster.errors_in_logs(), cluster.errors_in_logs()[:20]
