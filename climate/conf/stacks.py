"""Options of the ``virtual:stack`` plugin (``[stacks]``)."""

from oslo_config import cfg

from climate.conf import groups

STACKS_GROUP = 'stacks'

stacks_group = cfg.OptGroup(STACKS_GROUP, title='Heat stack reservations')

stacks_opts = [
    cfg.StrOpt('inventory', default='static', choices=['heat', 'static'],
               help='Who makes the stack of a virtual:stack reservation. '
                    '"heat": Heat, as the lease\'s user through its trust '
                    '(flavors read from Nova). "static": no cloud calls; '
                    'the needs are derived from the template against '
                    '[stacks] static_flavors and booked, the start and '
                    'the end only record (the embedded default).'),
    cfg.ListOpt('static_flavors',
                default=['m1.tiny:1:512:1', 'm1.small:1:2048:20',
                         'm1.medium:2:4096:40', 'm1.large:4:8192:80',
                         'm1.xlarge:8:16384:160'],
                help='The flavors templates may name with the static '
                     'inventory, as name:vcpus:memory_mb:disk_gb (the '
                     'name is also the id).'),
    cfg.IntOpt('max_template_size', default=524288, min=1024,
               help='Largest template (its JSON text, in bytes) a '
                    'reservation may carry; Heat\'s own default limit.'),
    cfg.IntOpt('stack_timeout', default=30, min=1,
               help='Minutes Heat may take to create, update or resume a '
                    'stack (inventory = heat) before the attempt fails '
                    'and is retried as the event\'s.'),
]


def register_opts(conf):
    groups.register(conf, stacks_group, stacks_opts)


def list_opts():
    return [(STACKS_GROUP, list(stacks_opts))]
