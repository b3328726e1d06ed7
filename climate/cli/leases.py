"""Lease commands: lease-create, -list, -show, -update, -delete,
-confirm."""

import datetime

from cliff import command
from cliff import lister
from cliff import show

from climate.cli import calendar
from climate.cli import common
from climate.cli import parsing

LIST_COLUMNS = ('id', 'name', 'start_date', 'end_date', 'status')
LONG_COLUMNS = LIST_COLUMNS + ('project_id', 'degraded', 'reservations')
SHOW_FIELDS = ('id', 'name', 'status', 'status_reason', 'lease_type',
               'max_retries', 'retry_attempts', 'next_attempt_at',
               'hold_expires_at',
               'start_date', 'end_date', 'project_id', 'user_id', 'trust_id',
               'degraded', 'created_at', 'updated_at', 'reservations',
               'events')
LEASE_TYPES = ('immediate', 'with_retries', 'best_effort', 'scheduled')
SORT_KEYS = ('created_at', 'name', 'start_date', 'end_date', 'status', 'id')
DEFAULT_LENGTH = datetime.timedelta(days=1)
DATE_HELP = ("'now', 'YYYY-MM-DD HH:MM' (UTC) or ISO 8601 with an offset")


def _show(lease):
    return common.show_item(lease, SHOW_FIELDS, {
        'reservations': common.ReservationsColumn,
        'events': common.EventsColumn})


class CreateLease(show.ShowOne):
    """Create a lease: reservations for a time window."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name', metavar='<name>',
                            help='Name of the lease')
        parser.add_argument(
            '--reservation', metavar='<key=value,...>', action='append',
            dest='reservations', default=[],
            help='A reservation: resource_type=<type> and its parameters, '
                 'e.g. resource_type=physical:host,min=1,max=2,'
                 'hypervisor_properties=\'[">=", "$vcpus", "4"]\', or a '
                 'JSON object (\'{"resource_type": "virtual:instance", '
                 '"server": {"name": "vm", "imageRef": ..., "flavorRef": '
                 '...}}\'). Repeat for several reservations.')
        stack = parser.add_argument_group(
            'a Heat stack (virtual:stack): its template\'s servers, '
            'volumes and floating IPs are reserved with the lease')
        stack.add_argument(
            '--stack-template', metavar='<file>',
            help='HOT template of the stack (YAML or JSON file)')
        stack.add_argument(
            '--stack-parameter', '--parameter', metavar='<key=value>',
            action='append',
            dest='stack_parameters', default=[],
            help='A parameter of the template; repeatable')
        stack.add_argument(
            '--stack-environment', metavar='<file>',
            help='Heat environment file (YAML or JSON)')
        stack.add_argument('--stack-name', metavar='<name>',
                           help='Name of the stack (default: '
                                'climate-<reservation id>)')
        stack.add_argument(
            '--stack-on-start', choices=('create', 'wake'),
            help='create: the stack is made at the start (default); '
                 'wake: made now, its servers shelved until the start')
        stack.add_argument(
            '--stack-on-end', choices=('delete', 'suspend', 'snapshot'),
            help='What happens to the stack at the end (default: delete)')
        parser.add_argument(
            '--lease-type', choices=LEASE_TYPES,
            help='The lease\'s promise (microversion 1.11): immediate '
                 '(now or refused), with_retries (waits for capacity and '
                 'is tried again), best_effort (hosts freed of other '
                 'projects\' servers), scheduled (booked now for a later '
                 'start); default: granted for its window or refused')
        parser.add_argument(
            '--max-retries', metavar='<n>', type=int,
            help='with_retries: most retries after the first attempt '
                 '(default: the server\'s [leases] max_retries)')
        parser.add_argument(
            '--hold-for', metavar='<seconds>', type=int,
            help='A temporary hold (microversion 1.14): book now, HELD '
                 'for this many seconds until lease-confirm makes it the '
                 'lease; unconfirmed, it expires and what it booked is '
                 'released')
        parser.add_argument(
            '--keep-idle', action='store_true',
            help='Never end this lease early for being idle (idle reclaim, '
                 'microversion 1.17)')
        parser.add_argument(
            '--start-date', metavar='<date>', default='now',
            help='Start of the lease: %s (default: now)' % DATE_HELP)
        parser.add_argument(
            '--end-date', metavar='<date>',
            help='End of the lease: %s (default: one day after the start)'
                 % DATE_HELP)
        parser.add_argument(
            '--before-end-date', metavar='<date>',
            help='When the before-end action or notice runs (default: '
                 'the server\'s setting)')
        return parser

    def take_action(self, args):
        return _show(common.client_of(self).leases.create(
            self.body_of(args)))

    @staticmethod
    def body_of(args):
        """The create body the options ask for."""
        reservations = [parsing.reservation(r) for r in args.reservations]
        stack = _stack_reservation(args)
        if stack is not None:
            reservations.append(stack)
        if not reservations:
            raise parsing.BadArgument(
                'Nothing to reserve: give --reservation or '
                '--stack-template.')
        end = args.end_date
        if end is None:
            start = parsing.date(args.start_date, '--start-date')
            end = (start + DEFAULT_LENGTH).strftime('%Y-%m-%dT%H:%M:%S')
        body = {'name': args.name, 'start_date': args.start_date,
                'end_date': end, 'reservations': reservations,
                'events': []}
        if args.before_end_date:
            body['before_end_date'] = args.before_end_date
        if args.max_retries is not None and \
                args.lease_type != 'with_retries':
            raise parsing.BadArgument(
                '--max-retries is for --lease-type with_retries.')
        if args.lease_type:
            body['lease_type'] = args.lease_type
        if args.max_retries is not None:
            body['max_retries'] = args.max_retries
        if args.hold_for is not None:
            body['hold_for'] = args.hold_for
        if args.keep_idle:
            body['keep_idle'] = True
        return body


def _read(path, option):
    try:
        with open(path, encoding='utf-8') as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise parsing.BadArgument('%s %s cannot be read: %s' % (
            option, path, exc))


def _stack_reservation(args):
    """The virtual:stack reservation of the --stack-* options, or None
    (the template and environment are sent as their text: the server
    parses them as Heat does)."""
    others = [o for o, v in (
        ('--stack-parameter', args.stack_parameters),
        ('--stack-environment', args.stack_environment),
        ('--stack-name', args.stack_name),
        ('--stack-on-start', args.stack_on_start),
        ('--stack-on-end', args.stack_on_end)) if v]
    if args.stack_template is None:
        if others:
            raise parsing.BadArgument('%s needs --stack-template.' %
                                      others[0])
        return None
    reservation = {'resource_type': 'virtual:stack',
                   'template': _read(args.stack_template,
                                     '--stack-template')}
    parameters = {}
    for item in args.stack_parameters:
        key, sep, value = item.partition('=')
        if not sep or not key:
            raise parsing.BadArgument(
                '--stack-parameter takes key=value, not %r.' % item)
        parameters[key] = value
    if parameters:
        reservation['parameters'] = parameters
    if args.stack_environment:
        reservation['environment'] = _read(args.stack_environment,
                                           '--stack-environment')
    for field in ('stack_name', 'stack_on_start', 'stack_on_end'):
        value = getattr(args, field)
        if value is not None:
            reservation[field.replace('stack_on_', 'on_')] = value
    return reservation


class ListLeases(lister.Lister):
    """List leases (all pages unless --limit is given)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--status', metavar='<status>', action='append', default=[],
            help='Only leases in this status (repeatable; e.g. ACTIVE, '
                 'PENDING, TERMINATED, ERROR)')
        parser.add_argument('--name', metavar='<name>',
                            help='Only leases with exactly this name')
        parser.add_argument(
            '--project-id', metavar='<project>',
            help='Leases of this project (admins only)')
        parser.add_argument(
            '--time-from', metavar='<date>',
            help='Only leases still running at or after this date')
        parser.add_argument(
            '--time-to', metavar='<date>',
            help='Only leases starting before this date')
        parser.add_argument('--sort-key', choices=SORT_KEYS,
                            help='Sort on this field (default: created_at)')
        parser.add_argument('--sort-dir', choices=('asc', 'desc'),
                            help='Sort direction (default: asc)')
        parser.add_argument(
            '--limit', metavar='<n>', type=int,
            help='Show at most this many leases (one page)')
        parser.add_argument(
            '--marker', metavar='<lease id>',
            help='Start after this lease (the last of the previous page)')
        parser.add_argument('--long', action='store_true',
                            help='More columns')
        return parser

    def take_action(self, args):
        if args.limit is not None and args.limit < 1:
            raise parsing.BadArgument('--limit must be a positive integer')
        leases = common.client_of(self).leases.list(
            limit=args.limit, marker=args.marker, sort_key=args.sort_key,
            sort_dir=args.sort_dir, status=[s.upper() for s in args.status],
            name=args.name, project_id=args.project_id,
            time_from=args.time_from, time_to=args.time_to)
        cols = LONG_COLUMNS if args.long else LIST_COLUMNS
        columns, rows = common.list_items(leases, cols)
        if args.long:
            index = cols.index('reservations')
            rows = [r[:index] + (common.ReservationsColumn(
                leases[n].get('reservations')),) + r[index + 1:]
                for n, r in enumerate(rows)]
        return columns, rows


class ShowLease(show.ShowOne):
    """Show a lease; --timeline draws it and its hosts across time."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('lease', metavar='<lease>',
                            help='Name or id of the lease')
        parser.add_argument(
            '--timeline', action='store_true',
            help='Print a text chart of the lease and of its hosts across '
                 'time instead of its fields')
        parser.add_argument(
            '--width', type=int, default=80, metavar='<columns>',
            help='Width of the --timeline chart (default: 80)')
        return parser

    def run(self, args):
        if not args.timeline:
            return super().run(args)
        client = common.client_of(self)
        lease = client.leases.find(args.lease)
        self.app.stdout.write(calendar.lease_chart(
            client, lease, common.utcnow(), width=args.width))
        return 0

    def take_action(self, args):
        return _show(common.client_of(self).leases.find(args.lease))


class UpdateLease(show.ShowOne):
    """Change a lease: rename, move its dates, change reservations."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('lease', metavar='<lease>',
                            help='Name or id of the lease')
        parser.add_argument('--name', metavar='<name>', help='New name')
        end = parser.add_mutually_exclusive_group()
        end.add_argument('--end-date', metavar='<date>',
                         help='New end: %s' % DATE_HELP)
        end.add_argument('--prolong-for', metavar='<duration>',
                         help='Move the end later by this much: 30m, 2h, '
                              '1d, 1w or seconds')
        end.add_argument('--reduce-by', metavar='<duration>',
                         help='Move the end earlier by this much')
        start = parser.add_mutually_exclusive_group()
        start.add_argument('--start-date', metavar='<date>',
                           help='New start (leases not started yet): %s' %
                           DATE_HELP)
        start.add_argument('--defer-by', metavar='<duration>',
                           help='Move the start later by this much')
        start.add_argument('--advance-by', metavar='<duration>',
                           help='Move the start earlier by this much')
        parser.add_argument('--before-end-date', metavar='<date>',
                            help='New time of the before-end action')
        parser.add_argument(
            '--reservation', metavar='<id=...,key=value,...>',
            action='append', dest='reservations', default=[],
            help='New parameters of a reservation, picked by id=<id> '
                 '(optional when the lease has one reservation); '
                 'repeatable')
        return parser

    def take_action(self, args):
        client = common.client_of(self)
        body = {}
        for field in ('name', 'end_date', 'start_date', 'before_end_date'):
            if getattr(args, field) is not None:
                body[field] = getattr(args, field)
        for field in ('prolong_for', 'reduce_by', 'defer_by', 'advance_by'):
            value = getattr(args, field)
            if value is not None:
                option = '--' + field.replace('_', '-')
                # checked here so the message names the option
                parsing.duration(value, option)
                body[field] = value
        if not body and not args.reservations:
            raise parsing.BadArgument(
                'Nothing to change: give --name, a date option or '
                '--reservation.')
        lease = client.leases.find(args.lease)
        if args.reservations:
            body['reservations'] = [parsing.reservation_change(r, lease)
                                    for r in args.reservations]
        return _show(client.leases.update(lease['id'], body))


class DeleteLease(command.Command):
    """Delete leases (their reservations end now)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('leases', metavar='<lease>', nargs='+',
                            help='Name or id of a lease')
        return parser

    def take_action(self, args):
        common.delete_each(self, 'lease', args.leases,
                           common.client_of(self).leases,
                           lambda lease: lease['name'])


class ConfirmLease(show.ShowOne):
    """Confirm a temporary hold: it becomes the lease (microversion 1.14)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('lease', metavar='<lease>',
                            help='Name or id of a HELD lease')
        return parser

    def take_action(self, args):
        client = common.client_of(self)
        lease = client.leases.find(args.lease)
        return _show(client.leases.confirm(lease['id']))
