"""Options of the ``virtual:volume`` plugin (``[volumes]``)."""

from oslo_config import cfg

from climate.conf import groups

VOLUMES_GROUP = 'volumes'

volumes_group = cfg.OptGroup(VOLUMES_GROUP, title='Volume reservations')

volumes_opts = [
    cfg.StrOpt('inventory', default='static', choices=['cinder', 'static'],
               help='Where the volume pools reservations book capacity on '
                    'come from. "cinder": Cinder\'s backend pools '
                    '(scheduler-stats/get_pools, with the service '
                    'credentials), refreshed by the manager; volumes are '
                    'created and removed in Cinder. "static": pools '
                    'declared by the operator through /v1/volume-pools, no '
                    'cloud calls (start and end only record).'),
    cfg.IntOpt('sync_interval', default=60, min=0,
               help='Seconds between two refreshes of the pools from '
                    'Cinder by the manager (inventory = cinder; 0 '
                    'disables the refresh).'),
    cfg.StrOpt('default_volume_type', default='',
               help='Volume type of a reservation that names none (empty: '
                    'Cinder\'s default volume type).'),
]


def register_opts(conf):
    groups.register(conf, volumes_group, volumes_opts)


def list_opts():
    return [(VOLUMES_GROUP, list(volumes_opts))]
