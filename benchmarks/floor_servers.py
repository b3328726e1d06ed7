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

Both run until killed.
"""

import json
import sys
import time

TOPIC = 'climate.floor'


def _http(port, answers):
    from climate.api import server

    created = json.dumps({'lease': answers['lease']}).encode('utf-8')
    page = answers['page_body'].encode('utf-8')

    def application(environ, start_response):
        if environ['REQUEST_METHOD'] == 'GET':
            status, body = '200 OK', page
        else:
            length = int(environ.get('CONTENT_LENGTH') or 0)
            json.loads(environ['wsgi.input'].read(length) or b'{}')
            status, body = '201 Created', created
        start_response(status, [('Content-Type', 'application/json'),
                                ('Content-Length', str(len(body)))])
        return [body]

    server.APIServer(application, '127.0.0.1', port, 2).serve_forever()


def _rpc(transport_url, answers):
    from oslo_config import cfg
    import oslo_messaging as messaging

    from climate import rpc  # noqa: F401  (its poller setting applies)

    class Endpoint:
        def create_lease(self, ctx, body):
            return dict(answers['lease'], name=body['name'])

        def list_leases(self, ctx, query):
            return answers['page']

    # oslo.messaging registers some of its options on the global CONF only
    conf = cfg.CONF
    conf([], project='climate-floor', default_config_files=[])
    transport = messaging.get_rpc_transport(conf, url=transport_url)
    server = messaging.get_rpc_server(
        transport, messaging.Target(topic=TOPIC, server='floor'),
        [Endpoint()])
    server.start()
    while True:
        time.sleep(3600)


if __name__ == '__main__':
    kind, arg, answers_file = sys.argv[1:4]
    with open(answers_file) as f:
        loaded = json.load(f)
    if kind == 'http':
        _http(int(arg), loaded)
    else:
        _rpc(arg, loaded)
