"""Recurring lease commands (``/v1/lease-series``, microversion 1.15):
series-create (a lease-create with a rule), series-list, -show, -update
and -delete (a cancel)."""

from cliff import command
from cliff import lister
from cliff import show

from climate.cli import common
from climate.cli import leases
from climate.cli import parsing

LIST_COLUMNS = ('id', 'name', 'status', 'recurrence', 'next_occurrence',
                'next_start_date')
SHOW_FIELDS = ('id', 'name', 'project_id', 'status', 'status_reason',
               'recurrence', 'first_occurrence', 'start_date', 'end_date',
               'next_occurrence', 'next_start_date', 'occurrences',
               'skipped', 'created_at', 'updated_at')


def _show(series):
    return common.show_item(series, SHOW_FIELDS)


def _recurrence(args):
    recur = {'rrule': args.rrule}
    if args.timezone:
        recur['timezone'] = args.timezone
    if args.on_conflict:
        recur['on_conflict'] = args.on_conflict
    return recur


def _rule_options(parser, required):
    parser.add_argument(
        '--rrule', metavar='<rule>', required=required,
        help='RFC 5545 rule: FREQ=DAILY or WEEKLY, INTERVAL, BYDAY (e.g. '
             'TU,TH), and COUNT or UNTIL (e.g. '
             '"FREQ=WEEKLY;BYDAY=TU;COUNT=12")')
    parser.add_argument(
        '--timezone', metavar='<zone>',
        help='IANA time zone whose wall clock the occurrences keep (e.g. '
             'Europe/Paris; default: UTC)')
    parser.add_argument(
        '--on-conflict', choices=('refuse', 'skip'),
        help='An occurrence that cannot be booked: refuse the whole '
             'series (default) or skip it')


class CreateSeries(leases.CreateLease):
    """Create a recurring lease (microversion 1.15).

    The --start-date/--end-date window is the first occurrence, repeated
    by the rule."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _rule_options(parser, required=True)
        return parser

    def take_action(self, args):
        body = self.body_of(args)
        body['recurrence'] = _recurrence(args)
        return _show(common.client_of(self).lease_series.create(body))


class ListSeries(lister.Lister):
    """List your project's recurring series (admins: every project's)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--project', metavar='<project-id>',
                            help="Only this project's (admins)")
        return parser

    def take_action(self, args):
        return common.list_items(
            common.client_of(self).lease_series.list(args.project),
            LIST_COLUMNS)


class ShowSeries(show.ShowOne):
    """Show a series with its occurrences and those it skipped."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('series', metavar='<series>',
                            help='Name or id of the series')
        return parser

    def take_action(self, args):
        return _show(common.client_of(self).lease_series.find(args.series))


class UpdateSeries(show.ShowOne):
    """Change a series from one of its occurrences on.

    New times for that occurrence (the later ones follow) and/or a new
    rule."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('series', metavar='<series>',
                            help='Name or id of the series')
        parser.add_argument(
            '--from-occurrence', metavar='<n>', type=int,
            help='First occurrence to change (default: the next one not '
                 'booked yet); none from it on may have started')
        parser.add_argument('--start-date', metavar='<date>',
                            help='New start of that occurrence')
        parser.add_argument('--end-date', metavar='<date>',
                            help='New end of that occurrence')
        _rule_options(parser, required=False)
        return parser

    def take_action(self, args):
        body = {}
        if args.from_occurrence is not None:
            body['from_occurrence'] = args.from_occurrence
        for field in ('start_date', 'end_date'):
            if getattr(args, field):
                body[field] = getattr(args, field)
        if args.rrule:
            body['recurrence'] = _recurrence(args)
        elif args.timezone or args.on_conflict:
            raise parsing.BadArgument(
                '--timezone and --on-conflict go with a new --rrule.')
        client = common.client_of(self).lease_series
        series = client.find(args.series)
        return _show(client.update(series['id'], body))


class DeleteSeries(command.Command):
    """Cancel series (their occurrences not yet started are deleted).

    A running occurrence runs to its end."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('series', metavar='<series>', nargs='+',
                            help='Name or id of a series')
        return parser

    def take_action(self, args):
        common.delete_each(self, 'series', args.series,
                           common.client_of(self).lease_series,
                           lambda series: series.get('name'))
