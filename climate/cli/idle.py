"""Idle reclaim commands (``/v1/idle-policies``, microversion 1.17):
idle-policy-list, -show, -set and -delete."""

from cliff import command
from cliff import lister
from cliff import show

from climate.cli import common

FIELDS = ('project_id', 'warn_after', 'end_after', 'resource_types',
          'default', 'created_at', 'updated_at')


class ListIdlePolicies(lister.Lister):
    """List the projects' own idle policies (administrators)."""

    def take_action(self, args):
        return common.list_items(
            common.client_of(self).idle_policies.list(), FIELDS[:4])


class ShowIdlePolicy(show.ShowOne):
    """Show a project's idle policy (its own, or the default)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('project', metavar='<project-id>',
                            help='Id of the project')
        return parser

    def take_action(self, args):
        return common.show_item(
            common.client_of(self).idle_policies.get(args.project), FIELDS)


class SetIdlePolicy(show.ShowOne):
    """Set a project's idle policy (administrators)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('project', metavar='<project-id>',
                            help='Id of the project')
        parser.add_argument('--warn-after', metavar='<seconds>', type=int,
                            required=True,
                            help='Seconds of nothing used before a started '
                                 'lease is warned (at least 60)')
        parser.add_argument('--end-after', metavar='<seconds>', type=int,
                            help='Seconds of nothing used before it is '
                                 'ended early (more than --warn-after; '
                                 'default: warned only)')
        parser.add_argument('--resource-type', metavar='<type>',
                            action='append', dest='resource_types',
                            help='A resource type it covers (repeatable; '
                                 'default: every type)')
        return parser

    def take_action(self, args):
        body = {'warn_after': args.warn_after}
        if args.end_after is not None:
            body['end_after'] = args.end_after
        if args.resource_types:
            body['resource_types'] = args.resource_types
        return common.show_item(common.client_of(self).idle_policies.set(
            args.project, body), FIELDS)


class DeleteIdlePolicy(command.Command):
    """Remove a project's own idle policy (administrators)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('project', metavar='<project-id>',
                            help='Id of the project')
        return parser

    def take_action(self, args):
        common.client_of(self).idle_policies.delete(args.project)
        self.app.stdout.write('Removed the idle policy of project %s\n' %
                              args.project)
