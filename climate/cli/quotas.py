"""Quota commands (``/v1/quotas``, microversion 1.9): quota-list,
quota-show, quota-set, quota-delete."""

from cliff import command
from cliff import lister
from cliff import show

from climate.cli import common
from climate.cli import parsing

FIELDS = ('project_id', 'max_lease_duration', 'max_extension',
          'max_concurrent', 'budget', 'budget_period', 'own', 'usage')


def _show(quota):
    return common.show_item(quota, FIELDS)


def _amounts(items, option, number):
    """``--max-concurrent VCPU=64`` (repeatable) into ``{class: n}``;
    ``-1`` is no limit."""
    out = {}
    for cls, text in parsing.extras(items, option).items():
        try:
            out[cls] = number(text)
        except ValueError:
            raise parsing.BadArgument('%s %s=%s: not a number' % (
                option, cls, text))
    return out


def _limit(text):
    """A duration option: seconds, ``7d``, or -1."""
    text = text.strip()
    if text.lstrip('-').isdigit():
        return int(text)
    return text


class ListQuotas(lister.Lister):
    """List the projects with limits of their own (administrators).

    The defaults come first, as the (defaults) row.
    """

    def take_action(self, args):
        answer = common.client_of(self).quotas.list()
        rows = [dict(answer['defaults'], project_id='(defaults)')]
        rows += answer['projects']
        return common.list_items(rows, FIELDS[:6])


class ShowQuota(show.ShowOne):
    """Show a project's limits on leases and what it holds against them.

    The project's own limits are shown over the defaults.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('project', metavar='<project-id>',
                            help='The project')
        return parser

    def take_action(self, args):
        return _show(common.client_of(self).quotas.get(args.project))


class SetQuota(show.ShowOne):
    """Set some of a project's limits (administrators).

    -1 is no limit; 'default' gives a field its default again.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('project', metavar='<project-id>',
                            help='The project')
        parser.add_argument('--max-lease-duration', metavar='<duration>',
                            help='Longest lease: seconds, or 30m, 12h, 7d, '
                                 '2w')
        parser.add_argument('--max-extension', metavar='<duration>',
                            help='Most one update may move a lease\'s end '
                                 'later')
        parser.add_argument('--max-concurrent', metavar='<class=amount>',
                            action='append', default=[],
                            help='Most of a resource class held at once '
                                 '(repeatable), e.g. VCPU=256')
        parser.add_argument('--budget', metavar='<class=hours>',
                            action='append', default=[],
                            help='Resource-hours of a class per budget '
                                 'period (repeatable), e.g. VCPU=50000')
        parser.add_argument('--budget-period',
                            choices=('day', 'week', 'month', 'year',
                                     'default'),
                            help='The calendar period of the budgets')
        return parser

    def take_action(self, args):
        body = {}
        for name in ('max_lease_duration', 'max_extension'):
            value = getattr(args, name)
            if value is not None:
                body[name] = None if value == 'default' else _limit(value)
        if args.max_concurrent:
            body['max_concurrent'] = _amounts(
                args.max_concurrent, '--max-concurrent', int)
        if args.budget:
            body['budget'] = _amounts(args.budget, '--budget', float)
        if args.budget_period:
            body['budget_period'] = None if args.budget_period == \
                'default' else args.budget_period
        if not body:
            raise parsing.BadArgument('Nothing to change.')
        return _show(common.client_of(self).quotas.update(args.project,
                                                          body))


class DeleteQuota(command.Command):
    """Give a project the default limits again (administrators)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('projects', metavar='<project-id>', nargs='+',
                            help='A project')
        return parser

    def take_action(self, args):
        client = common.client_of(self)
        for project in args.projects:
            client.quotas.delete(project)
