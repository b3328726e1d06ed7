"""Webhooks end to end in one process, against a real HTTP receiver on
127.0.0.1 (``[webhooks] allow_private_targets`` on, as a test must):
the signature verifies, 500s are retried with backoff, delivery gives up
after ``max_attempts``, a dead endpoint never holds the lease up, and the
delivery log shows all of it through the API (microversion 1.7)."""

import datetime
import http.server
import json
import threading
import time

import pytest

from climate import context
from climate import dates
from climate.db import models
from climate.db import webhooks as db_webhooks
from climate.manager import webhooks
from climate.tests import fixtures

SECRET = 'a-secret-of-some-length'
VERSION = '1.7'


class Receiver:
    """An HTTP server on 127.0.0.1 recording every POST, answering the
    status codes of ``script`` in turn (then 200)."""

    def __init__(self, script=()):
        self.requests = []
        self.script = list(script)
        self.lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers['Content-Length']))
                with receiver.lock:
                    receiver.requests.append((dict(self.headers), body))
                    code = receiver.script.pop(0) if receiver.script \
                        else 200
                self.send_response(code)
                self.send_header('Content-Length', '2')
                self.end_headers()
                self.wfile.write(b'ok')

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(('127.0.0.1', 0),
                                                      Handler)
        self.url = 'http://127.0.0.1:%d/hook' % self.server.server_port
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope='module')
def env():
    with fixtures.ClimateEnvironment(overrides=(
            ('allow_private_targets', 'webhooks', True),
            ('backoff_base', 'webhooks', 0.2),
            ('backoff_max', 'webhooks', 1.0),
            ('max_attempts', 'webhooks', 3),
            ('timeout', 'webhooks', 2.0),
            ('poll_interval', 'webhooks', 0.2))) as env:
        yield env


def _wait(predicate, timeout=20, what='condition'):
    deadline = time.monotonic() + timeout
    while True:
        found = predicate()
        if found:
            return found
        if time.monotonic() > deadline:
            pytest.fail('timed out waiting for %s' % what)
        time.sleep(0.05)


def _hook(env, url, project='project-a', **extra):
    resp = env.request('POST', '/v1/webhooks', version=VERSION,
                       project=project,
                       body=dict({'url': url, 'secret': SECRET}, **extra))
    assert resp.status_int == 201, resp.text
    return resp.json['webhook']


def _lease_with_notice(env, name, project='project-a'):
    body = fixtures.lease_body(
        name=name, start=fixtures.iso(3600), end=fixtures.iso(7200),
        events=[{'event_type': 'notification', 'time': 'now'}])
    resp = env.request('POST', '/v1/leases', body=body, project=project)
    assert resp.status_int == 201, resp.text
    return resp.json['lease']


def _log(env, hook, project='project-a'):
    resp = env.request('GET', '/v1/webhooks/%s/deliveries' % hook['id'],
                       version=VERSION, project=project)
    assert resp.status_int == 200, resp.text
    return resp.json['deliveries']


def test_signed_delivery_of_a_notification(env):
    with Receiver() as receiver:
        hook = _hook(env, receiver.url)
        assert 'secret' not in hook
        lease = _lease_with_notice(env, 'signed')
        _wait(lambda: receiver.requests, what='the POST')
        headers, body = receiver.requests[0]
        # what an endpoint does: the signature of the exact bytes
        assert webhooks.verify(SECRET, body, headers['X-Climate-Signature'])
        assert not webhooks.verify('another-secret-entirely', body,
                                   headers['X-Climate-Signature'])
        sent = json.loads(body)
        note = [e for e in lease['events']
                if e['event_type'] == 'notification'][0]
        assert sent['event_type'] == 'notification'
        assert sent['event']['id'] == note['id']
        assert sent['event']['status'] == 'DONE'
        assert sent['lease']['id'] == lease['id']
        assert sent['webhook_id'] == hook['id']
        assert headers['X-Climate-Delivery'] == sent['delivery_id']
        assert headers['X-Climate-Event'] == 'notification'
        assert int(headers['X-Climate-Timestamp']) > 0
        log = _wait(lambda: [d for d in _log(env, hook)
                             if d['status'] == 'delivered'], what='the log')
        assert [(d['id'], d['lease_id'], d['event_id'], d['attempts'],
                 d['last_status_code']) for d in log] == [
            (sent['delivery_id'], lease['id'], note['id'], 1, 200)]
        assert log[0]['delivered_at'] and log[0]['next_attempt_at'] is None
        assert 'body' not in log[0]
    # the event ran once, and the lease shows it done
    shown = env.request('GET', '/v1/leases/' + lease['id']).json['lease']
    assert [(e['status'], e['attempts']) for e in shown['events']
            if e['event_type'] == 'notification'] == [('DONE', 1)]
    env.request('DELETE', '/v1/webhooks/' + hook['id'], version=VERSION)


def test_500s_are_retried_with_backoff_then_delivered(env):
    with Receiver(script=[500, 503]) as receiver:
        hook = _hook(env, receiver.url)
        _lease_with_notice(env, 'retried')
        log = _wait(lambda: [d for d in _log(env, hook)
                             if d['status'] == 'delivered'],
                    what='the delivery after two 5xx')
        assert log[0]['attempts'] == 3
        assert log[0]['last_status_code'] == 200
        assert len(receiver.requests) == 3
        ids = {h['X-Climate-Delivery'] for h, _b in receiver.requests}
        assert ids == {log[0]['id']}
        # the same body, signed the same way, on every attempt
        assert len({b for _h, b in receiver.requests}) == 1
        assert [h['X-Climate-Attempt'] for h, _b in receiver.requests] == [
            '1', '2', '3']
    env.request('DELETE', '/v1/webhooks/' + hook['id'], version=VERSION)


def test_gives_up_after_max_attempts(env):
    with Receiver(script=[500] * 10) as receiver:
        hook = _hook(env, receiver.url)
        _lease_with_notice(env, 'gives-up')
        log = _wait(lambda: [d for d in _log(env, hook)
                             if d['status'] == 'failed'],
                    what='the delivery to give up')
        assert log[0]['attempts'] == 3  # [webhooks] max_attempts
        assert log[0]['last_status_code'] == 500
        assert 'HTTP 500' in log[0]['last_error']
        time.sleep(1.5)  # a fourth attempt would come within backoff_max
        assert len(receiver.requests) == 3
    env.request('DELETE', '/v1/webhooks/' + hook['id'], version=VERSION)


def test_a_dead_endpoint_never_holds_the_lease(env):
    hook = _hook(env, 'http://127.0.0.1:%d/nobody' % fixtures.closed_port())
    body = fixtures.lease_body(
        name='dead-endpoint', start='now', end=fixtures.iso(3),
        before_end_date=fixtures.iso(1),
        events=[{'event_type': 'notification', 'time': 'now'}])
    resp = env.request('POST', '/v1/leases', body=body)
    assert resp.status_int == 201, resp.text
    lease_id = resp.json['lease']['id']
    _wait(lambda: env.request('GET', '/v1/leases/' + lease_id).json[
        'lease']['status'] == 'TERMINATED', what='the lease to end')

    def both_failed():
        failed = [d for d in _log(env, hook) if d['status'] == 'failed']
        return failed if len(failed) == 2 else None

    log = _wait(both_failed, what='both notices to give up')
    assert sorted(d['event_type'] for d in log) == [
        'before_end_lease', 'notification']
    assert all(d['last_status_code'] is None and d['last_error']
               for d in log)
    env.request('DELETE', '/v1/webhooks/' + hook['id'], version=VERSION)


def test_event_types_filter_and_other_projects(env):
    with Receiver() as receiver:
        ends = _hook(env, receiver.url, event_types=['before_end_lease'])
        theirs = _hook(env, receiver.url, project='project-b')
        lease = _lease_with_notice(env, 'filtered')
        note = [e for e in lease['events']
                if e['event_type'] == 'notification'][0]

        def ran():
            shown = env.request('GET', '/v1/leases/' + lease['id']).json
            return [e['status'] for e in shown['lease']['events']
                    if e['id'] == note['id']] == ['DONE']

        _wait(ran, what='the notice to run')
        # project-b's webhook gets nothing of project-a's leases, and the
        # filtered one no notification (a delivery would be recorded with
        # the event's DONE, and sent within a poll interval)
        time.sleep(0.5)
        assert receiver.requests == []
        assert _log(env, ends) == []
        assert _log(env, theirs, project='project-b') == []
    for hook, project in ((ends, 'project-a'), (theirs, 'project-b')):
        env.request('DELETE', '/v1/webhooks/' + hook['id'],
                    version=VERSION, project=project)


def test_recorded_once_per_webhook_and_event(env):
    rows = env.rows(models.WebhookDelivery)
    assert len({(r.webhook_id, r.event_id) for r in rows}) == len(rows)


def test_claims_never_overlap_and_unattempted_ones_go_back(env):
    hook = _hook(env, 'http://192.0.2.1/never-sent')
    ctx = context.admin_context()
    # due in an hour: the manager's own worker leaves them alone
    later = dates.utcnow() + datetime.timedelta(hours=1)
    rows = [{'id': 'claim-test-%d' % i, 'webhook_id': hook['id'],
             'project_id': 'project-a', 'lease_id': 'l',
             'event_id': 'e%d' % i,
             'event_type': 'notification', 'body': '{}',
             'status': db_webhooks.PENDING, 'attempts': 0,
             'next_attempt_at': later, 'created_at': later}
            for i in range(6)]
    db_webhooks.deliveries_insert(ctx, rows)
    ttl = datetime.timedelta(seconds=60)
    at = later + datetime.timedelta(seconds=1)
    first = db_webhooks.deliveries_claim(ctx, 'a', 'token-a', at, 4, ttl)
    second = db_webhooks.deliveries_claim(ctx, 'b', 'token-b', at, 4, ttl)
    assert (len(first), len(second)) == (4, 2)
    assert not {d['id'] for d in first} & {d['id'] for d in second}
    assert {d['url'] for d in first} == {hook['url']}
    assert db_webhooks.deliveries_claim(ctx, 'c', 'token-c', at, 4,
                                        ttl) == []
    # an outcome is recorded only under the claim's own token
    assert not db_webhooks.delivery_finish(
        ctx, first[0]['id'], 'token-b', {'status': 'delivered'})
    assert db_webhooks.delivery_finish(
        ctx, first[0]['id'], 'token-a', {'status': 'delivered'})
    # b stops before attempting its two: due again, attempt not counted
    db_webhooks.deliveries_release(ctx, 'b', [d['id'] for d in second], at)
    back = [db_webhooks.delivery_get(ctx, d['id']) for d in second]
    assert [(d['claimed_by'], d['attempts'], d['next_attempt_at'])
            for d in back] == [(None, 0, at)] * 2
    env.request('DELETE', '/v1/webhooks/' + hook['id'], version=VERSION)
    assert db_webhooks.delivery_get(ctx, first[1]['id']) is None
