"""Options of the ``virtual:floatingip`` plugin (``[floatingips]``)."""

from oslo_config import cfg

from climate.conf import groups

FLOATINGIPS_GROUP = 'floatingips'

floatingips_group = cfg.OptGroup(FLOATINGIPS_GROUP,
                                 title='Floating IP reservations')

floatingips_opts = [
    cfg.StrOpt('inventory', default='static', choices=['neutron', 'static'],
               help='What stands behind the floating IP addresses '
                    'registered through /v1/floatingips. "neutron": each '
                    'registration is checked with Neutron (an external '
                    'network, the address in one of its subnets and '
                    'outside their allocation pools and gateway), and at '
                    'the start of a reservation each address is created as '
                    "a floating IP in the lease's project (deleted at the "
                    'end), with the service credentials. "static": '
                    'registrations are taken as given, no cloud calls '
                    '(start and end only record).'),
]


def register_opts(conf):
    groups.register(conf, floatingips_group, floatingips_opts)


def list_opts():
    return [(FLOATINGIPS_GROUP, list(floatingips_opts))]
