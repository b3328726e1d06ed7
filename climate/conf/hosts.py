"""Options of the ``physical:host`` plugin (``[hosts]``)."""

from oslo_config import cfg

from climate.conf import groups

HOSTS_GROUP = 'hosts'

hosts_group = cfg.OptGroup(HOSTS_GROUP, title='Compute host reservations')

hosts_opts = [
    cfg.StrOpt('inventory', default='static', choices=['nova', 'static'],
               help='Where reservable hosts live. "nova": hypervisors known '
                    'to Nova, moved between the freepool aggregate and one '
                    'aggregate per reservation. "static": hosts declared by '
                    'the operator through the API with their properties, '
                    'no cloud calls (start and end only notify).'),
    cfg.StrOpt('aggregate_freepool_name', default='freepool',
               help='Name of the Nova aggregate holding every reservable '
                    'host that is not in a reservation.'),
    cfg.BoolOpt('freepool_accepts_unreserved', default=True,
                help='Whether servers booted without a reservation hint may '
                     'land on freepool hosts (read by the ClimateFilter of '
                     'nova-scheduler; set the same value in nova.conf).'),
    cfg.IntOpt('max_parallel', default=10, min=1,
               help='Hosts a backend acts on in parallel at lease start, '
                    'end and healing.'),
    cfg.IntOpt('healing_interval', default=60, min=0,
               help='Seconds between two checks of the reservable hosts '
                    'by the inventory backend; down hosts inside pending or '
                    'active reservations are replaced (0 disables healing; '
                    'the static inventory heals only the hosts the power '
                    'planner could not wake, see [power] wake_grace).'),
]


def register_opts(conf):
    groups.register(conf, hosts_group, hosts_opts)


def list_opts():
    return [(HOSTS_GROUP, list(hosts_opts))]
