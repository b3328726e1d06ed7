"""Usage commands (``/v1/usage``, microversion 1.8): ``usage`` (a
project's reserved resource-hours over a period) and ``usage-capacity``
(administrators: reserved against reservable capacity, step by step)."""

import sys

from cliff import lister

from climate.cli import common

TOTAL_COLUMNS = ('resource_type', 'resource_class', 'unit', 'past',
                 'current', 'future', 'total')
LEASE_COLUMNS = ('lease', 'lease_id', 'status', 'resource_type',
                 'resource_class', 'unit', 'past', 'current', 'future',
                 'total')
CAPACITY_COLUMNS = ('resource_class', 'start', 'end', 'reserved_peak',
                    'reservable', 'reserved_hours', 'reservable_hours',
                    'reserved_share', 'unit')


class ShowUsage(lister.Lister):
    """Reserved resource-hours of a project over a period.

    ``past`` is consumed before now, ``future`` committed from now on,
    ``current`` the amount held now (empty when now is outside the
    period); in the unit of each class (host-hours, vCPU-hours...).
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--project', metavar='<project-id>',
                            help="Another project's usage (administrators; "
                                 'default: your own project)')
        common.add_period(parser, 'Start of the period (default: the first '
                          'day of this month; a date or "now")',
                          'End of the period (default: the first day of '
                          'next month)')
        parser.add_argument('--by-lease', action='store_true',
                            help='One row per lease and class')
        return parser

    def take_action(self, args):
        answer = common.client_of(self).usage.get(
            project_id=args.project, start=args.start, end=args.end,
            by_lease=args.by_lease)
        sys.stderr.write('Project %s from %s to %s\n' % (
            answer['project_id'], answer['start'], answer['end']))
        if not args.by_lease:
            return common.list_items(answer['totals'], TOTAL_COLUMNS)
        rows = [dict(total, lease=lease['name'], lease_id=lease['lease_id'],
                     status=lease['status'])
                for lease in answer['leases'] for total in lease['totals']]
        return common.list_items(rows, LEASE_COLUMNS)


class ShowCapacityUsage(lister.Lister):
    """Compare reserved with reservable capacity by class (administrators).

    Step by step: the peak reserved at one instant of each step, the
    resource-hours reserved and their share of the reservable ones.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        common.add_period(parser, 'Start of the period (default: now)',
                          'End of the period (default: 30 days after its '
                          'start)')
        parser.add_argument('--step', metavar='<duration>',
                            help='Length of a step: 1h, 1d, 1w... '
                                 '(default: 1d)')
        parser.add_argument('--resource-class', metavar='<class>',
                            help='One class only (HOST, VCPU, VOLUME_GB, '
                                 'FLOATING_IP...)')
        return parser

    def take_action(self, args):
        answer = common.client_of(self).usage.capacity(
            start=args.start, end=args.end, step=args.step,
            resource_class=args.resource_class)
        rows = [dict(step, resource_class=item['resource_class'],
                     unit=item['unit'], reservable=item['reservable'])
                for item in answer['classes'] for step in item['steps']]
        return common.list_items(rows, CAPACITY_COLUMNS)
