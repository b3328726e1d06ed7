"""The bare servers bench_floor.py measures against, one per process.

``python floor_servers.py http PORT LEASE_FILE``: the API's WSGI server
(climate.api.server.APIServer, 2 threads) around an application that reads
the JSON body and answers 201 with the lease in LEASE_FILE (a real create's
answer), nothing else.

``python floor_servers.py rpc TRANSPORT_URL LEASE_FILE``: an oslo.messaging
RPC server (threading executor, as the manager's) whose one method returns
that lease at once.

Both run until killed.
"""

import json
import sys
import time

TOPIC = 'climate.floor'


def _http(port, lease):
    from climate.api import server

    body = json.dumps({'lease': lease}).encode('utf-8')

    def application(environ, start_response):
        length = int(environ.get('CONTENT_LENGTH') or 0)
        json.loads(environ['wsgi.input'].read(length) or b'{}')
        start_response('201 Created', [
            ('Content-Type', 'application/json'),
            ('Content-Length', str(len(body)))])
        return [body]

    server.APIServer(application, '127.0.0.1', port, 2).serve_forever()


def _rpc(transport_url, lease):
    from oslo_config import cfg
    import oslo_messaging as messaging

    from climate import rpc  # noqa: F401  (its poller setting applies)

    class Endpoint:
        def create_lease(self, ctx, body):
            return dict(lease, name=body['name'])

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
    kind, arg, lease_file = sys.argv[1:4]
    with open(lease_file) as f:
        lease = json.load(f)
    if kind == 'http':
        _http(int(arg), lease)
    else:
        _rpc(arg, lease)
