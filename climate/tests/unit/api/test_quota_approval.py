"""The operator's approval service ([quotas] approval_url) against a real
HTTP server on 127.0.0.1: what it is sent, its yes and no, and what a
service that cannot answer does (fail closed by default, open when
configured).  A refused create writes nothing."""

import http.server
import json
import threading
import time

import pytest

from climate.tests import fixtures


class _Service(http.server.ThreadingHTTPServer):
    """Answers each POST with ``self.answer`` ``(status, body bytes)``
    after ``self.delay`` seconds; keeps what it was sent."""

    daemon_threads = True

    def __init__(self):
        super().__init__(('127.0.0.1', 0), _Handler)
        self.answer = (200, b'{"approved": true}')
        self.delay = 0
        self.seen = []


class _Handler(http.server.BaseHTTPRequestHandler):

    def do_POST(self):
        length = int(self.headers.get('Content-Length') or 0)
        self.server.seen.append((self.headers.get('Content-Type'),
                                 json.loads(self.rfile.read(length))))
        time.sleep(self.server.delay)
        status, body = self.server.answer
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope='module')
def service():
    server = _Service()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _env(service, fail_open=False):
    return fixtures.ClimateEnvironment(overrides=[
        ('approval_url', 'quotas',
         'http://127.0.0.1:%d/approve' % service.server_address[1]),
        ('approval_timeout', 'quotas', 0.5),
        ('approval_fail_open', 'quotas', fail_open)])


def _create(env, name):
    return env.request('POST', '/v1/leases', body=fixtures.lease_body(
        name, '2090-01-01 00:00', '2090-01-02 00:00'))


def _leases(env):
    return [lease['name'] for lease in
            env.request('GET', '/v1/leases').json['leases']]


def test_the_service_is_asked_and_says_yes_or_no(service):
    with _env(service) as env:
        service.answer = (200, b'{"approved": true}')
        del service.seen[:]
        resp = _create(env, 'approved')
        assert resp.status_int == 201, resp.text
        content_type, payload = service.seen[-1]
        assert content_type == 'application/json'
        assert payload['action'] == 'create'
        assert payload['project_id'] == 'project-a'
        assert payload['user_id'] == 'member-project-a'
        assert payload['lease']['name'] == 'approved'
        assert payload['lease']['reservations'] == [
            {'resource_type': 'noop'}]

        service.answer = (200, b'{"approved": false, "reason": "over '
                               b'the monthly allocation"}')
        resp = _create(env, 'refused')
        assert resp.status_int == 403, resp.text
        assert resp.json['error_name'] == 'ApprovalRefused'
        assert resp.json['error_message'] == (
            'The lease was not approved: over the monthly allocation')
        assert _leases(env) == ['approved']

        # an update is asked about too, with the lease's id
        lease_id = env.request('GET', '/v1/leases').json['leases'][0]['id']
        resp = env.request('PUT', '/v1/leases/' + lease_id,
                           body={'name': 'renamed'})
        assert resp.status_int == 403, resp.text
        assert service.seen[-1][1]['action'] == 'update'
        assert service.seen[-1][1]['lease'] == {'name': 'renamed',
                                                'id': lease_id}
        assert _leases(env) == ['approved']


@pytest.mark.parametrize('answer,delay,why', [
    ((500, b'{"approved": true}'), 0, 'HTTP 500'),
    ((200, b'yes'), 0, 'an answer that is not JSON'),
    ((200, b'{"approved": "yes"}'), 0, 'without "approved": true or false'),
    ((200, b'{"approved": true}'), 1.5, 'timed out'),
], ids=['error', 'not-json', 'not-a-boolean', 'too-slow'])
def test_no_valid_answer_fails_closed_by_default(service, answer, delay,
                                                 why):
    with _env(service) as env:
        service.answer, service.delay = answer, delay
        try:
            resp = _create(env, 'unanswered')
        finally:
            service.delay = 0
        assert resp.status_int == 403, resp.text
        assert resp.json['error_message'].startswith(
            'The lease was not approved: the approval service could not '
            'be asked (')
        assert why in resp.json['error_message']
        assert _leases(env) == []


def test_fail_open_grants_without_an_answer(service):
    with _env(service, fail_open=True) as env:
        service.answer = (503, b'')
        resp = _create(env, 'granted-anyway')
        assert resp.status_int == 201, resp.text
        # a no is still a no
        service.answer = (200, b'{"approved": false}')
        resp = _create(env, 'refused')
        assert resp.status_int == 403
        assert resp.json['error_message'] == (
            'The lease was not approved: the approval service refused it')


def test_an_unreachable_service_fails_closed():
    port = fixtures.closed_port()
    with fixtures.ClimateEnvironment(overrides=[
            ('approval_url', 'quotas', 'http://127.0.0.1:%d/' % port)]) as env:
        resp = _create(env, 'nobody-there')
        assert resp.status_int == 403, resp.text
        assert 'could not be asked' in resp.json['error_message']
