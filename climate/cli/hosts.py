"""Host commands (Blazar's os-hosts API): host-create, -list, -show,
-update, -delete, host-allocation-list, host-property-list/-set; and
host-power-list/-show (microversion 1.12: the power planner's states;
1.13: with each host's measured idle watts)."""

from cliff import command
from cliff import lister
from cliff import show

from climate.cli import common
from climate.cli import parsing

LIST_COLUMNS = ('id', 'hypervisor_hostname', 'vcpus', 'memory_mb',
                'local_gb')
SHOW_FIELDS = ('id', 'hypervisor_hostname', 'service_name', 'vcpus',
               'memory_mb', 'local_gb', 'cpu_info', 'hypervisor_type',
               'hypervisor_version', 'trust_id', 'reservable', 'created_at',
               'updated_at')


def _host_argument(parser):
    parser.add_argument('host', metavar='<host>',
                        help='Name or id of the host')


class CreateHost(show.ShowOne):
    """Add a host to the reservable inventory."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name', metavar='<name>',
                            help='Hostname of the host (Nova hypervisor '
                                 'name, or any name for a static '
                                 'inventory)')
        parser.add_argument(
            '--extra', metavar='<key=value>', action='append', default=[],
            help='A property of the host (repeatable), usable in '
                 'reservation filters')
        return parser

    def take_action(self, args):
        body = {'name': args.name}
        body.update(parsing.extras(args.extra))
        host = common.client_of(self).hosts.create(body)
        return common.show_item(host, SHOW_FIELDS)


class ListHosts(lister.Lister):
    """List the reservable hosts."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--long', action='store_true',
                            help='Every field of each host')
        return parser

    def take_action(self, args):
        hosts = common.client_of(self).hosts.list()
        return common.list_items(hosts, common.every_field(hosts, LIST_COLUMNS)
                                 if args.long else LIST_COLUMNS)


class ShowHost(show.ShowOne):
    """Show a host and its properties."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _host_argument(parser)
        return parser

    def take_action(self, args):
        return common.show_item(common.client_of(self).hosts.find(args.host),
                                SHOW_FIELDS)


class UpdateHost(show.ShowOne):
    """Set or unset properties of a host."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _host_argument(parser)
        parser.add_argument(
            '--extra', metavar='<key=value>', action='append', default=[],
            help='Set a property (repeatable)')
        parser.add_argument(
            '--unset', metavar='<key>', action='append', default=[],
            help='Remove a property (repeatable)')
        return parser

    def take_action(self, args):
        values = parsing.extras(args.extra)
        for key in args.unset:
            if key in values:
                raise parsing.BadArgument(
                    'property %r is both set (--extra) and unset (--unset)'
                    % key)
            values[key] = None
        if not values:
            raise parsing.BadArgument('Nothing to change: give --extra '
                                      'key=value or --unset key.')
        client = common.client_of(self)
        host = client.hosts.find(args.host)
        updated = client.hosts.update(host['id'], {'values': values})
        return common.show_item(updated, SHOW_FIELDS)


class DeleteHost(command.Command):
    """Remove hosts from the reservable inventory."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('hosts', metavar='<host>', nargs='+',
                            help='Name or id of a host')
        return parser

    def take_action(self, args):
        common.delete_each(self, 'host', args.hosts,
                           common.client_of(self).hosts,
                           lambda host: host.get('hypervisor_hostname'))


class ListHostAllocations(lister.Lister):
    """Which reservations hold which hosts."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--host', metavar='<host>',
                            help='Only this host (name or id)')
        parser.add_argument('--lease', metavar='<lease>',
                            help='Only this lease (name or id)')
        parser.add_argument('--reservation-id', metavar='<id>',
                            help='Only this reservation')
        return parser

    def take_action(self, args):
        client = common.client_of(self)
        lease_id = client.leases.find(args.lease)['id'] if args.lease \
            else None
        if args.host:
            host = client.hosts.find(args.host)
            allocations = [client.hosts.allocation(host['id'])]
        else:
            allocations = client.hosts.allocations(
                lease_id=lease_id, reservation_id=args.reservation_id)
        names = {str(h['id']): h.get('hypervisor_hostname')
                 for h in client.hosts.list()}
        rows = []
        for alloc in allocations:
            for res in alloc.get('reservations') or []:
                if lease_id and res.get('lease_id') != lease_id:
                    continue
                if args.reservation_id and res.get('id') != \
                        args.reservation_id:
                    continue
                rows.append((alloc['resource_id'],
                             names.get(str(alloc['resource_id'])),
                             res.get('lease_id'), res.get('id'),
                             common.short_date(res.get('start_date')),
                             common.short_date(res.get('end_date'))))
        rows.sort(key=lambda r: (str(r[1]), str(r[4])))
        return (('host_id', 'hypervisor_hostname', 'lease_id',
                 'reservation_id', 'start_date', 'end_date'), rows)


POWER_COLUMNS = ('host_id', 'hypervisor_hostname', 'state', 'since',
                 'boot_seconds', 'need_at', 'last_error')
#: The column of a host's measured idle draw, listed when the API gives
#: it (microversion 1.13).
WATTS_COLUMN = 'idle_watts'
POWER_FIELDS = POWER_COLUMNS + ('error_at', 'start', 'end', 'hours_off',
                                'kwh_saved', 'idle_watts', 'watts_source',
                                'watts_at', 'history')


def _power_row(power):
    row = dict(power, since=common.short_date(power.get('since')),
               need_at=common.short_date(power.get('need_at')),
               error_at=common.short_date(power.get('error_at')))
    if 'watts_at' in power:
        row['watts_at'] = common.short_date(power['watts_at'])
    return row


def _power_columns(hosts):
    """The listing's columns: the measured watts when the API says them
    (an older API does not)."""
    if any(WATTS_COLUMN in host for host in hosts):
        return POWER_COLUMNS + (WATTS_COLUMN,)
    return POWER_COLUMNS


def _energy_fields(power):
    """A host's energy figures flat in its power view: ``idle_watts``
    becomes the watts counted (the measured ones, or ``[power]
    idle_watts``) and ``watts_source`` says which; ``watts_at`` stays the
    measured reading's time."""
    energy = power.pop('energy')
    power.update(hours_off=energy['hours_off'],
                 kwh_saved=energy['kwh_saved'],
                 idle_watts=energy['idle_watts'])
    if 'watts_source' in energy:
        power['watts_source'] = energy['watts_source']
    return power


def _history_text(history):
    """One line per interval: ``off  2030-01-10 06:00:00 .. 09:00:00``
    (the end's date said only when it is another day)."""
    lines = []
    for entry in history:
        start = common.short_date(entry['start'])
        end = common.short_date(entry['end'])
        if end[:10] == start[:10]:
            end = end[11:]
        lines.append('%-7s %s .. %s' % (entry['state'], start, end))
    return '\n'.join(lines) or '(none in the period)'


class ListHostPower(lister.Lister):
    """List every host's power state, as the power planner keeps it."""

    def take_action(self, args):
        hosts = common.client_of(self).hosts.power_list()
        return common.list_items([_power_row(h) for h in hosts],
                                 _power_columns(hosts))


class ShowHostPower(show.ShowOne):
    """Show a host's power state, its history and the energy it saved."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _host_argument(parser)
        common.add_period(parser, 'Start of the history (default: 7 days '
                                  'ago)', 'End of the history (default: now)')
        return parser

    def take_action(self, args):
        client = common.client_of(self)
        host = client.hosts.find(args.host)
        power = _power_row(client.hosts.power(host['id'], start=args.start,
                                              end=args.end))
        power = _energy_fields(power)
        power.update(start=common.short_date(power['start']),
                     end=common.short_date(power['end']))
        return common.show_item(power, POWER_FIELDS,
                                {'history': _history_text})


class ListHostProperties(lister.Lister):
    """List the properties hosts have."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--detail', action='store_true',
                            help='Show each property\'s values and whether '
                                 'it is private')
        parser.add_argument('--all', action='store_true',
                            dest='all_properties',
                            help='Private properties too (admins)')
        return parser

    def take_action(self, args):
        props = common.client_of(self).hosts.properties(
            detail=args.detail, all_properties=args.all_properties)
        props = sorted(props, key=lambda p: p.get('property', ''))
        if not args.detail:
            return ('property',), [(p.get('property'),) for p in props]
        return (('property', 'private', 'values'),
                [(p.get('property'), p.get('private'),
                  common.JsonColumn(p.get('values'))) for p in props])


class SetHostProperty(show.ShowOne):
    """Make a host property private (admins only) or public."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('property', metavar='<property>',
                            help='Name of the property')
        group = parser.add_mutually_exclusive_group(required=True)
        group.add_argument('--private', action='store_true', default=None,
                           help='Only admins see it and its values')
        group.add_argument('--public', dest='private', action='store_false',
                           help='Everyone sees it')
        return parser

    def take_action(self, args):
        prop = common.client_of(self).hosts.set_property(args.property,
                                                         args.private)
        return common.show_item(prop, ('property_name', 'property',
                                       'private', 'values'))
