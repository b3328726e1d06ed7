"""Options of the lease types (``[leases]``, microversion 1.11): how a
``with_retries`` lease waits for capacity
(``climate.manager.workers.retries``), how long a ``best_effort`` lease
hunts hosts (``climate.manager.workers.hunts``); how long a temporary
hold may last (``climate.lease.holds``, 1.14)."""

from oslo_config import cfg

from climate.conf import groups

LEASES_GROUP = 'leases'

leases_group = cfg.OptGroup(
    LEASES_GROUP, title='Lease types',
    help='How leases of a type other than the default behave: a '
         'with_retries lease that cannot be granted waits, holding '
         'nothing, and is tried again at an interval and whenever '
         'capacity is released.')

leases_opts = [
    cfg.IntOpt('max_retries', default=10, min=0, max=10000,
               help='Most retries of a with_retries lease after its first '
                    'attempt; a lease may ask for fewer with '
                    'max_retries.'),
    cfg.IntOpt('retry_interval', default=300, min=1,
               help='Seconds between the counted attempts of a waiting '
                    'lease.  Capacity released by a lease that ends or is '
                    'deleted wakes the waiting leases at once; such an '
                    'extra try is not counted.'),
    cfg.IntOpt('retry_overtake_limit', default=600, min=0,
               help='Seconds a waiting lease may be overtaken: younger '
                    'leases that fit are granted before an older one that '
                    'does not, until it has waited this long; from then '
                    'on no younger lease is granted before it (no '
                    'starvation of large requests).  0: strict arrival '
                    'order.'),
    cfg.IntOpt('retry_batch', default=200, min=1, max=5000,
               help='Most waiting leases one pass looks at, oldest first.'),
    cfg.IntOpt('retry_refusals', default=10, min=1,
               help='After released capacity, the waiting leases are tried '
                    'oldest first until this many in a row do not fit; '
                    'the younger ones wait for their own next attempt.'),
    cfg.IntOpt('best_effort_timeout', default=600, min=1,
               help='Seconds a best_effort lease may spend freeing hosts '
                    "of other projects' servers (IN_PROGRESS) before it "
                    'gives up: TIMEDOUT, every host it took given back '
                    '(climate.manager.workers.hunts).'),
    cfg.IntOpt('hunt_poll_interval', default=10, min=1,
               help='Seconds between two looks of a manager for a '
                    'best_effort lease to hunt hosts for (a create wakes '
                    'its own manager at once).'),
    cfg.IntOpt('max_hold_for', default=3600, min=1, max=7 * 86400,
               help='Most seconds a temporary hold (hold_for, microversion '
                    '1.14) may keep its capacity unconfirmed '
                    '(climate.lease.holds).'),
    cfg.IntOpt('hold_poll_interval', default=5, min=1, max=300,
               help='Most seconds between two looks of a manager for '
                    'holds to expire: each manager sleeps until the next '
                    'expiry it knows of, and finds the holds made since '
                    'within this.'),
    cfg.IntOpt('series_horizon', default=28 * 86400, min=3600,
               max=366 * 86400,
               help='Seconds ahead that a recurring series (microversion '
                    '1.15) is booked: its create books every occurrence '
                    'starting within this, all or nothing, and the '
                    'managers book each later one once the horizon reaches '
                    'its start (climate.manager.series).'),
    cfg.IntOpt('max_occurrences', default=520, min=1, max=100000,
               help='Most occurrences a recurring series may have (its '
                    'COUNT, or what its UNTIL makes).'),
    cfg.IntOpt('series_poll_interval', default=60, min=1, max=3600,
               help='Most seconds between two looks of a manager for '
                    'series whose next occurrence the horizon reached.'),
]


def register_opts(conf):
    groups.register(conf, leases_group, leases_opts)


def list_opts():
    return [(LEASES_GROUP, list(leases_opts))]
