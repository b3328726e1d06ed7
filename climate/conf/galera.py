"""Settings for a MariaDB Galera cluster as the database
(doc/source/ledger.rst, *Galera*)."""

from oslo_config import cfg

galera_opts = [
    cfg.IntOpt('sync_wait', default=1, min=0, max=15,
               help='wsrep_sync_wait set on each connection to a Galera '
                    'node (ignored on other databases): 1 makes every read '
                    'wait until the node has applied what the cluster '
                    'committed before it, so that a GET answered by a '
                    'manager on another node than the create it follows '
                    'finds the lease (read your writes).  0 turns the '
                    'causality wait off (reads may lag a few '
                    'milliseconds); see the MariaDB documentation of '
                    'wsrep_sync_wait for the other bits.'),
]


def register_opts(conf):
    conf.register_opts(galera_opts, group='galera')


def list_opts():
    return [('galera', galera_opts)]
