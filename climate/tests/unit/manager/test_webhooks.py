"""The pure pieces of webhooks: the signature, the backoff, the URL and
body checks (with a stand-in resolver: no DNS), and the sender's refusal
to follow redirects (against a real server on 127.0.0.1)."""

import hashlib
import hmac
import http.server
import socket
import threading

import pytest

from climate import exceptions
from climate.manager import webhooks
from climate.manager.workers import delivery


def _resolver(table):
    def resolve(host, port):
        if host not in table:
            raise socket.gaierror(-2, 'Name or service not known')
        return table[host]
    return resolve


PUBLIC = _resolver({'hooks.example.org': ['203.0.113.9'],
                    'mixed.example.org': ['203.0.113.9', '127.0.0.2'],
                    'meta.example.org': ['169.254.169.254'],
                    'v6.example.org': ['2001:db8::1'],
                    'mapped.example.org': ['::ffff:127.0.0.1'],
                    'multicast.example.org': ['224.0.0.1'],
                    'scoped.example.org': ['fe80::1%eth0']})


def test_signature_is_hmac_sha256_of_the_body():
    body = b'{"a": 1}'
    expected = hmac.new(b'k' * 16, body, hashlib.sha256).hexdigest()
    assert webhooks.sign('k' * 16, body) == 'sha256=' + expected
    assert webhooks.verify('k' * 16, body, 'sha256=' + expected)
    assert not webhooks.verify('k' * 16, body + b' ', 'sha256=' + expected)
    assert not webhooks.verify('j' * 16, body, 'sha256=' + expected)
    assert not webhooks.verify('k' * 16, body, None)


def test_a_known_signature():
    # RFC 4231 test case 2
    assert webhooks.sign('Jefe', b'what do ya want for nothing?') == (
        'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec'
        '3843')


@pytest.mark.parametrize('attempts, expected', [
    (1, 5), (2, 10), (3, 20), (4, 40), (5, 60), (12, 60)])
def test_backoff_doubles_up_to_the_ceiling(attempts, expected):
    assert webhooks.retry_delay(attempts, 5, 60) == expected


@pytest.mark.parametrize('url', [
    'http://hooks.example.org/x', 'https://hooks.example.org:8443/a?b=c',
    'http://v6.example.org/', 'http://203.0.113.9/', 'https://[2001:db8::5]/'])
def test_public_targets_are_accepted(url):
    assert webhooks.check_url(url, False, PUBLIC) == url


@pytest.mark.parametrize('url, message', [
    ('http://127.0.0.1/', 'url host 127.0.0.1 is a loopback address'),
    ('http://mixed.example.org/', 'is a loopback address (127.0.0.2)'),
    ('http://meta.example.org/', 'is a link-local address'),
    ('http://169.254.169.254/', 'is a link-local address'),
    ('http://mapped.example.org/', 'is a loopback address'),
    ('http://multicast.example.org/', 'is a multicast address'),
    ('http://scoped.example.org/', 'is a link-local address'),
    ('http://0.0.0.0/', 'is an unspecified address'),
    ('http://[::]/', 'is an unspecified address'),
    ('http://nowhere.example.org/', 'does not resolve'),
    ('gopher://hooks.example.org/', 'must be an http:// or https:// URL'),
    ('http:///path', 'names no host'),
    ('http://a:b@hooks.example.org/', 'must not carry credentials'),
    ('http://hooks.example.org:99999/', 'is not a valid URL'),
    ('http://hooks.example.org/a b', 'must not contain spaces'),
    ('', 'must be a non-empty string'),
    (None, 'must be a non-empty string'),
    ('http://hooks.example.org/' + 'a' * 2048, 'longer than 2048'),
])
def test_bad_targets_are_refused_naming_url(url, message):
    with pytest.raises(exceptions.InvalidInput) as err:
        webhooks.check_url(url, False, PUBLIC)
    assert err.value.code == 400
    assert err.value.message.startswith('Invalid input: url ')
    assert message in err.value.message


def test_the_operator_may_allow_private_targets():
    for url in ('http://127.0.0.1:9/', 'http://meta.example.org/',
                'http://mapped.example.org/'):
        assert webhooks.check_url(url, True, PUBLIC) == url
    # what never resolves is refused all the same
    with pytest.raises(exceptions.InvalidInput):
        webhooks.check_url('http://nowhere.example.org/', True, PUBLIC)


def test_create_checks_every_field_before_the_lookup():
    looked_up = []

    def resolve(host, port):
        looked_up.append(host)
        return ['203.0.113.9']

    good = {'url': 'http://hooks.example.org/', 'secret': 's' * 16}
    for bad, message in [
            (dict(good, secret='short'), 'secret must be a string'),
            (dict(good, secret=12345678901234567), 'secret must be'),
            ({'url': good['url']}, 'Missing parameter secret'),
            (dict(good, event_types=[]), 'event_types must be a non-empty'),
            (dict(good, event_types='notification'), 'event_types must'),
            (dict(good, event_types=['end_lease']), 'event_types[0] must'),
            (dict(good, id='x'), 'id cannot be set')]:
        with pytest.raises(exceptions.InvalidInput) as err:
            webhooks.check_create(bad, False, resolve)
        assert message in err.value.message
    assert looked_up == []
    values = webhooks.check_create(
        dict(good, event_types=['notification', 'before_end_lease',
                                'notification']), False, resolve)
    assert values == {'url': good['url'], 'secret': 's' * 16,
                      'event_types': ['before_end_lease', 'notification']}
    assert looked_up == ['hooks.example.org']


def test_the_view_never_shows_the_secret():
    import datetime
    row = {'id': 'w', 'project_id': 'p', 'url': 'http://h/', 'secret': 's',
           'event_types': None,
           'created_at': datetime.datetime(2030, 1, 1, 12)}
    assert webhooks.webhook_view(row) == {
        'id': 'w', 'project_id': 'p', 'url': 'http://h/',
        'event_types': None, 'created_at': '2030-01-01 12:00:00'}


class _Redirecting(http.server.BaseHTTPRequestHandler):
    hits = []

    def do_POST(self):
        self.rfile.read(int(self.headers['Content-Length']))
        _Redirecting.hits.append(self.path)
        if self.path == '/hook':
            self.send_response(307)
            self.send_header('Location', '/elsewhere')
        else:
            self.send_response(200)
        self.send_header('Content-Length', '0')
        self.end_headers()

    def log_message(self, *args):
        pass


def test_the_sender_follows_no_redirect_and_bounds_time():
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), _Redirecting)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = 'http://127.0.0.1:%d' % server.server_port
        code, error = delivery.post(url + '/hook', b'{}', {}, 5)
        assert code == 307 and 'HTTP 307' in error
        assert _Redirecting.hits == ['/hook']
        assert delivery.post(url + '/ok', b'{}', {}, 5) == (200, None)
    finally:
        server.shutdown()
        server.server_close()
    # nothing listens there any more: an error, not an exception
    code, error = delivery.post(url + '/hook', b'{}', {}, 1)
    assert code is None and 'ConnectionRefusedError' in error
