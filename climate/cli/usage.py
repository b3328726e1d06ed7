"""Usage commands (``/v1/usage``, microversion 1.8): ``usage`` (a
project's reserved resource-hours over a period), ``usage-capacity``
(administrators: reserved against reservable capacity, step by step) and
``usage-energy`` (administrators, microversion 1.12, 1.13 for each
host's watts: what powering unbooked hosts off saved, step by step or per
host, and as a chart)."""

import sys

from cliff import lister

from climate.cli import common
from climate.cli import plot

TOTAL_COLUMNS = ('resource_type', 'resource_class', 'unit', 'past',
                 'current', 'future', 'total')
LEASE_COLUMNS = ('lease', 'lease_id', 'status', 'resource_type',
                 'resource_class', 'unit', 'past', 'current', 'future',
                 'total')
ENERGY_COLUMNS = ('start', 'end', 'hours_off', 'kwh_saved')
ENERGY_HOST_COLUMNS = ('host_id', 'hypervisor_hostname', 'hours_off',
                       'kwh_saved')
#: Each host's watts and their source, listed when the API gives them
#: (microversion 1.13).
ENERGY_WATTS_COLUMNS = ('idle_watts', 'watts_source')
CAPACITY_COLUMNS = ('resource_class', 'start', 'end', 'reserved_peak',
                    'reservable', 'reserved_hours', 'reservable_hours',
                    'reserved_share', 'unit')


def _add_step(parser):
    parser.add_argument('--step', metavar='<duration>',
                        help='Length of a step: 1h, 1d, 1w... (default: 1d)')


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
        _add_step(parser)
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


def _host_columns(hosts):
    """The per-host columns: each host's watts when the API says them
    (an older API does not)."""
    if any(ENERGY_WATTS_COLUMNS[0] in host for host in hosts):
        return ENERGY_HOST_COLUMNS + ENERGY_WATTS_COLUMNS
    return ENERGY_HOST_COLUMNS


def _measured_note(hosts):
    """What the summary adds when hosts count their own measured watts
    rather than the configured ones."""
    measured = sum(1 for host in hosts
                   if host.get('watts_source') == 'measured')
    if not measured:
        return ''
    return ' (%d host(s) at their measured watts)' % measured


class ShowEnergyUsage(lister.Lister):
    """What powering unbooked hosts off saved (administrators).

    Host-hours off and the kWh they saved at each host's idle draw (its
    measured one, else the configured one), step by step (empty for steps
    after now: not known yet) or per host with ``--by-host``; ``--plot
    FILE.png`` draws the steps as a chart.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        common.add_period(parser, 'Start of the period (default: the first '
                          'day of this month; a date or "now")',
                          'End of the period (default: the first day of '
                          'next month)')
        _add_step(parser)
        parser.add_argument('--by-host', action='store_true',
                            help='One row per host that was off, most '
                                 'saved first')
        parser.add_argument('--plot', metavar='<file.png>',
                            help='Also draw the steps as a chart (needs '
                                 'matplotlib: the "plot" extra)')
        return parser

    def take_action(self, args):
        answer = common.client_of(self).usage.energy(
            start=args.start, end=args.end, step=args.step)
        self.app.stderr.write(
            '%s to %s: %s host-hours off, %s kWh saved at %s W idle%s; now '
            '%s\n' % (common.short_date(answer['start']),
                      common.short_date(answer['end']), answer['hours_off'],
                      answer['kwh_saved'], answer['idle_watts'],
                      _measured_note(answer['hosts']), ', '.join(
                          '%d %s' % (n, state) for state, n in sorted(
                              answer['hosts_now'].items()))))
        if args.plot:
            plot.draw_energy(args.plot, answer['steps'], title=(
                'Energy saved by powering hosts off, %s to %s' % (
                    common.short_date(answer['start']),
                    common.short_date(answer['end']))))
            self.app.stderr.write('Plot written to %s\n' % args.plot)
        if args.by_host:
            return common.list_items(answer['hosts'],
                                     _host_columns(answer['hosts']))
        rows = [dict(step, start=common.short_date(step['start']),
                     end=common.short_date(step['end']))
                for step in answer['steps']]
        return common.list_items(rows, ENERGY_COLUMNS)
