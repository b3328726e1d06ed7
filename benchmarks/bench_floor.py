"""What a POST /v1/leases and a GET of a page of 100 cost at the least on
this machine, beside the real ones.

A request crosses HTTP, an RPC call over RabbitMQ and the database.  This
benchmark times each crossing bare, with no Climate code in it, and the
real request, in interleaved rounds so that all four see the same machine
(virtual machines drift; see common.cpu_reference):

- http: the API's WSGI server (2 threads) answering with a real answer of
  Climate, canned (floor_servers.py);
- rpc: an oslo.messaging call over the same RabbitMQ to a server whose
  method returns the manager's real answer at once (floor_servers.py);
- sql: the request's SQL through the bare DB-API driver.  For a create:
  the pool's ping, the inserts of the lease, its reservation, its three
  events and the noop plugin's record, and the COMMIT.  For a page: the
  listing's own query, which renders the leases as JSON in the database;
- post / get: the real request.

The sum of the three floors is what a request would cost if Climate's own
stack (pecan, WSME, oslo.policy, oslo.context, SQLAlchemy and oslo.db, the
plugin, logging) took no time; the real request minus that sum is what it
does take.
"""

import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

import common
from climate.db import api as db_api
from climate.db import models
from climate.tests.functional import procs

ROUNDS = 20
LIST_ROUNDS = 5
PER_ROUND = 50
WARMUP = 30
TARGET_POST_P50 = 10.0
TARGET_LIST_P50 = 20.0
LIMIT = 100
LIST_LEASES = 10000
PROJECT = 'floor'
HERE = os.path.dirname(os.path.abspath(__file__))


def _create_body(i):
    return {'name': 'floor-%06d' % i, 'start_date': '2099-01-01 00:00',
            'end_date': '2099-01-02 00:00',
            'reservations': [{'resource_type': 'noop'}], 'events': []}


def _start(kind, arg, lease_file):
    return subprocess.Popen(
        [sys.executable, os.path.join(HERE, 'floor_servers.py'), kind,
         str(arg), lease_file], stdin=subprocess.DEVNULL)


class _Sql:
    """A create's and a page's SQL on a bare DB-API connection."""

    TABLES = {'lease': models.Lease.__table__,
              'reservation': models.Reservation.__table__,
              'event': models.Event.__table__,
              'noop': models.NoopAction.__table__}

    def __init__(self, engine):
        self.dialect = engine.dialect
        self.raw = engine.raw_connection()
        self.dbapi = self.raw.driver_connection
        self.statements = {}

    def _sql(self, name, row):
        """The driver's SQL text of the insert, as Climate's is compiled."""
        key = (name, tuple(row))
        if key not in self.statements:
            self.statements[key] = str(self.TABLES[name].insert().compile(
                dialect=self.dialect, column_keys=list(row)))
        return self.statements[key]

    def create(self, i):
        start = datetime.datetime(2099, 1, 1)
        lease, res, events = common.lease_rows(
            'sql-%06d' % i, start, start + datetime.timedelta(days=1),
            project=PROJECT)
        # the driver takes the JSON column as text
        res['params'] = json.dumps(res['params'])
        noop = dict(action='reserve', lease_id=lease['id'],
                    reservation_id=res['id'], event_id=None,
                    manager='floor', created_at=lease['created_at'])
        self.dialect.do_ping(self.dbapi)
        cur = self.dbapi.cursor()
        cur.execute(self._sql('lease', lease), lease)
        cur.execute(self._sql('reservation', res), res)
        cur.executemany(self._sql('event', events[0]), events)
        cur.execute(self._sql('noop', noop), noop)
        cur.close()
        self.dbapi.commit()

    def page(self, project_id, limit):
        """The listing's page query (the bodies stored with the leases,
        climate.db.lease_json), fetched whole."""
        if 'page' not in self.statements:
            compiled = db_api._page_statement(
                self.dialect.name, True, (), 'created_at', False, False,
                True).compile(dialect=self.dialect)
            self.statements['page'] = (str(compiled), compiled)
        text, compiled = self.statements['page']
        cur = self.dbapi.cursor()
        cur.execute(text, compiled.construct_params(
            {'project_id': project_id, 'limit': limit}))
        rows = cur.fetchall()
        cur.close()
        self.dbapi.rollback()
        assert len(rows) == limit, len(rows)
        return rows

    def close(self):
        self.raw.close()


def run(rounds=ROUNDS, list_rounds=LIST_ROUNDS):
    print('== floor of a create and of a page of %d: bare HTTP, bare RPC, '
          'bare SQL and the real request, interleaved rounds of %d, %s, %s '
          'client' % (LIMIT, PER_ROUND, common.ENGINE, common.CLIENT))
    servers = []
    workdir = tempfile.mkdtemp(prefix='climate-floor-')
    answers_file = os.path.join(workdir, 'answers.json')
    with common.Climate(managers=1, api_threads=2) as env:
        try:
            client = env.latency_client(project=PROJECT, version='1.1')
            _write_answers(env, client, answers_file)
            port = procs.free_port()
            servers.append(_start('http', port, answers_file))
            servers.append(_start('rpc', env.vhost.transport_url,
                                  answers_file))
            bare_http = common.LeanClient('http://127.0.0.1:%d' % port)
            procs.wait_for(lambda: _reachable(bare_http), 60,
                           message='the bare HTTP server')
            rpc_client, transport = _rpc_client(env.vhost.transport_url)
            sql = _Sql(env.database.engine)
            page = {'limit': LIMIT}
            create = _interleaved({
                'http': lambda i: bare_http.request(
                    'POST', '/', expect=(201,), json=_create_body(i)).json(),
                'rpc': lambda i: rpc_client.call(
                    {}, 'create_lease', body=_create_body(i)),
                'sql': sql.create,
                'post': lambda i: client.request(
                    'POST', '/v1/leases', expect=(201,),
                    json=_create_body(i)).json(),
            }, rounds)
            listing = _interleaved({
                'http': lambda i: bare_http.request('GET', '/').json(),
                'rpc': lambda i: rpc_client.call(
                    {}, 'list_leases', query=page),
                'sql': lambda i: sql.page(PROJECT, LIMIT),
                'get': lambda i: client.request(
                    'GET', '/v1/leases', params=page).json(),
            }, list_rounds)
            sql.close()
            bare_http.close()
            client.close()
            transport.cleanup()
        finally:
            for proc in servers:
                proc.kill()
                proc.wait()
    results = {}
    for label, times, real, target in (
            ('create', create, 'post', TARGET_POST_P50),
            ('page of %d' % LIMIT, listing, 'get', TARGET_LIST_P50)):
        p50 = {name: common.percentile(values, 50)
               for name, values in times.items()}
        for name, values in times.items():
            print('  %-11s %-4s %s' % (label, name, common.summary(values)))
        floor = p50['http'] + p50['rpc'] + p50['sql']
        print('  %s: floor (http + rpc + sql p50s) %.1f ms; %s p50 %.1f '
              'ms, of which Climate\'s own stack %.1f ms; target %.1f ms' % (
                  label, floor, real.upper(), p50[real], p50[real] - floor,
                  target))
        results[label] = {'floor_ms': floor, 'p50_ms': p50[real]}
    return results


def _write_answers(env, client, path):
    """Real answers of this Climate for the bare servers to give."""
    lease = client.request('POST', '/v1/leases', expect=(201,),
                           json=_create_body(0)).json()['lease']
    start = datetime.datetime(2099, 1, 1)
    common.bulk_leases(env.database, LIST_LEASES, start,
                       start + datetime.timedelta(days=1), project=PROJECT)
    page_body = client.request('GET', '/v1/leases',
                               params={'limit': LIMIT}).content
    leases = json.loads(page_body)['leases']
    page = {'leases': json.dumps(leases), 'count': len(leases),
            'last_id': leases[-1]['id']}
    with open(path, 'w') as f:
        json.dump({'lease': lease, 'page': page,
                   'page_body': page_body.decode('utf-8')}, f)


def _reachable(client):
    try:
        client.request('POST', '/', expect=(201,), json={})
        return True
    except OSError:
        return False


def _rpc_client(transport_url):
    from oslo_config import cfg
    import oslo_messaging as messaging

    import floor_servers
    from climate import rpc  # noqa: F401  (its poller setting applies)

    # oslo.messaging registers some of its options on the global CONF only
    conf = cfg.CONF
    conf([], project='climate-floor', default_config_files=[])
    transport = messaging.get_rpc_transport(conf, url=transport_url)
    client = messaging.get_rpc_client(
        transport, messaging.Target(topic=floor_servers.TOPIC), timeout=30)
    procs.wait_for(lambda: _answers(client), 60,
                   message='the bare RPC server')
    return client, transport


def _answers(client):
    import oslo_messaging as messaging
    try:
        return client.prepare(timeout=2).call(
            {}, 'create_lease', body=_create_body(0))
    except messaging.MessagingTimeout:
        return None


def _interleaved(ops, rounds):
    times = {name: [] for name in ops}
    i = 1
    for name, op in ops.items():
        for _ in range(WARMUP):
            op(i)
            i += 1
    for _ in range(rounds):
        for name, op in ops.items():
            for _ in range(PER_ROUND):
                began = time.perf_counter()
                op(i)
                times[name].append((time.perf_counter() - began) * 1000)
                i += 1
    return times


if __name__ == '__main__':
    run()
