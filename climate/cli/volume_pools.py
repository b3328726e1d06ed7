"""Volume pool commands (``/v1/volume-pools``, microversion 1.5):
volume-pool-list, -show, -create, -set, -delete."""

import json

from cliff import command
from cliff import lister
from cliff import show

from climate.cli import common
from climate.cli import parsing

LIST_COLUMNS = ('id', 'name', 'backend', 'reservable', 'capacity_gb')
SHOW_FIELDS = ('id', 'name', 'backend', 'reservable', 'total_capacity_gb',
               'reserved_percentage', 'max_over_subscription_ratio',
               'capacity_gb', 'capabilities', 'created_at', 'updated_at')


def _show(pool):
    pool = dict(pool)
    pool['capabilities'] = json.dumps(pool.get('capabilities') or {},
                                      sort_keys=True)
    return common.show_item(pool, SHOW_FIELDS)


def _capabilities(items):
    caps = {}
    for key, value in parsing.extras(items, '--capability').items():
        caps[key] = value
        if value.lstrip().startswith(('[', '{')):
            try:
                caps[key] = json.loads(value)
            except ValueError:
                pass  # text, as given
    return caps


def _capacity_args(parser, required=False):
    parser.add_argument('--total-capacity-gb', type=int,
                        required=required, metavar='<GB>',
                        help='Total capacity of the pool, in GB')
    parser.add_argument('--reserved-percentage', type=int, metavar='<%>',
                        help='Percentage of the capacity kept free '
                             '(default 0)')
    parser.add_argument('--max-over-subscription-ratio', type=float,
                        metavar='<ratio>',
                        help='Over-subscription ratio (default 1.0)')
    parser.add_argument('--capability', metavar='<key=value>',
                        action='append', default=[],
                        help='A capability of the pool (repeatable; a JSON '
                             'list or object is read as JSON, anything else '
                             'is text), usable in resource_properties')


def _values(args):
    body = {}
    for name in ('total_capacity_gb', 'reserved_percentage',
                 'max_over_subscription_ratio'):
        if getattr(args, name, None) is not None:
            body[name] = getattr(args, name)
    return body


class CreateVolumePool(show.ShowOne):
    """Add a volume pool to the static inventory."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name', metavar='<name>',
                            help="Name of the pool (Cinder's "
                                 'host@backend#pool, or any name)')
        parser.add_argument('--backend', metavar='<backend>',
                            help='Volume backend name (default: from the '
                                 'name)')
        _capacity_args(parser, required=True)
        return parser

    def take_action(self, args):
        body = {'name': args.name}
        if args.backend:
            body['backend'] = args.backend
        body.update(_values(args))
        caps = _capabilities(args.capability)
        if caps:
            body['capabilities'] = caps
        return _show(common.client_of(self).volume_pools.create(body))


class ListVolumePools(lister.Lister):
    """List the volume pools."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--long', action='store_true',
                            help='Every field of each pool')
        return parser

    def take_action(self, args):
        pools = common.client_of(self).volume_pools.list()
        cols = list(LIST_COLUMNS)
        if args.long:
            cols = list(SHOW_FIELDS)
            pools = [dict(p, capabilities=json.dumps(
                p.get('capabilities') or {}, sort_keys=True)) for p in pools]
        return common.list_items(pools, cols)


class ShowVolumePool(show.ShowOne):
    """Show a volume pool."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('pool', metavar='<pool>',
                            help='Name or id of the pool')
        return parser

    def take_action(self, args):
        return _show(common.client_of(self).volume_pools.find(args.pool))


class SetVolumePool(show.ShowOne):
    """Change a volume pool: reservable, capabilities, capacity."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('pool', metavar='<pool>',
                            help='Name or id of the pool')
        group = parser.add_mutually_exclusive_group()
        group.add_argument('--reservable', dest='reservable',
                           action='store_true', default=None,
                           help='Offer the pool to new reservations')
        group.add_argument('--not-reservable', dest='reservable',
                           action='store_false',
                           help='Offer it no more')
        _capacity_args(parser)
        parser.add_argument('--unset', metavar='<key>', action='append',
                            default=[], help='Remove a capability '
                                             '(repeatable)')
        return parser

    def take_action(self, args):
        body = _values(args)
        if args.reservable is not None:
            body['reservable'] = args.reservable
        caps = _capabilities(args.capability)
        for key in args.unset:
            if key in caps:
                raise parsing.BadArgument(
                    'capability %r is both set and unset' % key)
            caps[key] = None
        if caps:
            body['capabilities'] = caps
        if not body:
            raise parsing.BadArgument('Nothing to change.')
        client = common.client_of(self)
        pool = client.volume_pools.find(args.pool)
        return _show(client.volume_pools.update(pool['id'], body))


class DeleteVolumePool(command.Command):
    """Remove volume pools from the static inventory."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('pools', metavar='<pool>', nargs='+',
                            help='Name or id of a pool')
        return parser

    def take_action(self, args):
        common.delete_each(self, 'volume pool', args.pools,
                           common.client_of(self).volume_pools,
                           lambda pool: pool.get('name'))
