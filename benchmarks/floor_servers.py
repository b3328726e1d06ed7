"""The bare servers bench_floor.py measures against, one per process.

ANSWERS_FILE holds real answers of Climate: ``lease`` (a create's lease),
``page`` (the manager's answer to list_leases) and ``page_body`` (the
text of GET /v1/leases).

``python floor_servers.py http PORT ANSWERS_FILE``: the API's WSGI server
(climate.api.server.APIServer, 2 threads) around an application that
answers a POST (after decoding its JSON body) with 201 and the lease, a GET
with 200 and the page's text, and does nothing else.

``python floor_servers.py rpc TRANSPORT_URL ANSWERS_FILE``: an
oslo.messaging RPC server (threading executor, as the manager's) whose
create_lease and list_leases return those answers at once.

``python floor_servers.py chain-rpc TRANSPORT_URL ANSWERS_FILE DB_URL``:
the same RPC server on the chain's topic, whose create_lease runs the
create's SQL on the bare driver (:class:`BareSql`) before answering.

``python floor_servers.py chain-http PORT ANSWERS_FILE TRANSPORT_URL``: the
same WSGI server, whose POST makes that call and answers with its result:
a create through every process of Climate (HTTP server, RabbitMQ, an RPC
server, the database) with none of Climate's code.

All run until killed.
"""

import datetime
import json
import sys
import threading
import time

import common
from climate.db import api as db_api
from climate.db import models

TOPIC = 'climate.floor'
CHAIN_TOPIC = 'climate.floor.chain'


class BareSql:
    """A create's and a page's SQL on a bare DB-API connection."""

    TABLES = {'lease': models.Lease.__table__,
              'reservation': models.Reservation.__table__,
              'event': models.Event.__table__,
              'noop': models.NoopAction.__table__}

    def __init__(self, engine, project='floor'):
        self.project = project
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

    def create(self, name):
        start = datetime.datetime(2099, 1, 1)
        lease, res, events = common.lease_rows(
            name, start, start + datetime.timedelta(days=1),
            project=self.project)
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


def _messaging(transport_url):
    from oslo_config import cfg
    import oslo_messaging as messaging

    from climate import rpc  # noqa: F401  (its poller setting applies)

    # oslo.messaging registers some of its options on the global CONF only
    conf = cfg.CONF
    conf([], project='climate-floor', default_config_files=[])
    return messaging, messaging.get_rpc_transport(conf, url=transport_url)


def _serve_http(port, answer_post, page):
    from climate.api import server

    def application(environ, start_response):
        if environ['REQUEST_METHOD'] == 'GET':
            status, body = '200 OK', page
        else:
            length = int(environ.get('CONTENT_LENGTH') or 0)
            body = answer_post(json.loads(
                environ['wsgi.input'].read(length) or b'{}'))
            status = '201 Created'
        start_response(status, [('Content-Type', 'application/json'),
                                ('Content-Length', str(len(body)))])
        return [body]

    server.APIServer(application, '127.0.0.1', port, 2).serve_forever()


def _http(port, answers):
    created = json.dumps({'lease': answers['lease']}).encode('utf-8')
    _serve_http(port, lambda body: created,
                answers['page_body'].encode('utf-8'))


def _chain_http(port, answers, transport_url):
    messaging, transport = _messaging(transport_url)
    client = messaging.get_rpc_client(
        transport, messaging.Target(topic=CHAIN_TOPIC), timeout=30)

    def answer_post(body):
        return json.dumps({'lease': client.call(
            {}, 'create_lease', body=body)}).encode('utf-8')

    _serve_http(port, answer_post, answers['page_body'].encode('utf-8'))


def _rpc(transport_url, answers, topic=TOPIC, sql=None):
    messaging, transport = _messaging(transport_url)
    lock = threading.Lock()

    class Endpoint:
        def create_lease(self, ctx, body):
            if sql is not None:
                with lock:
                    sql.create('chain-' + body['name'])
            return dict(answers['lease'], name=body['name'])

        def list_leases(self, ctx, query):
            return answers['page']

    server = messaging.get_rpc_server(
        transport, messaging.Target(topic=topic, server='floor'),
        [Endpoint()])
    server.start()
    while True:
        time.sleep(3600)


def _chain_rpc(transport_url, answers, db_url):
    import sqlalchemy as sa

    _rpc(transport_url, answers, CHAIN_TOPIC,
         BareSql(sa.create_engine(db_url)))


if __name__ == '__main__':
    kind, arg, answers_file = sys.argv[1:4]
    with open(answers_file) as f:
        loaded = json.load(f)
    if kind == 'http':
        _http(int(arg), loaded)
    elif kind == 'chain-http':
        _chain_http(int(arg), loaded, sys.argv[4])
    elif kind == 'chain-rpc':
        _chain_rpc(arg, loaded, sys.argv[4])
    else:
        _rpc(arg, loaded)
