"""Where a physical:host allocation's milliseconds go at scale, in-process.

    python benchmarks/profile_hosts.py [HOSTS[:ALLOCATIONS]] [--creates N]
        [--filter narrow|broad] [--keep] [--database NAME]

Populates a fresh database (MariaDB, or PostgreSQL with
CLIMATE_BENCH_ENGINE=postgresql) as ``run.py hosts`` does
(``bench_hosts.populate``; 100,000 hosts and 1,000,000 future allocations
unless given), then allocates 2 hosts for 4 hours at random times of the
year ``--creates`` times with the plugin's own allocation
(``PhysicalHostPlugin.reserve``: the match, the host choice, the lock,
the re-check and the bookings), each in a transaction that is rolled back so
that every allocation sees the same inventory.  No API, manager or RPC.

Printed: wall and CPU p50 per allocation, and each SQL statement's share
(time between the cursor's execute and its return, by the statement's
first words), so that a figure of ``run.py hosts`` can be taken apart.
"""

import argparse
import datetime
import random
import sys
import time

import sqlalchemy as sa

import bench_hosts
import common
from climate import context
from climate.db import api as db_api
from climate.db import migration
from climate.db import models
from climate.plugins.physical_host import plugin as host_plugin
from climate.plugins import values
from climate.tests.functional import procs

FILTERS = dict((label.split(',')[0], expression)
               for label, expression in bench_hosts.FILTERS)


class _Rollback(Exception):
    pass


def _allocations(args, plugin, first, last, timer):
    """``args.creates`` allocations (after 20 to warm up), the same
    windows each time; prints their figures."""
    ctx = context.admin_context()
    params = {'resource_properties': FILTERS[args.filter],
              'hypervisor_properties': '', 'min': 2, 'max': 2}
    rng = random.Random(7)
    walls, cpus = [], []
    for n in range(args.creates + 20):
        if n == 20:  # warm-up: the match cache, the pools
            timer.reset()
        start = first + datetime.timedelta(
            minutes=rng.randint(0, int((last - first).total_seconds()
                                       // 60)))
        end = start + datetime.timedelta(hours=4)
        wall, cpu = time.perf_counter(), time.process_time()
        lease_row = common.lease_row('l-%d' % n, 'p-%d' % n, start, end)
        lease = values.Lease(
            id=lease_row['id'], name=lease_row['name'],
            project_id=lease_row['project_id'],
            user_id=lease_row['user_id'], trust_id=None,
            status=lease_row['status'], lease_type=None,
            start_date=start, end_date=end)
        reservation_row = common.reservation_row(
            'r-%d' % n, lease.id, host_plugin.RESOURCE_TYPE)
        try:
            with db_api.writer(ctx) as session:
                session.execute(sa.insert(models.Lease), [lease_row])
                session.execute(sa.insert(models.Reservation),
                                [reservation_row])
                plugin.reserve(ctx, lease, values.Reservation(
                    id='r-%d' % n, lease_id=lease.id,
                    resource_type=host_plugin.RESOURCE_TYPE,
                    resource_id=None, status='pending', part_of=None,
                    missing_resources=False, resources_changed=False,
                    params=dict(params)))
                raise _Rollback()
        except _Rollback:
            pass
        if n >= 20:
            walls.append((time.perf_counter() - wall) * 1000)
            cpus.append((time.process_time() - cpu) * 1000)
    matching = plugin.matching(ctx, params)
    print('filter %s (%d hosts match): allocation wall p50 %.1f ms, '
          'p90 %.1f ms; CPU p50 %.1f ms' % (
              args.filter, len(matching),
              common.percentile(walls, 50), common.percentile(walls, 90),
              common.percentile(cpus, 50)))
    timer.report(len(walls), 'allocation')


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument('size', nargs='?', default='100000:1000000')
    parser.add_argument('--creates', type=int, default=200)
    parser.add_argument('--filter', choices=sorted(FILTERS),
                        default='narrow')
    parser.add_argument('--keep', action='store_true',
                        help='keep the database (its name is printed)')
    parser.add_argument('--database', help='a database kept by --keep, '
                        'of the same size: not populated again')
    args = parser.parse_args(argv)
    hosts, _sep, allocations = args.size.partition(':')
    hosts, allocations = int(hosts), int(allocations or 1000000)

    from climate import conf  # noqa: F401 - registers options
    from oslo_config import cfg
    cfg.CONF([], project='climate', default_config_files=[])
    db = procs.Database(common.ENGINE, args.database)
    if args.database:
        args.keep = True
    else:
        db.create()
    try:
        db_api.configure(connection=db.url)
        if args.database:
            first, last = bench_hosts.allocated_span(db)
        else:
            migration.upgrade()
            began = time.monotonic()
            first, last = bench_hosts.populate(db, hosts, allocations)
            print('%d hosts, %d allocations on %s: populated in %.1f s' % (
                hosts, allocations, common.ENGINE,
                time.monotonic() - began))
        timer = common.StatementTimer(db_api.get_engine())
        plugin = host_plugin.PhysicalHostPlugin()
        _allocations(args, plugin, first, last, timer)
    finally:
        db_api.get_engine().dispose()
        if args.keep:
            print('kept database %s' % db.name)
        else:
            db.drop()


if __name__ == '__main__':
    main(sys.argv[1:])
