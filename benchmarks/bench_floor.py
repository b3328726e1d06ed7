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
- chain (create only): the three chained as Climate chains them, one
  process each: a bare WSGI server whose POST makes the bare RPC call,
  whose server runs the bare SQL before answering;
- post / get: the real request.

The sum of the three floors is what a request would cost if Climate's own
stack (pecan, WSME, oslo.policy, oslo.context, SQLAlchemy and oslo.db, the
plugin, logging) took no time; the real request minus that sum is what it
does take.  The chain is the other way round: what the processes and
their hops cost together (a hop wakes a process that may wait for a core);
the real POST minus the chain is what Climate's own code takes.
"""

import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

import common
import floor_servers
from climate.lease import views
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


def _start(kind, arg, lease_file, *extra):
    return subprocess.Popen(
        [sys.executable, os.path.join(HERE, 'floor_servers.py'), kind,
         str(arg), lease_file] + list(extra), stdin=subprocess.DEVNULL)


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
            chain_port = procs.free_port()
            servers.append(_start('chain-rpc', env.vhost.transport_url,
                                  answers_file, env.database.url))
            servers.append(_start('chain-http', chain_port, answers_file,
                                  env.vhost.transport_url))
            bare_http = common.LeanClient('http://127.0.0.1:%d' % port)
            chain = common.LeanClient('http://127.0.0.1:%d' % chain_port)
            for server in (bare_http, chain):
                procs.wait_for(lambda: _reachable(server), 60,
                               message='the bare HTTP servers')
            rpc_client, transport = _rpc_client(env.vhost.transport_url)
            sql = floor_servers.BareSql(env.database.engine, PROJECT)
            page = {'limit': LIMIT}
            create = _interleaved({
                'http': lambda i: bare_http.request(
                    'POST', '/', expect=(201,), json=_create_body(i)).json(),
                'rpc': lambda i: rpc_client.call(
                    {}, 'create_lease', body=_create_body(i)),
                'sql': lambda i: sql.create('sql-%06d' % i),
                'chain': lambda i: chain.request(
                    'POST', '/', expect=(201,), json=_create_body(i)).json(),
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
            chain.close()
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
        if 'chain' in p50:
            print('  %s: the three crossings chained, one process each as '
                  'Climate runs them, p50 %.1f ms; %s p50 %.1f ms, of which '
                  'Climate\'s own code %.1f ms' % (
                      label, p50['chain'], real.upper(), p50[real],
                      p50[real] - p50['chain']))
            results[label]['chain_ms'] = p50['chain']
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
    # as the manager sends it
    page = views.lease_page([(lease['id'], json.dumps(lease))
                             for lease in leases], compressed=True)
    with open(path, 'w') as f:
        json.dump({'lease': lease, 'page': page,
                   'page_body': page_body.decode('utf-8')}, f)


def _reachable(client):
    try:
        client.request('GET', '/')
        return True
    except OSError:
        return False


def _rpc_client(transport_url):
    from oslo_config import cfg
    import oslo_messaging as messaging

    from climate import rpc  # noqa: F401  (its poller setting applies)

    # oslo.messaging registers some of its options on the global CONF only
    conf = cfg.CONF
    conf([], project='climate-floor', default_config_files=[])
    transport = messaging.get_rpc_transport(conf, url=transport_url)
    client = messaging.get_rpc_client(
        transport, messaging.Target(topic=floor_servers.TOPIC), timeout=30)
    tries = iter(range(-1, -1000, -1))  # names no measured call takes
    for topic in (floor_servers.TOPIC, floor_servers.CHAIN_TOPIC):
        procs.wait_for(lambda: _answers(client, topic, next(tries)), 60,
                       message='the bare RPC server of %s' % topic)
    return client, transport


def _answers(client, topic, i):
    import oslo_messaging as messaging
    try:
        return client.prepare(topic=topic, timeout=2).call(
            {}, 'create_lease', body=_create_body(i))
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
