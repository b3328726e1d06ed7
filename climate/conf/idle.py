"""Options of idle reclaim (``[idle]``, microversion 1.17): started
reservations nothing uses are warned, then ended early
(``climate.manager.idle``)."""

from oslo_config import cfg

from climate.conf import groups

IDLE_GROUP = 'idle'

idle_group = cfg.OptGroup(
    IDLE_GROUP, title='Idle reclaim',
    help='Leases that started and whose reservations nothing uses (no '
         'server on their hosts, as the hosts backend reads it) are '
         'warned, then ended early, for the projects that have an idle '
         'policy (PUT /v1/idle-policies/{project_id}) or, with '
         'default_warn_after, for every project.  A lease created with '
         'keep_idle is never reclaimed.')

idle_opts = [
    cfg.BoolOpt('enabled', default=False,
                help='Run the idle reclaim worker in every manager.'),
    cfg.IntOpt('poll_interval', default=300, min=1, max=86400,
               help='Seconds between two looks at the started leases.'),
    cfg.IntOpt('default_warn_after', default=0, min=0,
               help='For a project without its own policy: seconds of '
                    'nothing used before its lease is warned (0: no '
                    'reclaim for such projects).'),
    cfg.IntOpt('default_end_after', default=0, min=0,
               help='For a project without its own policy: seconds of '
                    'nothing used before its lease is ended (at least '
                    'default_warn_after; 0: warned only).'),
]


def register_opts(conf):
    groups.register(conf, idle_group, idle_opts)


def list_opts():
    return [(IDLE_GROUP, list(idle_opts))]
