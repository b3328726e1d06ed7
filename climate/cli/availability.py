"""``climate availability``: when can my project get N hosts like X for D?

The server answers with counts and times only (no hosts, no other
project's leases).  ``--plot FILE.png`` also draws the free-capacity
timeline over the searched range with the windows found.
"""

import datetime

from cliff import lister

from climate.cli import common
from climate.cli import parsing
from climate.cli import plot

# the least a plot shows when the search has no latest end
PLOT_SPAN = datetime.timedelta(days=1)


class Availability(lister.Lister):
    """Find when enough matching hosts are free."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--count', type=int, default=1, metavar='<n>',
                            help='Hosts needed at once (default: 1)')
        parser.add_argument('--duration', required=True,
                            metavar='<duration>',
                            help='For how long: 30m, 4h, 2d, 1w or seconds')
        parser.add_argument(
            '--earliest-start', metavar='<date>',
            help="Not before: 'now', 'YYYY-MM-DD HH:MM' (UTC) or ISO 8601 "
                 "(default: now)")
        parser.add_argument('--latest-end', metavar='<date>',
                            help='Ending no later than this date')
        parser.add_argument(
            '--hypervisor-properties', metavar='<json>',
            help='Host filter, e.g. \'[">=", "$vcpus", "8"]\'')
        parser.add_argument(
            '--resource-properties', metavar='<json>',
            help='Filter on host properties, e.g. \'["=", "$gpu", '
                 '"true"]\'')
        parser.add_argument('--limit', type=int, metavar='<n>',
                            help='At most this many windows (server '
                                 'default: 5)')
        parser.add_argument(
            '--plot', metavar='<file.png>',
            help='Also draw the free-capacity timeline to this image '
                 '(needs matplotlib: the "plot" extra)')
        return parser

    def _query(self, args):
        parsing.duration(args.duration, '--duration')
        query = {'count': args.count, 'duration': args.duration}
        for field in ('earliest_start', 'latest_end',
                      'hypervisor_properties', 'resource_properties',
                      'limit'):
            if getattr(args, field) is not None:
                query[field] = getattr(args, field)
        return query

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
        query = {'time_from': start.isoformat(), 'time_to': end.isoformat()}
        for field in ('hypervisor_properties', 'resource_properties'):
            if getattr(args, field) is not None:
                query[field] = getattr(args, field)
        timeline = client.hosts.timeline(query)
        plot.draw(args.plot, timeline.get('segments', []),
                  timeline.get('matching_hosts', 0), count=answer.get(
                      'count', args.count),
                  windows=answer.get('windows', []),
                  title='Free matching hosts, %s for %s' % (
                      args.count, args.duration))
        self.app.stderr.write('Plot written to %s\n' % args.plot)
