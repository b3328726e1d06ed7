"""``climate availability``: when can my project get N hosts like X for D?
``climate instance-availability``: when do N instance slots of a shape
fit for D (or how many fit over a fixed window)?
``climate volume-availability``: when do G gigabytes of volumes fit on
one pool for D (or how many are free over a fixed window)?

The server answers with counts and times only (no hosts, no other
project's leases).  ``--plot FILE.png`` also draws the free-capacity
timeline over the searched range with the windows found.
"""

import argparse
import datetime

from cliff import lister

from climate.cli import common
from climate.cli import parsing
from climate.cli import plot

# the least a plot shows when the search has no latest end
PLOT_SPAN = datetime.timedelta(days=1)


DURATION_HELP = 'For how long: 30m, 4h, 2d, 1w or seconds'


def _add_window_options(parser):
    """``--earliest-start`` and ``--latest-end`` of a search by duration."""
    parser.add_argument(
        '--earliest-start', metavar='<date>',
        help="Not before: 'now', 'YYYY-MM-DD HH:MM' (UTC) or ISO 8601 "
             "(default: now)")
    parser.add_argument('--latest-end', metavar='<date>',
                        help='Ending no later than this date')


def _add_filter_options(parser, server_limit,
                        example='host properties, e.g. \'["=", "$gpu", '
                                '"true"]\''):
    """``--resource-properties`` and ``--limit``."""
    parser.add_argument('--resource-properties', metavar='<json>',
                        help='Filter on %s' % example)
    parser.add_argument('--limit', type=int, metavar='<n>',
                        help='At most this many windows (server '
                             'default: %d)' % server_limit)


def _copy_set(args, query, fields):
    """The options of ``fields`` that were given, into ``query``."""
    for field in fields:
        if getattr(args, field) is not None:
            query[field] = getattr(args, field)
    return query


def _add_window_group(parser):
    """A search by ``--duration`` or a fixed window."""
    window = parser.add_argument_group(
        'window', 'Either --duration (with --earliest-start, '
                  '--latest-end) or --start-date and --end-date')
    window.add_argument('--duration', metavar='<duration>',
                        help=DURATION_HELP)
    _add_window_options(window)
    window.add_argument('--start-date', metavar='<date>',
                        help="A fixed window's start: 'now', "
                             "'YYYY-MM-DD HH:MM' (UTC) or ISO 8601")
    window.add_argument('--end-date', metavar='<date>',
                        help="A fixed window's end")


def _window_query(args, query):
    """``query`` with the window of :func:`_add_window_group`'s options,
    checked: either a duration or a fixed window."""
    fixed = [o for o, v in (('--start-date', args.start_date),
                            ('--end-date', args.end_date)) if v]
    search = [o for o, v in (('--duration', args.duration),
                             ('--earliest-start', args.earliest_start),
                             ('--latest-end', args.latest_end)) if v]
    if fixed and search:
        raise parsing.BadArgument(
            'give either --start-date and --end-date, or --duration '
            '(with --earliest-start, --latest-end); not %s with %s' % (
                ' and '.join(search), ' and '.join(fixed)))
    if fixed and len(fixed) == 1:
        raise parsing.BadArgument('%s needs %s' % (
            fixed[0], ({'--start-date', '--end-date'} - set(fixed)).pop()))
    if not fixed and not args.duration:
        raise parsing.BadArgument(
            "give --duration (e.g. '4h'), or --start-date and "
            "--end-date")
    if args.duration:
        parsing.duration(args.duration, '--duration')
    return _copy_set(args, query, ('duration', 'earliest_start',
                                   'latest_end', 'start_date', 'end_date'))


def _windows(cmd, answer, free, free_text, asked):
    """The rows of a search by :func:`_add_window_group`: the windows
    (start, end, ``free``); a fixed window's answer on stderr."""
    requested = answer.get('requested')
    if requested:
        cmd.app.stderr.write('From %s to %s: %s, %s.\n' % (
            common.short_date(requested.get('start')),
            common.short_date(requested.get('end')),
            free_text % requested.get(free),
            'enough' if requested.get('fits') else 'not enough for %s'
            % asked))
    columns = ('start', 'end', free)
    rows = [(common.short_date(w.get('start')),
             common.short_date(w.get('end')), w.get(free))
            for w in answer.get('windows', [])]
    return columns, rows


class Availability(lister.Lister):
    """Find when enough matching hosts are free."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--count', type=int, default=1, metavar='<n>',
                            help='Hosts needed at once (default: 1)')
        parser.add_argument('--duration', required=True,
                            metavar='<duration>', help=DURATION_HELP)
        _add_window_options(parser)
        parser.add_argument(
            '--hypervisor-properties', metavar='<json>',
            help='Host filter, e.g. \'[">=", "$vcpus", "8"]\'')
        _add_filter_options(parser, server_limit=5)
        parser.add_argument(
            '--plot', metavar='<file.png>',
            help='Also draw the free-capacity timeline to this image '
                 '(needs matplotlib: the "plot" extra)')
        return parser

    def _query(self, args):
        parsing.duration(args.duration, '--duration')
        query = {'count': args.count, 'duration': args.duration}
        return _copy_set(args, query, (
            'earliest_start', 'latest_end', 'hypervisor_properties',
            'resource_properties', 'limit'))

    def take_action(self, args):
        client = common.client_of(self)
        answer = client.hosts.availability(self._query(args))
        if args.plot:
            self._plot(client, args, answer)
        columns = ('start', 'end', 'latest_start', 'hosts_free')
        rows = [tuple(common.short_date(w.get(c)) if c != 'hosts_free'
                      else w.get(c) for c in columns)
                for w in answer.get('windows', [])]
        return columns, rows

    def _plot(self, client, args, answer):
        start = common.api_date(answer['earliest_start'])
        if answer.get('latest_end'):
            end = common.api_date(answer['latest_end'])
        else:
            last = max([common.api_date(w['end'])
                        for w in answer.get('windows', [])] + [start])
            end = max(start + PLOT_SPAN, last + (last - start) / 4)
        query = _copy_set(args, {'time_from': start.isoformat(),
                                 'time_to': end.isoformat()},
                          ('hypervisor_properties', 'resource_properties'))
        timeline = client.hosts.timeline(query)
        plot.draw(args.plot, timeline.get('segments', []),
                  timeline.get('matching_hosts', 0), count=answer.get(
                      'count', args.count),
                  windows=answer.get('windows', []),
                  title='Free matching hosts, %s for %s' % (
                      args.count, args.duration))
        self.app.stderr.write('Plot written to %s\n' % args.plot)


_AFFINITY = {'true': True, 'false': False, 'none': None}


def _affinity(text):
    try:
        return _AFFINITY[text.strip().lower()]
    except KeyError:
        raise argparse.ArgumentTypeError(
            'expected true (all on one host), false (each on a different '
            'host) or none (anywhere), not %r' % text)


class InstanceAvailability(lister.Lister):
    """Find when enough instance slots of a shape fit (microversion 1.3).

    Either --duration (with --earliest-start, --latest-end): the earliest
    windows in which all the slots fit; or --start-date and --end-date:
    how many slots fit over that window (said on stderr), and the
    earliest windows of its length from its start.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--amount', type=int, default=1, metavar='<n>',
                            help='Instances needed at once (default: 1)')
        shape = parser.add_argument_group(
            'shape', 'Of one instance: --vcpus, --memory-mb and --disk-gb, '
                     'or --flavor-id')
        shape.add_argument('--vcpus', type=int, metavar='<n>',
                           help='VCPUs of one instance')
        shape.add_argument('--memory-mb', type=int, metavar='<mb>',
                           help='Memory of one instance, in MB')
        shape.add_argument('--disk-gb', type=int, metavar='<gb>',
                           help='Local disk of one instance, in GB')
        shape.add_argument('--flavor-id', metavar='<flavor>',
                           help='Take the shape of this existing flavor')
        parser.add_argument(
            '--affinity', type=_affinity, metavar='<true|false|none>',
            help='true: all on one host; false: each on a different host; '
                 'none: anywhere (default)')
        _add_window_group(parser)
        _add_filter_options(parser, server_limit=3)
        return parser

    def _query(self, args):
        query = _copy_set(args, {'amount': args.amount}, (
            'vcpus', 'memory_mb', 'disk_gb', 'flavor_id',
            'resource_properties', 'limit'))
        if args.affinity is not None:
            query['affinity'] = args.affinity
        return _window_query(args, query)

    def take_action(self, args):
        answer = common.client_of(self).instances.availability(
            self._query(args))
        return _windows(self, answer, 'slots_free', '%s slot(s) free',
                        '%s' % answer.get('amount', args.amount))


class VolumeAvailability(lister.Lister):
    """Find when a volume reservation fits on one pool (microversion 1.6).

    Either --duration (with --earliest-start, --latest-end): the earliest
    windows in which --size-gb fits on one matching pool, each with the
    most gigabytes free on one matching pool over it; or --start-date and
    --end-date: how much is free over that window and whether it fits
    (said on stderr), and the earliest windows of its length from its
    start.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--size-gb', type=int, required=True,
                            metavar='<GB>',
                            help='Gigabytes reserved, in all')
        parser.add_argument('--count', type=int, metavar='<n>',
                            help='At most this many volumes (default: no '
                                 'limit)')
        parser.add_argument('--volume-type', metavar='<type>',
                            help='Volume type (default: the default type)')
        _add_window_group(parser)
        _add_filter_options(parser, server_limit=3, example=(
            'pool capabilities, e.g. \'["=", "$backend", "ceph-ssd"]\''))
        return parser

    def _query(self, args):
        return _window_query(args, _copy_set(args, {'size_gb': args.size_gb}, (
            'count', 'volume_type', 'resource_properties', 'limit')))

    def take_action(self, args):
        answer = common.client_of(self).volumes.availability(
            self._query(args))
        return _windows(self, answer, 'gb_free',
                        '%s GB free on one pool',
                        '%s GB' % answer.get('size_gb', args.size_gb))
