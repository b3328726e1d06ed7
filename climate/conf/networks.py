"""Options of the ``network`` plugin (``[networks]``)."""

from oslo_config import cfg

from climate.conf import groups

NETWORKS_GROUP = 'networks'

networks_group = cfg.OptGroup(NETWORKS_GROUP,
                              title='Network segment reservations')

networks_opts = [
    cfg.StrOpt('inventory', default='static', choices=['neutron', 'static'],
               help='What stands behind the network segments registered '
                    'through /v1/networks. "neutron": at the start of a '
                    'reservation a network with the segment\'s provider '
                    "attributes is created in the lease's project, and at "
                    'the end it is deleted with its ports, router '
                    'interfaces and subnets, with the service credentials. '
                    '"static": no cloud calls (start and end only '
                    'record).'),
]


def register_opts(conf):
    groups.register(conf, networks_group, networks_opts)


def list_opts():
    return [(NETWORKS_GROUP, list(networks_opts))]
