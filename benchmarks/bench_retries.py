"""Waiting ``with_retries`` leases: what a create that waits costs, and
how soon released capacity goes to the oldest waiting lease.

20 compute hosts (static inventory), each held by a lease of an hour;
then 1,000 ``with_retries`` leases of one host each, which all wait
(created through climate-api, 2 threads, and one manager: the first is
refused and written WAITING, the others queue behind it and are tried by
the manager's pass).  Then, twenty times, one holder is deleted and the
time until the oldest waiting lease is granted (STARTING, read in the
database every 2 ms) is measured: the release's fanout, the pass over the
1,000 waiting leases (the oldest granted, the next refused, the rest
asking the same skipped) and the grant's transaction.  No target: the
figures go in the issue's note.
"""

import datetime
import time

import common
from climate.tests.functional import procs

HOSTS = 20
WAITING = 1000
WARMUP = 20


def _request():
    return [{'resource_type': 'physical:host', 'min': 1, 'max': 1}]


def run():
    print('== waiting leases: %d hosts held, %d with_retries leases '
          'waiting, API 2 threads, 1 manager, %s' % (
              HOSTS, WAITING, common.ENGINE))
    results = {}
    with common.Climate(managers=1, api_threads=2) as env:
        db = env.database
        admin = env.latency_client(project='bench', version='1.11')
        for n in range(HOSTS):
            admin.request('POST', '/v1/os-hosts', expect=(201,),
                          json={'name': 'host-%02d' % n})
        hour = procs.iso(procs.utcnow() + datetime.timedelta(hours=1))
        holders = [admin.request('POST', '/v1/leases', expect=(201,), json={
            'name': 'holder-%02d' % n, 'start_date': 'now',
            'end_date': hour, 'reservations': _request()}).json()['lease']
            for n in range(HOSTS)]
        procs.wait_for(lambda: db.scalar(
            "SELECT count(*) FROM leases WHERE status = 'ACTIVE'") == HOSTS,
            60, message='the holders to start')
        creates = []
        for n in range(WARMUP + WAITING):
            began = time.perf_counter()
            lease = admin.request('POST', '/v1/leases', expect=(201,), json={
                'name': 'waiting-%04d' % n, 'lease_type': 'with_retries',
                'end_date': hour, 'reservations': _request()}).json()[
                'lease']
            if n >= WARMUP:
                creates.append((time.perf_counter() - began) * 1000)
            assert lease['status'] == 'WAITING', lease
        print('  create that waits:        %s' % common.summary(creates))
        results['waiting_create_p50_ms'] = common.percentile(creates, 50)
        grants = []
        for holder in holders:
            oldest = db.scalar(
                "SELECT id FROM leases WHERE status = 'WAITING' ORDER BY "
                "arrival, id LIMIT 1")
            began = time.perf_counter()
            admin.request('DELETE', '/v1/leases/%s' % holder['id'],
                          expect=(204,))
            while db.scalar('SELECT status FROM leases WHERE id = :i',
                            i=oldest) == 'WAITING':
                if time.perf_counter() - began > 30:
                    raise AssertionError('lease %s never granted' % oldest)
                time.sleep(0.002)
            grants.append((time.perf_counter() - began) * 1000)
        print('  release -> oldest granted: %s  (the delete included)' %
              common.summary(grants))
        results['release_to_grant_p50_ms'] = common.percentile(grants, 50)
        granted = db.scalar(
            "SELECT count(*) FROM leases WHERE lease_type = 'with_retries' "
            "AND status <> 'WAITING'")
        assert granted == HOSTS, granted
        admin.close()
    return results


if __name__ == '__main__':
    run()
