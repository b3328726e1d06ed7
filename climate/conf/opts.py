"""Entry points for oslo-config-generator."""

import itertools

from oslo_db import options as db_options
from oslo_log import log

from climate.conf import api
from climate.conf import clients
from climate.conf import floatingips
from climate.conf import galera
from climate.conf import hosts
from climate.conf import idle
from climate.conf import leases
from climate.conf import manager
from climate.conf import networks
from climate.conf import outages
from climate.conf import paths
from climate.conf import power
from climate.conf import power_backends
from climate.conf import quotas
from climate.conf import stacks
from climate.conf import volumes
from climate.conf import webhooks

_MODULES = [paths, api, manager, clients, hosts, power, power_backends,
            outages, volumes, floatingips, networks, stacks, webhooks, quotas,
            leases, galera, idle]

DEFAULT_SQLITE = 'sqlite:///$state_path/climate.sqlite'


def list_opts():
    """All of Climate's own options, grouped, for the sample file."""
    grouped = {}
    for module in _MODULES:
        for group, opts in module.list_opts():
            grouped.setdefault(group, []).extend(opts)
    return sorted(grouped.items())


def set_defaults(conf=None):
    """Climate's defaults for library options (SQLite, log levels)."""
    from oslo_config import cfg
    conf = conf or cfg.CONF
    db_options.set_defaults(conf, connection=DEFAULT_SQLITE)
    log.set_defaults(default_log_levels=list(itertools.chain(
        log.get_default_log_levels(),
        ['keystonemiddleware=WARN', 'stevedore=INFO', 'pecan=WARN',
         'cheroot=WARN'])))
