from oslo_config import cfg

manager_opts = [
    cfg.ListOpt('plugins', default=['noop', 'physical.host.plugin',
                                     'virtual.instance.plugin',
                                     'virtual.volume.plugin',
                                     'virtual.floatingip.plugin',
                                     'network.plugin',
                                     'virtual.stack.plugin'],
                help='Resource plugins to load (names of entry points in '
                     'the climate.resource.plugins namespace): noop, '
                     'physical.host.plugin (see [hosts]), '
                     'virtual.instance.plugin (instance slots on the '
                     'hosts of physical.host.plugin, which it needs), '
                     'virtual.volume.plugin (volume capacity on the pools '
                     'of [volumes] inventory), virtual.floatingip.plugin '
                     '(floating IP addresses registered through '
                     '/v1/floatingips, see [floatingips]), network.plugin '
                     '(network segments registered through /v1/networks, '
                     'see [networks]), virtual.stack.plugin (a Heat '
                     'stack, its needs booked through the instance, '
                     'volume and floating IP plugins, which it needs; see '
                     '[stacks]).'),
    cfg.IntOpt('minutes_before_end_lease', default=60, min=0,
               help='Default offset of the before_end_lease event, in '
                    'minutes before the end; 0 creates no such event unless '
                    'a lease asks for one with before_end_date.'),
    cfg.IntOpt('event_claim_batch', default=50, min=1,
               help='How many due events a manager claims at once.'),
    cfg.IntOpt('event_batch_size', default=50, min=1,
               help='At most this many claimed events run in one '
                    'transaction when no plugin of their leases acts in '
                    'a cloud (noop, the static back-ends): a burst of '
                    'leases due together starts in a few commits rather '
                    'than one each.  Events of leases acting in a cloud, '
                    'and every event of a batch that failed, run one to '
                    'a transaction.  1: each event alone.'),
    cfg.IntOpt('event_claim_ttl', default=60, min=5,
               help='Seconds a claim on an event lasts.  The claims of a '
                    'crashed manager are taken over when its heartbeat '
                    'stops (see heartbeat_timeout); this is the last '
                    'resort, for claims of a manager that wrote no '
                    'heartbeat.'),
    cfg.FloatOpt('heartbeat_interval', default=1.0, min=0.1,
                 help='Seconds between two heartbeats of a manager: it '
                      'stamps its row of the managers table with the '
                      "database's time, and releases the claims of "
                      'managers declared dead.'),
    cfg.FloatOpt('heartbeat_timeout', default=3.0, min=0.5,
                 help='Seconds without a heartbeat (by the database\'s '
                      'clock) after which a manager is declared dead and '
                      'its claimed events are run by the others.  Keep '
                      'it several heartbeat_interval, and above the '
                      'longest pause a live manager may have (a database '
                      'failover, a stalled host): a live manager declared '
                      'dead loses its running events to others (each '
                      'still runs once).'),
    cfg.IntOpt('event_workers', default=4, min=1,
               help='Events a manager runs in parallel.'),
    cfg.IntOpt('event_max_attempts', default=5, min=1,
               help='Attempts at an event before it and its lease go to '
                    'ERROR.'),
    cfg.FloatOpt('event_retry_backoff', default=2.0, min=0.1,
                 help='Seconds before the first retry of a failed event; '
                      'doubled on each further attempt.'),
    cfg.FloatOpt('event_retry_max_backoff', default=300.0, min=1,
                 help='Longest wait between two attempts at an event.'),
    cfg.FloatOpt('max_sleep', default=30.0, min=0.5,
                 help='Longest a manager sleeps without looking for due '
                      'events, even if nothing is due and nobody wakes it.'),
    cfg.IntOpt('lease_body_fill_interval', default=60, min=0,
               help='Seconds after a manager starts, and between its '
                    'passes, before it stores the listing body of leases '
                    'that have none: leases written before bodies were '
                    'stored, or whose bodies an upgrade cleared because '
                    'their shape changed.  It stops once none is left. '
                    '0: never; such leases are then rendered each time '
                    'they are listed.'),
    cfg.IntOpt('trust_sweep_interval', default=900, min=0,
               help='Seconds between two passes of the trust sweeper, which '
                    'deletes the Keystone trusts of ended leases that '
                    'Keystone could not delete at the time (0: never). '
                    'Only with auth_strategy = keystone.'),
    cfg.BoolOpt('sweep_orphan_trusts', default=False,
                help="Also delete trusts held by Climate's service user "
                     'that no lease refers to (left by a manager that died '
                     'between creating a trust and storing its lease, or '
                     'between deleting a lease and its trust), once two '
                     'passes in a row found them unused.  Enable only when '
                     "Climate's service user is Climate's alone: trusts "
                     'other services gave that user would be deleted too.'),
]


def register_opts(conf):
    conf.register_opts(manager_opts, group='manager')


def list_opts():
    return [('manager', manager_opts)]
