"""Network segment commands (``/v1/networks``, Blazar's 1.0 API,
admins): network-list, -show, -create, -set, -delete.  A segment is
named by its id or ``type:physnet:segment`` (``vlan:physnet1:1001``,
``vxlan:5000``)."""

from cliff import command
from cliff import lister
from cliff import show

from climate.cli import common
from climate.cli import parsing

LIST_COLUMNS = ('id', 'network_type', 'physical_network', 'segment_id',
                'reservable')
SHOW_FIELDS = LIST_COLUMNS + ('created_at', 'updated_at')


def _label(net):
    return ':'.join(str(net.get(k)) for k in (
        'network_type', 'physical_network', 'segment_id')
        if net.get(k) not in (None, ''))


class CreateNetwork(show.ShowOne):
    """Register a network segment for reservations."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--network-type', required=True,
                            choices=('vlan', 'vxlan', 'flat'),
                            help='The segment\'s type')
        parser.add_argument('--physical-network', metavar='<physnet>',
                            help='Its physical network (vlan and flat)')
        parser.add_argument('--segment', dest='segment_id', metavar='<id>',
                            type=int, help='Its VLAN id or VNI (not flat)')
        parser.add_argument(
            '--extra', metavar='<key=value>', action='append', default=[],
            help='A capability of the segment (repeatable), usable in '
                 'resource_properties')
        return parser

    def take_action(self, args):
        body = {'network_type': args.network_type}
        if args.physical_network:
            body['physical_network'] = args.physical_network
        if args.segment_id is not None:
            body['segment_id'] = args.segment_id
        body.update(parsing.extras(args.extra))
        net = common.client_of(self).networks.create(body)
        return common.show_item(net, SHOW_FIELDS)


class ListNetworks(lister.Lister):
    """List the reservable network segments."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--long', action='store_true',
                            help='Every field of each segment')
        return parser

    def take_action(self, args):
        nets = common.client_of(self).networks.list()
        return common.list_items(nets, common.every_field(nets, LIST_COLUMNS)
                                 if args.long else LIST_COLUMNS)


class ShowNetwork(show.ShowOne):
    """Show a network segment and its capabilities."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('network', metavar='<network>',
                            help='Id or type:physnet:segment')
        return parser

    def take_action(self, args):
        return common.show_item(
            common.client_of(self).networks.find(args.network), SHOW_FIELDS)


class SetNetwork(show.ShowOne):
    """Set or unset capabilities of a segment, or its reservable flag."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('network', metavar='<network>',
                            help='Id or type:physnet:segment')
        group = parser.add_mutually_exclusive_group()
        group.add_argument('--reservable', dest='reservable',
                           action='store_true', default=None,
                           help='Offer the segment to new reservations')
        group.add_argument('--not-reservable', dest='reservable',
                           action='store_false', help='Offer it no more')
        parser.add_argument(
            '--extra', metavar='<key=value>', action='append', default=[],
            help='Set a capability (repeatable)')
        parser.add_argument(
            '--unset', metavar='<key>', action='append', default=[],
            help='Remove a capability (repeatable)')
        return parser

    def take_action(self, args):
        values = parsing.extras(args.extra)
        for key in args.unset:
            if key in values:
                raise parsing.BadArgument(
                    'capability %r is both set (--extra) and unset '
                    '(--unset)' % key)
            values[key] = None
        if args.reservable is not None:
            values['reservable'] = args.reservable
        if not values:
            raise parsing.BadArgument('Nothing to change: give --extra '
                                      'key=value, --unset key or '
                                      '--[not-]reservable.')
        client = common.client_of(self)
        net = client.networks.find(args.network)
        return common.show_item(
            client.networks.update(net['id'], {'values': values}),
            SHOW_FIELDS)


class DeleteNetwork(command.Command):
    """Remove network segments from the inventory."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('networks', metavar='<network>', nargs='+',
                            help='Id or type:physnet:segment')
        return parser

    def take_action(self, args):
        common.delete_each(self, 'network segment', args.networks,
                           common.client_of(self).networks, _label)
