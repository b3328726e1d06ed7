"""How Climate answers when the database or the message bus is down, and
how long it remembers Idempotency-Keys."""

from oslo_config import cfg

api_opts = [
    cfg.FloatOpt('message_bus_timeout', default=5.0, min=2.0,
                 help='Seconds climate-api waits for the message bus: to '
                      'hand a request to a manager, and between two signs '
                      'of life of the manager working on it (oslo.messaging '
                      'call monitor).  Past it the request is answered 503 '
                      '"message bus unavailable" and the worker thread is '
                      'free again.  A manager busy for longer on a request '
                      'keeps it alive (rpc_response_timeout still bounds '
                      'the whole call).'),
    cfg.IntOpt('message_bus_retries', default=1, min=0,
               help='How many times climate-api reconnects to the message '
                    'bus to send one request before answering 503 '
                    '(oslo.messaging retry; each attempt waits '
                    '[oslo_messaging_rabbit] rabbit_retry_interval and '
                    'kombu_reconnect_delay).'),
    cfg.IntOpt('retry_after', default=5, min=1,
               help='Seconds given in the Retry-After header of a 503 '
                    '(database or message bus unavailable).'),
    cfg.FloatOpt('health_timeout', default=5.0, min=0.5,
                 help='Seconds the detailed health check (GET /v1/health) '
                      'waits for each check before reporting it failed.'),
]

manager_opts = [
    cfg.IntOpt('idempotency_key_ttl', default=86400, min=86400,
               help='Seconds an Idempotency-Key of a lease create is '
                    'remembered (per project): a create retried with the '
                    'same key within that time returns the first lease. '
                    'At least a day, so that a client retrying after a '
                    'long outage still finds its first lease.'),
    cfg.IntOpt('idempotency_key_purge_interval', default=3600, min=0,
               help='Seconds between two passes of the manager that '
                    'deletes expired Idempotency-Keys (0: never).'),
]


def register_opts(conf):
    conf.register_opts(api_opts, group='api')
    conf.register_opts(manager_opts, group='manager')


def list_opts():
    return [('api', api_opts), ('manager', manager_opts)]
