"""Options of the webhooks a project registers (``[webhooks]``)."""

from oslo_config import cfg

from climate.conf import groups

WEBHOOKS_GROUP = 'webhooks'

webhooks_group = cfg.OptGroup(
    WEBHOOKS_GROUP, title='Webhooks',
    help="Delivery of a lease's notices (its user events of type "
         '"notification" and its before-end notice) to the webhooks its '
         'project registered (/v1/webhooks, microversion 1.7).')

webhooks_opts = [
    cfg.IntOpt('max_attempts', default=8, min=1,
               help='Attempts at a delivery before it is marked failed '
                    '(an answer other than 2xx, a timeout or a refused '
                    'connection is a failed attempt).'),
    cfg.FloatOpt('backoff_base', default=5.0, min=0.0,
                 help='Seconds before the second attempt of a delivery; '
                      'doubled after each failed attempt.'),
    cfg.FloatOpt('backoff_max', default=600.0, min=0.0,
                 help='Longest wait between two attempts of a delivery.'),
    cfg.FloatOpt('timeout', default=10.0, min=0.1,
                 help='Seconds a POST to a webhook may take (to connect, '
                      'and to answer); past it the attempt failed.'),
    cfg.FloatOpt('claim_ttl', default=60.0, min=1.0,
                 help='Seconds a manager holds a delivery it is sending: '
                      'if it dies meanwhile, another manager sends it again '
                      'once the claim expires (at least "timeout" plus 5 s '
                      'is used, so that a live sender is never overtaken).'),
    cfg.FloatOpt('poll_interval', default=2.0, min=0.1,
                 help='Longest time a manager\'s delivery worker sleeps '
                      'before looking for due deliveries (retries, and '
                      'deliveries of events other managers ran).'),
    cfg.IntOpt('workers', default=4, min=1,
               help='Deliveries a manager sends at the same time.'),
    cfg.BoolOpt('allow_private_targets', default=False,
                help='Accept webhook URLs whose host is (or resolves to) a '
                     'loopback, link-local, unspecified or multicast '
                     'address.  Off by default: such a webhook would make '
                     'the managers POST to themselves or to the cloud\'s '
                     'metadata service (169.254.169.254).  Tests and '
                     'single-machine setups turn it on.'),
]


def register_opts(conf):
    groups.register(conf, webhooks_group, webhooks_opts)


def list_opts():
    return [(WEBHOOKS_GROUP, list(webhooks_opts))]
