"""Webhooks with two managers on MariaDB and PostgreSQL: a manager killed
(``kill -9``) while it is POSTing deliveries; every delivery is still
delivered at least once (the other manager sends it again once the dead
one's claim expires) and recorded exactly once (one row per webhook and
event, written with the event's DONE).

The receiver is an HTTP server of this test on 127.0.0.1 (so the
managers run with ``[webhooks] allow_private_targets``); it checks every
signature and answers slowly until the kill, so that the victim dies in
the middle of its POSTs.
"""

import collections
import datetime
import http.server
import os
import threading
import time

from climate.manager import webhooks
from climate.tests.functional import procs

LEASES = 6
NOTICES = 2  # notification events per lease
SLOW = 2.0  # seconds the receiver takes to answer until the kill
WEBHOOK_OPTS = {
    'allow_private_targets': True,
    'timeout': 4,
    # the dead manager's claims expire after max(claim_ttl, timeout + 5)
    'claim_ttl': 6,
    'backoff_base': 0.5,
    'backoff_max': 2,
    'max_attempts': 20,
    'poll_interval': 0.5,
    'workers': 4,
}


class Receiver:
    """Records each POST: its delivery id, and whether its signature
    verifies with the secret of the webhook its path names."""

    def __init__(self, secrets):
        self.secrets = secrets
        self.lock = threading.Lock()
        self.received = collections.Counter()
        self.bad_signatures = []
        self.arrived = threading.Event()
        self.slow = threading.Event()
        self.slow.set()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers['Content-Length']))
                receiver.arrived.set()
                if receiver.slow.is_set():
                    time.sleep(SLOW)
                secret = receiver.secrets.get(self.path.rsplit('/', 1)[-1])
                signature = self.headers.get('X-Climate-Signature')
                with receiver.lock:
                    if secret is None or not webhooks.verify(
                            secret, body, signature):
                        receiver.bad_signatures.append(self.path)
                    receiver.received[
                        self.headers.get('X-Climate-Delivery')] += 1
                try:
                    self.send_response(200)
                    self.send_header('Content-Length', '0')
                    self.end_headers()
                except OSError:  # the sender was killed meanwhile
                    pass

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer((procs.HOST, 0),
                                                      Handler)
        self.url = 'http://%s:%d/hook/' % (procs.HOST,
                                           self.server.server_port)
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def _start(climate, managers=2):
    """Climate's processes with the [webhooks] options of this test."""
    port = procs.free_port()
    config = procs.write_config(
        os.path.join(climate.workdir, 'climate.conf'), climate.database.url,
        climate.vhost.transport_url, port, extra={'webhooks': WEBHOOK_OPTS})
    procs.db_upgrade(config)
    climate.cluster = procs.Cluster(climate.workdir, config, port)
    climate.cluster.start_api()
    climate.cluster.start_managers(managers)
    return climate.cluster


def _claims(db):
    return dict(db.query(
        "SELECT claimed_by, count(*) FROM webhook_deliveries WHERE "
        "status = 'pending' AND claimed_by IS NOT NULL GROUP BY claimed_by"))


def test_killed_manager_deliveries_at_least_once_recorded_once(climate):
    cluster = _start(climate)
    db = climate.database
    client = climate.client(version='1.7')
    secrets = {'all': 'secret-of-the-first-webhook',
               'notes': 'secret-of-the-second-webhook'}
    receiver = Receiver(secrets)
    try:
        hooks = [client.request('POST', '/v1/webhooks', expect=(201,), json={
            'url': receiver.url + 'all', 'secret': secrets['all']}).json(),
            client.request('POST', '/v1/webhooks', expect=(201,), json={
                'url': receiver.url + 'notes', 'secret': secrets['notes'],
                'event_types': ['notification']}).json()]
        assert all('secret' not in h['webhook'] for h in hooks)

        due = procs.utcnow() + datetime.timedelta(seconds=4)
        later = procs.utcnow() + datetime.timedelta(hours=1)
        leases = [client.create_lease(
            'hooked-%d' % i, later, later + datetime.timedelta(hours=1),
            events=[{'event_type': 'notification', 'time': procs.iso(
                due + datetime.timedelta(seconds=n))}
                for n in range(NOTICES)]) for i in range(LEASES)]
        expected = LEASES * NOTICES * len(hooks)

        # the engines run the notices, each once, and record their
        # deliveries; the receiver holds the first POSTs
        procs.wait_for(lambda: db.scalar(
            "SELECT count(*) FROM events WHERE event_type = 'notification' "
            "AND status = 'DONE'") == LEASES * NOTICES, 30,
            message='the notices to run')
        assert receiver.arrived.wait(30), 'no delivery was POSTed'
        claims = procs.wait_for(lambda: _claims(db), 10,
                                message='a manager to hold deliveries')
        names = {p.manager_name: p for p in cluster.managers}
        victim = names[max(claims, key=claims.get)]
        # frozen first, so that what it holds is known for sure when it
        # dies (a COMMIT it sent just before has landed after a moment)
        victim.pause()
        time.sleep(0.5)
        held = {row.id for row in db.query(
            "SELECT id FROM webhook_deliveries WHERE status = 'pending' AND "
            "claimed_by = :v", v=victim.manager_name)}
        victim.kill9()
        assert held and not victim.alive()
        receiver.slow.clear()

        def settled():
            counts = dict(db.query(
                'SELECT status, count(*) FROM webhook_deliveries '
                'GROUP BY status'))
            return counts if counts == {'delivered': expected} else None

        procs.wait_for(settled, 90, interval=0.25, message=lambda: (
            'every delivery delivered: %s' % dict(db.query(
                'SELECT status, count(*) FROM webhook_deliveries '
                'GROUP BY status'))))

        rows = db.query('SELECT id, webhook_id, event_id, attempts, '
                        'lease_id FROM webhook_deliveries')
        # recorded exactly once: one row per webhook and notice
        assert len(rows) == expected
        assert len({(r.webhook_id, r.event_id) for r in rows}) == expected
        assert {r.lease_id for r in rows} == {lease['id']
                                              for lease in leases}
        # each notice ran once
        assert {tuple(r) for r in db.query(
            "SELECT status, attempts FROM events WHERE "
            "event_type = 'notification'")} == {('DONE', 1)}
        # delivered at least once, every body signed right
        with receiver.lock:
            assert receiver.bad_signatures == []
            assert {r.id for r in rows} <= set(receiver.received)
            received = dict(receiver.received)
        # what the victim held was sent again by the survivor
        again = [r for r in rows if r.id in held]
        assert again and all(r.attempts >= 2 for r in again), again
        # and the log shows it through the API
        log = client.request('GET', '/v1/webhooks/%s/deliveries' %
                             hooks[0]['webhook']['id']).json()['deliveries']
        assert len(log) == LEASES * NOTICES
        assert {d['status'] for d in log} == {'delivered'}
        print('\n%d deliveries, %d held by the killed manager; POSTs per '
              'delivery: %s' % (expected, len(held), collections.Counter(
                  received.values())))
    finally:
        receiver.close()
