"""Maintenance window commands (``/v1/maintenance-windows``, microversion
1.16, administrators): maintenance-plan (the dry run), -create, -list,
-show and -delete (a cancel)."""

from cliff import command
from cliff import lister
from cliff import show

from climate.cli import common
from climate.cli import parsing

LIST_COLUMNS = ('id', 'name', 'status', 'start_date', 'end_date', 'hosts')
SHOW_FIELDS = ('id', 'name', 'status', 'reason', 'start_date', 'end_date',
               'hosts', 'lease_id', 'affected', 'created_at')
ACTIONS = ('move', 'shorten', 'leave')


def _show(window):
    return common.show_item(window, SHOW_FIELDS)


class _Window(show.ShowOne):

    dry_run = False

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name', metavar='<name>',
                            help='Name of the window')
        parser.add_argument('--start-date', metavar='<date>', required=True,
                            help='Start of the window')
        parser.add_argument('--end-date', metavar='<date>', required=True,
                            help='End of the window')
        parser.add_argument('--host', metavar='<host>', action='append',
                            dest='hosts', default=[],
                            help='A host (id or hypervisor hostname); '
                                 'repeatable')
        parser.add_argument('--hypervisor-properties', metavar='<filter>',
                            help='The hosts by a filter of their facts')
        parser.add_argument('--resource-properties', metavar='<filter>',
                            help='The hosts by a filter of their extra '
                                 'capabilities')
        parser.add_argument('--reason', metavar='<text>',
                            help='Why (shown to the projects it hits)')
        if not self.dry_run:
            parser.add_argument(
                '--action', metavar='<lease>=<action>', action='append',
                dest='actions', default=[],
                help='What becomes of a lease it hits: move, shorten or '
                     'leave (maintenance-plan shows the options); '
                     'repeatable')
            parser.add_argument('--default-action', choices=ACTIONS,
                                help='The action of every other lease hit')
        return parser

    def take_action(self, args):
        body = {'name': args.name, 'start_date': args.start_date,
                'end_date': args.end_date, 'dry_run': self.dry_run}
        if args.hosts:
            body['hosts'] = args.hosts
        for field in ('hypervisor_properties', 'resource_properties',
                      'reason'):
            if getattr(args, field):
                body[field] = getattr(args, field)
        actions = {}
        for item in getattr(args, 'actions', None) or []:
            lease, sep, action = item.rpartition('=')
            if not sep or not lease or action not in ACTIONS:
                raise parsing.BadArgument(
                    '--action %r: give <lease id>=move, shorten or leave' %
                    item)
            actions[lease] = action
        if actions:
            body['actions'] = actions
        if getattr(args, 'default_action', None):
            body['default_action'] = args.default_action
        return _show(common.client_of(self).maintenance.create(body))


class PlanMaintenance(_Window):
    """Show what a maintenance window would do (a dry run).

    Nothing is written: the answer lists each lease it hits and its
    options."""

    dry_run = True


class CreateMaintenance(_Window):
    """Apply a maintenance window: its hosts are taken out for it."""


class ListMaintenance(lister.Lister):
    """List the maintenance windows."""

    def take_action(self, args):
        return common.list_items(
            common.client_of(self).maintenance.list(), LIST_COLUMNS)


class ShowMaintenance(show.ShowOne):
    """Show a maintenance window and what it did to the leases it hit."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('window', metavar='<window>',
                            help='Name or id of the window')
        return parser

    def take_action(self, args):
        return _show(common.client_of(self).maintenance.find(args.window))


class DeleteMaintenance(command.Command):
    """Cancel maintenance windows (their hosts are free again)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('windows', metavar='<window>', nargs='+',
                            help='Name or id of a window')
        return parser

    def take_action(self, args):
        common.delete_each(self, 'maintenance window', args.windows,
                           common.client_of(self).maintenance,
                           lambda window: window.get('name'))
