"""Outages answered honestly (in one process, SQLite, fake transport):
a lost database is a 503 with Retry-After on every route and writes
nothing; the message bus out of reach is a 503; Idempotency-Key makes a
retried create return the first lease; GET /v1/health reports each.

The same over real MariaDB, PostgreSQL and RabbitMQ behind a proxy that
cuts them: climate/tests/functional/test_outages.py.
"""

import threading
import time

from oslo_config import cfg
from oslo_db import exception as db_exc
import oslo_messaging as messaging
import pytest
import sqlalchemy as sa

from climate.api import health
from climate import context
from climate.db import api as db_api
from climate.db import lease_json
from climate.db import models
from climate import exceptions
from climate.lease import input as lease_input
from climate.manager import idempotency
from climate.manager import outages
from climate.manager import rpcapi
from climate.tests import fixtures

CONF = cfg.CONF
FAR = {'start': '2090-01-01 00:00', 'end': '2090-01-02 00:00'}


@pytest.fixture
def env():
    with fixtures.ClimateEnvironment() as env:
        yield env


def _body(name, **extra):
    return fixtures.lease_body(name=name, start=FAR['start'], end=FAR['end'],
                               **extra)


def _create(env, body, key=None, project='project-a'):
    headers = {'Idempotency-Key': key} if key is not None else None
    return env.request('POST', '/v1/leases', body=body, headers=headers,
                       project=project)


def _key_rows(env):
    return env.rows(models.IdempotencyKey)


# -- the database out of reach ------------------------------------------------

def _database_lost(env):
    """Point Climate at a database file that cannot be opened."""
    db_api.configure(connection='sqlite:///%s/missing/climate.sqlite' %
                     env.tmpdir)


def _database_back(env):
    db_api.configure(connection=env.connection)


ROUTES = [
    ('GET', '/v1/leases', None),
    ('GET', '/v1/leases/{lease}', None),
    ('POST', '/v1/leases', _body('during-the-outage')),
    ('PUT', '/v1/leases/{lease}', {'name': 'renamed'}),
    ('DELETE', '/v1/leases/{lease}', None),
    ('GET', '/v1/os-hosts', None),
    ('GET', '/v1/os-hosts/1', None),
    ('POST', '/v1/os-hosts', {'name': 'compute-1'}),
    ('GET', '/v1/os-hosts/allocations', None),
    ('GET', '/v1/os-hosts/properties', None),
]


def test_every_route_answers_503_while_the_database_is_lost(env):
    lease = _create(env, _body('before')).json['lease']
    before = env.snapshot()
    _database_lost(env)
    try:
        for method, path, body in ROUTES:
            resp = env.request(method, path.format(lease=lease['id']),
                               body=body, persona='admin')
            assert resp.status_int == 503, (method, path, resp.text)
            assert resp.headers['Retry-After'] == '5', resp.headers
            assert resp.json == {
                'error_code': 503, 'error_name': 'DatabaseUnavailable',
                'error_message': 'The database is unavailable; nothing was '
                                 'changed. Try again in a moment.'}
    finally:
        _database_back(env)
    assert env.snapshot() == before
    # and everything works again once it is back
    assert env.request('GET', '/v1/leases/%s' % lease['id']).status_int == 200
    assert _create(env, _body('after')).status_int == 201


def test_a_connection_lost_mid_create_writes_nothing(env, monkeypatch):
    plugin = env.plugin()
    before = env.snapshot()

    def lost(*args, **kwargs):
        raise db_exc.DBConnectionError('(2013, Lost connection to server '
                                       'during query)')
    monkeypatch.setattr(plugin, 'reserve', lost)
    resp = _create(env, _body('half'))
    assert resp.status_int == 503, resp.text
    assert resp.json['error_name'] == 'DatabaseUnavailable'
    assert env.snapshot() == before


def test_what_counts_as_a_database_outage():
    lost = sa.exc.OperationalError('SELECT 1', {}, Exception('gone away'))
    assert outages.is_database_outage(lost)
    assert outages.is_database_outage(db_exc.DBConnectionError(lost))
    assert outages.is_database_outage(db_exc.DBError(lost))
    assert outages.is_database_outage(sa.exc.TimeoutError('pool empty'))
    # a deadlock, a duplicate or a bug are not outages
    assert not outages.is_database_outage(db_exc.DBDeadlock(lost))
    assert not outages.is_database_outage(db_exc.DBDuplicateEntry())
    assert not outages.is_database_outage(ValueError('bug'))
    assert not outages.is_database_outage(exceptions.LeaseNotFound(id='x'))


def test_the_guard_leaves_other_errors_alone():
    class Endpoint:
        target = messaging.Target(version='1.0')

        def lost(self, ctx):
            raise db_exc.DBConnectionError('refused')

        def bug(self, ctx):
            raise ValueError('bug')

        def fine(self, ctx):
            return 42

    guarded = outages.guard(Endpoint())
    assert guarded.target.version == '1.0'
    assert guarded.fine(None) == 42
    with pytest.raises(ValueError):
        guarded.bug(None)
    with pytest.raises(messaging.ExpectedException) as info:
        guarded.lost(None)
    assert isinstance(info.value.exc_info[1], exceptions.DatabaseUnavailable)


# -- the message bus out of reach ---------------------------------------------

class _Client:
    def __init__(self, error):
        self.error = error

    def prepare(self, **kwargs):
        return self

    def call(self, ctx, method, **kwargs):
        raise self.error


@pytest.mark.parametrize('error, reason', [
    (messaging.MessageDeliveryFailure('Unable to connect to AMQP server on '
                                      '127.0.0.1:5672 after 1 tries'),
     'the request could not be handed to a manager (Unable to connect'),
    (messaging.MessagingTimeout('Timed out waiting for a reply'),
     'no manager answered within 5 s'),
])
def test_the_message_bus_out_of_reach_is_503(env, monkeypatch, error,
                                             reason):
    api = rpcapi.ManagerAPI()
    api._client = _Client(error)
    with pytest.raises(exceptions.MessageBusUnavailable) as info:
        api.list_leases(context.admin_context())
    assert reason in info.value.message

    def unavailable(self, ctx, **query):
        raise info.value
    monkeypatch.setattr(rpcapi.ManagerAPI, 'list_leases', unavailable)
    resp = env.request('GET', '/v1/leases')
    assert resp.status_int == 503
    assert resp.headers['Retry-After'] == '5'
    assert resp.json['error_name'] == 'MessageBusUnavailable'
    assert resp.json['error_message'].startswith(
        'The message bus is unavailable: ' + reason)


# -- Idempotency-Key ----------------------------------------------------------

def test_a_retried_create_returns_the_first_lease(env):
    body = _body('once')
    first = _create(env, body, key='key-1')
    assert first.status_int == 201, first.text
    again = _create(env, body, key='key-1')
    assert again.status_int == 201, again.text
    assert again.json == env.request(
        'GET', '/v1/leases/%s' % first.json['lease']['id']).json
    assert [lease.id for lease in env.rows(models.Lease)] == [
        first.json['lease']['id']]
    (row,) = _key_rows(env)
    assert (row.project_id, row.idempotency_key, row.lease_id) == (
        'project-a', 'key-1', first.json['lease']['id'])
    ttl = (row.expires_at - row.created_at).total_seconds()
    assert ttl == CONF.manager.idempotency_key_ttl == 86400


def test_a_retry_is_not_validated_again(env, monkeypatch):
    # a retry may come after the lease's start has passed: it still gets
    # its lease, not a 400 for a start in the past
    body = _body('soon')
    first = _create(env, body, key='key-soon')
    assert first.status_int == 201, first.text

    def start_passed(*args, **kwargs):
        raise exceptions.InvalidInput(reason='start_date is in the past')
    monkeypatch.setattr(lease_input, 'parse_create', start_passed)
    assert _create(env, dict(body, name='soon-2')).status_int == 400
    again = _create(env, body, key='key-soon')
    assert again.status_int == 201, again.text
    assert again.json['lease']['id'] == first.json['lease']['id']


def test_the_same_key_with_another_body_is_409(env):
    first = _create(env, _body('one'), key='key-2').json['lease']
    before = env.snapshot()
    resp = _create(env, _body('two'), key='key-2')
    assert resp.status_int == 409, resp.text
    assert resp.json['error_name'] == 'IdempotencyKeyReused'
    assert resp.json['error_message'] == (
        'Idempotency-Key key-2 was already used in this project for a '
        'different request (lease %s); use a new key for a new request.' %
        first['id'])
    assert env.snapshot() == before


def test_keys_are_per_project(env):
    body = _body('mine')
    a = _create(env, body, key='shared', project='project-a').json['lease']
    b = _create(env, body, key='shared', project='project-b').json['lease']
    assert a['id'] != b['id']
    assert len(_key_rows(env)) == 2


@pytest.mark.parametrize('key', ['', ' ', 'with space', 'x' * 256,
                                 'caf\u00e9'])
def test_a_bad_key_is_400_and_writes_nothing(env, key):
    before = env.snapshot()
    resp = _create(env, _body('bad-key'), key=key)
    assert resp.status_int == 400, resp.text
    assert 'Idempotency-Key header must be 1 to 255 visible ASCII' in \
        resp.json['error_message']
    assert env.snapshot() == before
    assert _key_rows(env) == []


def test_the_key_of_a_deleted_lease_answers_404(env):
    body = _body('gone')
    lease = _create(env, body, key='key-gone').json['lease']
    assert env.request('DELETE', '/v1/leases/%s' % lease['id']
                       ).status_int == 204
    resp = _create(env, body, key='key-gone')
    assert resp.status_int == 404, resp.text
    assert lease['id'] in resp.json['error_message']
    assert env.rows(models.Lease) == []


def _expire_keys(env):
    ctx = context.admin_context()
    with db_api.writer(ctx) as session:
        session.execute(sa.update(models.IdempotencyKey).values(
            expires_at=sa.literal(fixtures.dates.utcnow().replace(
                year=2000))))


def test_an_expired_key_makes_a_new_lease_and_is_purged(env):
    body = _body('old')
    first = _create(env, body, key='key-old').json['lease']
    _expire_keys(env)
    resp = _create(env, dict(body, name='new'), key='key-old')
    assert resp.status_int == 201, resp.text
    assert resp.json['lease']['id'] != first['id']
    (row,) = _key_rows(env)
    assert row.lease_id == resp.json['lease']['id']
    _create(env, _body('other'), key='key-other')
    _expire_keys(env)
    _create(env, _body('fresh'), key='key-fresh')
    assert idempotency.KeyPurger().run_once() == 2
    assert [r.idempotency_key for r in _key_rows(env)] == ['key-fresh']


def test_concurrent_creates_with_one_key_make_one_lease(env, monkeypatch):
    both_looked = threading.Barrier(2, timeout=10)
    find = idempotency.Key.find

    def find_then_wait(self, ctx):
        found = find(self, ctx)
        if found is None:
            try:
                both_looked.wait()  # neither has written its key yet
            except threading.BrokenBarrierError:
                pass
        return found
    monkeypatch.setattr(idempotency.Key, 'find', find_then_wait)
    body = _body('race')
    results = [None, None]

    def create(i):
        results[i] = _create(env, body, key='key-race')
    threads = [threading.Thread(target=create, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert [r.status_int for r in results] == [201, 201], [
        r.text for r in results]
    assert results[0].json['lease']['id'] == results[1].json['lease']['id']
    assert len(env.rows(models.Lease)) == 1
    assert len(_key_rows(env)) == 1


def test_a_failed_create_leaves_no_key(env, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError('plugin bug')
    monkeypatch.setattr(env.plugin(), 'reserve', broken)
    assert _create(env, _body('broken'), key='key-broken').status_int == 500
    assert _key_rows(env) == []
    monkeypatch.undo()
    assert _create(env, _body('broken'), key='key-broken').status_int == 201


# -- GET /v1/health -----------------------------------------------------------

def test_health_reports_database_bus_and_backlog(env):
    resp = env.request('GET', '/v1/health', persona='admin')
    assert resp.status_int == 200, resp.text
    checks = resp.json['checks']
    assert resp.json['status'] == 'ok'
    assert checks['database']['ok'] and checks['message_bus']['ok']
    assert checks['message_bus']['manager'] == 'climate-test-manager'
    assert resp.json['events'] == {'backlog': 0, 'in_progress': 0,
                                   'oldest_overdue': None,
                                   'overdue_seconds': 0}
    assert env.request('GET', '/v1/health').status_int == 403
    resp = env.request('POST', '/v1/health', persona='admin')
    assert resp.status_int == 405
    assert resp.headers['Allow'] == 'GET'


def test_health_shows_overdue_events(env):
    # a lease whose events are overdue: put them in the past by hand; its
    # user event of a type the engine never runs is overdue too, and is
    # not counted
    body = _body('late', events=[{'event_type': 'reminder',
                                  'time': FAR['start']}])
    lease = _create(env, body).json['lease']
    env.manager.engine.stop()
    ctx = context.admin_context()
    past = fixtures.dates.utcnow().replace(year=2020)
    with db_api.writer(ctx) as session:
        session.execute(sa.update(models.Event).where(
            models.Event.lease_id == lease['id'],
            models.Event.event_type.in_(['start_lease', 'reminder'])
        ).values(due_at=past))
        lease_json.changed(session, (lease['id'],))
    resp = env.request('GET', '/v1/health', persona='admin')
    events = resp.json['events']
    assert events['backlog'] == 1
    assert events['oldest_overdue'].startswith('2020-')
    assert events['overdue_seconds'] > 86400


def test_health_names_the_lost_database(env):
    _database_lost(env)
    try:
        started = time.monotonic()
        resp = env.request('GET', '/v1/health', persona='admin')
    finally:
        _database_back(env)
    assert time.monotonic() - started < CONF.api.health_timeout + 3
    assert resp.status_int == 503
    assert resp.json['status'] == 'failing'
    assert not resp.json['checks']['database']['ok']
    assert resp.json['checks']['message_bus']['ok']
    assert resp.json['events'] is None


def test_health_answers_in_bounded_time_when_the_bus_hangs(env,
                                                          monkeypatch):
    CONF.set_override('health_timeout', 0.5, group='api')
    release = threading.Event()

    def hanging(self, ctx, timeout):
        release.wait(10)
        return {'manager': 'late'}
    monkeypatch.setattr(rpcapi.ManagerAPI, 'ping', hanging)
    try:
        started = time.monotonic()
        resp = env.request('GET', '/v1/health', persona='admin')
        took = time.monotonic() - started
        # a second check while the first still hangs starts no new thread
        again = env.request('GET', '/v1/health', persona='admin')
        threads = [t for t in threading.enumerate()
                   if t.name == 'climate-health-message_bus' and
                   t.is_alive()]
        assert len(threads) == 1 and threads[0].daemon, threads
        # (the database check may still run too on a loaded machine: its
        # 0.5 s is the same bound)
        assert 'message_bus' in health.running_checks()
    finally:
        release.set()
        CONF.clear_override('health_timeout', group='api')
    # answered long before the hanging ping ends (10 s): it did not wait
    # for it (a tighter bound would measure the machine, not the code)
    assert took < 5, took
    assert resp.status_int == 503
    bus = resp.json['checks']['message_bus']
    assert not bus['ok'] and bus['error'].startswith('no answer within')
    assert resp.json['checks']['database']['ok']
    assert again.status_int == 503


class _Bus:
    """Stands for the three oslo.messaging clients of a ManagerAPI: records
    each cast and call (kind, method, thread), and runs ``behaviour[method]``
    (kind 'cast' is looked up as 'cast:<method>') when given."""

    def __init__(self, **behaviour):
        self.behaviour = behaviour
        self.log = []

    def prepare(self, **kwargs):
        return self

    def _run(self, key, method):
        self.log.append((key, method, threading.current_thread().name))
        action = self.behaviour.get(
            method if key == 'call' else 'cast:' + method)
        if action is not None:
            return action()
        return {'manager': 'm1'} if method == 'ping' else {'ok': method}

    def call(self, ctx, method, **kwargs):
        return self._run('call', method)

    def cast(self, ctx, method, **kwargs):
        return self._run('cast', method)

    def calls(self, method=None):
        return [entry for entry in self.log
                if method is None or entry[1] == method]


def _api(bus, bound=0.3):
    api = rpcapi.ManagerAPI()
    api._client = api._client_1_1 = api._fanout = bus
    api._bus_timeout = bound
    return api


def _raise(error):
    def action():
        raise error
    return action


def _probe_threads():
    return [t for t in threading.enumerate()
            if t.name == 'climate-bus-probe' and t.is_alive()]


def test_a_fresh_api_probes_the_bus_once_then_calls_in_its_thread(env):
    bus = _Bus()
    api = _api(bus)
    ctx = context.admin_context()
    assert not api.bus.up and not api.bus.ready
    assert api.get_lease(ctx, 'x') == {'ok': 'get_lease'}
    # a cast first (no reply queue needed), then a ping, in the probe's
    # thread; then the call itself, in the caller's
    me = threading.current_thread().name
    assert bus.log == [('cast', 'ping', 'climate-bus-probe'),
                       ('call', 'ping', 'climate-bus-probe'),
                       ('call', 'get_lease', me)]
    assert api.bus.up
    bus.log.clear()
    api.get_lease(ctx, 'x')
    api.list_plugins(ctx)
    assert bus.log == [('call', 'get_lease', me),
                       ('call', 'list_plugins', me)]


def test_a_ping_made_as_the_probe_is_sent_once(env):
    bus = _Bus()
    api = _api(bus)
    assert api.ping(context.admin_context(), timeout=10) == {
        'manager': 'm1'}
    assert [e[:2] for e in bus.log] == [('cast', 'ping'), ('call', 'ping')]


def test_concurrent_first_calls_wait_for_the_one_probe(env):
    def slow_ping():
        time.sleep(0.1)
        return {'manager': 'm1'}
    bus = _Bus(ping=slow_ping)
    api = _api(bus, bound=2.0)
    answers, errors = [], []

    def call():
        try:
            answers.append(api.get_lease(context.admin_context(), 'x'))
        except Exception as exc:  # pragma: no cover - the failure shown
            errors.append(exc)
    threads = [threading.Thread(target=call) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not errors and len(answers) == 6
    assert len(bus.calls('ping')) == 2  # one cast, one call: one probe


@pytest.mark.parametrize('stuck', ['cast:ping', 'ping'])
def test_a_bus_down_from_the_start_answers_503_within_the_bound(env,
                                                                stuck):
    """oslo.messaging's first call of a process opens its reply connection
    retrying forever: a probe that never ends.  Every call is still
    answered within the bound, at most one probe thread waits, and the
    bus is up again once the probe gets through."""
    release = threading.Event()
    hanging = {stuck: lambda: release.wait(30) and {'manager': 'late'}}
    bus = _Bus(**hanging)
    api = _api(bus, bound=0.3)
    ctx = context.admin_context()
    took, errors = [], []

    def call():
        started = time.monotonic()
        try:
            api.list_leases(ctx)
        except exceptions.MessageBusUnavailable as exc:
            errors.append(exc.message)
        took.append(time.monotonic() - started)
    try:
        threads = [threading.Thread(target=call) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        # each answered while the probe still hangs (30 s): none waited
        assert len(errors) == 8 and max(took) < 10, took
        assert len(_probe_threads()) == 1
        assert _probe_threads()[0].daemon
        assert api.bus.down_since is not None and not api.bus.up
        # known down, probe stuck: answered at once, no new thread
        started = time.monotonic()
        with pytest.raises(exceptions.MessageBusUnavailable) as info:
            api.get_lease(ctx, 'x')
        assert time.monotonic() - started < 10  # the probe hangs 30 s
        assert 'it has not answered for' in info.value.message
        assert len(_probe_threads()) == 1
        assert not bus.calls('list_leases') and not bus.calls('get_lease')
    finally:
        release.set()
    procs_wait = time.monotonic() + 5
    while _probe_threads() and time.monotonic() < procs_wait:
        time.sleep(0.01)
    assert not _probe_threads()
    assert api.bus.up  # the stuck probe got through at last
    assert api.get_lease(ctx, 'x') == {'ok': 'get_lease'}


def test_a_refused_probe_is_503_and_the_next_call_probes_again(env):
    refused = messaging.MessageDeliveryFailure(
        'Unable to connect to AMQP server on 127.0.0.1:1 after 1 tries')
    bus = _Bus(**{'cast:ping': _raise(refused)})
    api = _api(bus)
    ctx = context.admin_context()
    with pytest.raises(exceptions.MessageBusUnavailable) as info:
        api.create_lease(ctx, {'name': 'x'})
    assert 'the request could not be handed to a manager (Unable to ' \
        'connect' in info.value.message
    assert api.bus.down_since is not None and api.bus.probe is None
    assert not bus.calls('create_lease')
    bus.behaviour.clear()
    assert api.create_lease(ctx, {'name': 'x'}) == {'ok': 'create_lease'}
    assert api.bus.up and api.bus.down_since is None


def test_a_probe_no_manager_answers_is_503(env):
    bus = _Bus(ping=_raise(messaging.MessagingTimeout('Timed out')))
    api = _api(bus)
    with pytest.raises(exceptions.MessageBusUnavailable) as info:
        api.get_lease(context.admin_context(), 'x')
    assert 'no manager answered within 0.3 s' in info.value.message


def test_a_manager_error_on_the_probe_counts_as_an_answer(env):
    bus = _Bus(ping=_raise(exceptions.LeaseNotFound(id='ping')))
    api = _api(bus)
    # the fake answers at once: the bound is only there for a loaded
    # machine's thread start-up, not measured
    with pytest.raises(exceptions.LeaseNotFound):
        api.ping(context.admin_context(), timeout=10)
    assert api.bus.up


def test_while_the_bus_is_down_one_call_probes_and_the_others_fail_fast(
        env):
    bus = _Bus()
    api = _api(bus, bound=5.0)
    ctx = context.admin_context()
    api.list_plugins(ctx)  # up, ready
    bus.behaviour['list_leases'] = _raise(
        messaging.MessageDeliveryFailure('refused'))
    with pytest.raises(exceptions.MessageBusUnavailable):
        api.list_leases(ctx)
    assert api.bus.down_since is not None and api.bus.ready
    # the next call probes (a ping: the reply queue exists, no cast)
    inside, release = threading.Event(), threading.Event()

    def hanging_ping():
        inside.set()
        release.wait(10)
        return {'manager': 'm1'}
    bus.behaviour['ping'] = hanging_ping
    bus.log.clear()
    prober = threading.Thread(target=api.get_lease, args=(ctx, 'x'))
    prober.start()
    assert inside.wait(10)
    started = time.monotonic()
    with pytest.raises(exceptions.MessageBusUnavailable) as info:
        api.get_lease(ctx, 'y')
    assert time.monotonic() - started < 5  # the probe hangs 10 s
    assert 'it has not answered for' in info.value.message
    # a wake-up cast is not sent either while the probe runs
    with pytest.raises(exceptions.MessageBusUnavailable):
        api.wake_all(ctx)
    release.set()
    prober.join(10)
    assert [e[:2] for e in bus.log] == [('call', 'ping'),
                                        ('call', 'get_lease')]
    # the probe got through: the bus is up again
    assert api.bus.up
    bus.behaviour['get_lease'] = _raise(exceptions.LeaseNotFound(id='x'))
    with pytest.raises(exceptions.LeaseNotFound):
        api.get_lease(ctx, 'x')
    assert api.bus.up  # an answer, even an error


def test_a_wake_up_needs_no_probe_and_tells_the_bus_reachable(env):
    bus = _Bus(**{'cast:wake': _raise(
        messaging.MessageDeliveryFailure('refused'))})
    api = _api(bus)
    ctx = context.admin_context()
    with pytest.raises(exceptions.MessageBusUnavailable):
        api.wake_all(ctx)
    assert api.bus.down_since is not None
    bus.behaviour.clear()
    api.wake_all(ctx)  # no probe in flight: this cast tries the bus
    assert api.bus.down_since is None and not api.bus.ready
    assert [e[:2] for e in bus.log] == [('cast', 'wake'), ('cast', 'wake')]
