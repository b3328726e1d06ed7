"""Floating IP commands (``/v1/floatingips``, Blazar's 1.0 API, admins):
floatingip-list, -show, -create, -delete."""

from cliff import command
from cliff import lister
from cliff import show

from climate.cli import common

LIST_COLUMNS = ('id', 'floating_ip_address', 'floating_network_id',
                'reservable')
SHOW_FIELDS = ('id', 'floating_ip_address', 'floating_network_id',
               'subnet_id', 'reservable', 'created_at', 'updated_at')


class CreateFloatingIP(show.ShowOne):
    """Register a floating IP address for reservations.

    The address belongs to an external network, named by its id.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('network_id', metavar='<network-id>',
                            help='The external network the address belongs '
                                 'to')
        parser.add_argument('floating_ip_address', metavar='<address>',
                            help='The IPv4 or IPv6 address (with Neutron: '
                                 'in a subnet of the network, outside its '
                                 'allocation pools)')
        return parser

    def take_action(self, args):
        fip = common.client_of(self).floatingips.create(
            {'floating_network_id': args.network_id,
             'floating_ip_address': args.floating_ip_address})
        return common.show_item(fip, SHOW_FIELDS)


class ListFloatingIPs(lister.Lister):
    """List the reservable floating IP addresses."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--network', metavar='<network-id>',
                            help='Only the addresses of this network')
        parser.add_argument('--long', action='store_true',
                            help='Every field of each address')
        return parser

    def take_action(self, args):
        fips = common.client_of(self).floatingips.list()
        if args.network:
            fips = [f for f in fips
                    if f.get('floating_network_id') == args.network]
        return common.list_items(fips, SHOW_FIELDS if args.long
                                 else LIST_COLUMNS)


class ShowFloatingIP(show.ShowOne):
    """Show a floating IP address."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('floatingip', metavar='<floatingip>',
                            help='Id or address of the floating IP')
        return parser

    def take_action(self, args):
        return common.show_item(
            common.client_of(self).floatingips.find(args.floatingip),
            SHOW_FIELDS)


class DeleteFloatingIP(command.Command):
    """Remove floating IP addresses from the inventory."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('floatingips', metavar='<floatingip>',
                            nargs='+', help='Id or address of a floating IP')
        return parser

    def take_action(self, args):
        common.delete_each(self, 'floating IP', args.floatingips,
                           common.client_of(self).floatingips,
                           lambda fip: fip.get('floating_ip_address'))
