"""host-calendar, volume-pool-calendar, and the data behind
``lease-show --timeline``.

The API calls live here; the drawing is :func:`climate.cli.timeline.render`.
"""

import datetime

from cliff import command

from climate.cli import common
from climate.cli import timeline
from climate.scheduling import capacity

HOST_TYPE = 'physical:host'
DEFAULT_SPAN = datetime.timedelta(days=1)


def _hm(when):
    return when.strftime('%Y-%m-%d %H:%M')


def lease_legend(lease):
    return '%s (%s) %s -> %s' % (
        lease.get('name'), lease['id'],
        _hm(common.api_date(lease['start_date'])),
        _hm(common.api_date(lease['end_date'])))


def _visible_leases(client, start, end):
    """{id: lease} of the leases the caller may see in the window."""
    leases = client.leases.list(time_from=start.isoformat(),
                                time_to=end.isoformat())
    return {lease['id']: lease for lease in leases}


def host_label(host):
    return str(host.get('hypervisor_hostname') or host.get('name') or
               host['id'])


def _bars(holdings, leases, legend):
    """A bar per holding (an allocation's ``reservations``), keyed by its
    lease, whose legend goes into ``legend``."""
    bars = []
    for res in holdings:
        key = res.get('lease_id') or res.get('id')
        bars.append(timeline.Bar(common.api_date(res['start_date']),
                                 common.api_date(res['end_date']), key))
        if key in leases:
            legend[key] = lease_legend(leases[key])
        else:
            legend.setdefault(key, 'lease %s (another project)' % key)
    return bars


def host_rows(client, hosts, start, end):
    """Rows of the hosts, each bar a reservation holding the host.

    :returns: (rows, legend)
    """
    allocations = {str(a['resource_id']): a.get('reservations') or []
                   for a in client.hosts.allocations()}
    leases = _visible_leases(client, start, end)
    rows, legend = [], {}
    for host in hosts:
        bars = _bars(allocations.get(str(host['id']), []), leases, legend)
        rows.append(timeline.Row(host_label(host), bars))
    return rows, legend


def pool_rows(client, allocations, start, end):
    """Rows of the volume pools (``allocations``: the pools'
    ``/v1/volume-pools/allocations`` entries), a line per pool and one
    more under it for each holding that overlaps another, each bar a
    reservation holding the pool; its gigabytes in the legend.

    :returns: (rows, legend, held): ``held`` says, per pool, the most
        gigabytes held at once over ``[start, end)`` and its capacity.
    """
    leases = _visible_leases(client, start, end)
    rows, legend, held, gb = [], {}, [], {}
    for pool in allocations:
        holdings = pool.get('reservations') or []
        bars = _bars(holdings, leases, legend)
        for bar, res in zip(bars, holdings):
            gb[bar.key] = gb.get(bar.key, 0) + (res.get('size_gb') or 0)
        for index, lane in enumerate(timeline.lanes(bars)):
            rows.append(timeline.Row(pool['name'] if not index else '',
                                     lane))
        most = capacity.peak([capacity.Booking(
            bar.start, bar.end, res.get('size_gb') or 0)
            for bar, res in zip(bars, holdings)], start, end)
        held.append('%s %d of %s GB' % (pool['name'], most,
                                        pool.get('capacity_gb')))
    for key, size in gb.items():
        legend[key] = '%s, %d GB' % (legend[key], size)
    return rows, legend, held


def lease_chart(client, lease, now, width=80):
    """The lease's window, then each host it holds with every reservation
    on that host, from a little before its start to a little after its end.
    """
    start = common.api_date(lease['start_date'])
    end = common.api_date(lease['end_date'])
    margin = max((end - start) / 10, datetime.timedelta(minutes=5))
    lo, hi = start - margin, end + margin
    rows = [timeline.Row('lease', [timeline.Bar(start, end, lease['id'])])]
    legend = {lease['id']: lease_legend(lease)}
    if any(r.get('resource_type') == HOST_TYPE
           for r in lease.get('reservations') or []):
        # every host is listed (Blazar's shape): those holding the lease
        mine = {str(a['resource_id'])
                for a in client.hosts.allocations(lease_id=lease['id'])
                if a.get('reservations')}
        hosts = [h for h in client.hosts.list() if str(h['id']) in mine]
        host_lines, host_legend = host_rows(client, hosts, lo, hi)
        rows.extend(host_lines)
        for key, text in host_legend.items():
            legend.setdefault(key, text)
    for res in lease.get('reservations') or []:
        if res.get('resource_type') != HOST_TYPE:
            rows.insert(1, timeline.Row(
                '%s' % res.get('resource_type'),
                [timeline.Bar(start, end, lease['id'])]))
    return timeline.render(rows, lo, hi, width=width, now=now,
                           legend=legend,
                           title='Lease %s (UTC)' % lease.get('name'))


def _add_range_options(parser, only, what):
    """``--start``, ``--end``, ``--width`` and the repeatable ``only``
    option naming ``what`` to show."""
    parser.add_argument(
        '--start', metavar='<date>',
        help="Start of the range: 'now', 'YYYY-MM-DD HH:MM' (UTC) or "
             "ISO 8601 (default: now)")
    parser.add_argument(
        '--end', metavar='<date>',
        help='End of the range (default: one day after the start)')
    parser.add_argument(
        '--%s' % only, metavar='<%s>' % only, action='append', default=[],
        help='Only this %s (name or id; repeatable)' % what)
    parser.add_argument('--width', type=int, default=80,
                        metavar='<columns>',
                        help='Width of the chart (default: 80)')
    return parser


class HostCalendar(command.Command):
    """Chart of the hosts across time: who holds what, and free windows."""

    def get_parser(self, prog_name):
        return _add_range_options(super().get_parser(prog_name), 'host',
                                  'host')

    def take_action(self, args):
        client = common.client_of(self)
        now, start, end = common.range_from_args(args, DEFAULT_SPAN)
        if args.host:
            hosts = [client.hosts.find(h) for h in args.host]
        else:
            hosts = sorted(client.hosts.list(), key=host_label)
        rows, legend = host_rows(client, hosts, start, end)
        self.app.stdout.write(timeline.render(
            rows, start, end, width=args.width, now=now, legend=legend))
        return 0


class VolumePoolCalendar(command.Command):
    """Chart of the volume pools across time: who holds how many GB.

    A line per pool (and one more under it for each holding that
    overlaps another), the legend with each lease's gigabytes, and the
    most each pool holds at once over the range (admins; microversion
    1.6).
    """

    def get_parser(self, prog_name):
        return _add_range_options(super().get_parser(prog_name), 'pool',
                                  'volume pool')

    def take_action(self, args):
        client = common.client_of(self)
        now, start, end = common.range_from_args(args, DEFAULT_SPAN)
        allocations = client.volume_pools.allocations()
        if args.pool:
            wanted = [str(client.volume_pools.find(p)['id'])
                      for p in args.pool]
            by_id = {str(a['resource_id']): a for a in allocations}
            allocations = [by_id[i] for i in wanted if i in by_id]
        else:
            allocations = sorted(allocations, key=lambda a: a['name'])
        rows, legend, held = pool_rows(client, allocations, start, end)
        self.app.stdout.write(timeline.render(
            rows, start, end, width=args.width, now=now, legend=legend,
            title='Volume pools x time (UTC)', show_free=False,
            notes=[('Held at most: ', held)] if held else ()))
        return 0
