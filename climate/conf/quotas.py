"""Options of the per-project limits on leases (``[quotas]``): the
defaults of every project without its own (``/v1/quotas``, microversion
1.9), and the operator's approval service."""

from oslo_config import cfg

from climate.conf import groups

QUOTAS_GROUP = 'quotas'

quotas_group = cfg.OptGroup(
    QUOTAS_GROUP, title='Quotas',
    help='Limits on what a project may reserve, checked at every lease '
         'create and update in the transaction that books it.  -1 (or no '
         'entry for a class) is no limit.  An administrator sets a '
         "project's own limits with PUT /v1/quotas/{project_id}.")

quotas_opts = [
    cfg.IntOpt('max_lease_duration', default=-1, min=-1,
               help='Longest lease, in seconds (-1: no limit).'),
    cfg.IntOpt('max_extension', default=-1, min=-1,
               help='Most seconds one update may move the end of a lease '
                    'later (-1: no limit).'),
    cfg.DictOpt('max_concurrent', default={},
                help='Most of each resource class a project may hold at one '
                     'instant, over all its leases, e.g. '
                     '"HOST:4,VCPU:256,VOLUME_GB:2000".'),
    cfg.DictOpt('budget', default={},
                help="Resource-hours of each class a project's leases may "
                     'hold within one budget period (consumed and '
                     'committed), e.g. "HOST:720,VCPU:50000".'),
    cfg.StrOpt('budget_period', default='month',
               choices=['day', 'week', 'month', 'year'],
               help='The calendar period (UTC) a budget is for: a lease '
                    'over several periods is checked in each.'),
    cfg.URIOpt('approval_url', schemes=['http', 'https'],
               help="The operator's approval service: each create and "
                    'update that passed the quotas is POSTed to it as JSON '
                    '(doc/source/quotas.rst) before anything is written; '
                    'unset, nothing is asked.'),
    cfg.FloatOpt('approval_timeout', default=5.0, min=0.1,
                 help='Seconds the approval service may take to answer.'),
    cfg.BoolOpt('approval_fail_open', default=False,
                help='When the approval service cannot be reached or gives '
                     'no valid answer: grant (true) or refuse with 403 '
                     '(false, the default).'),
]


def register_opts(conf):
    groups.register(conf, quotas_group, quotas_opts)


def list_opts():
    return [(QUOTAS_GROUP, list(quotas_opts))]
