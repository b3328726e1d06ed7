"""Where a lease start's milliseconds go, in-process.

    python benchmarks/profile_starts.py [LEASES] [--top N]

Creates ``LEASES`` (default 500) ``noop`` leases starting now in a fresh
database (MariaDB, or PostgreSQL with CLIMATE_BENCH_ENGINE=postgresql)
through the lease service, then claims their start events and runs each
with the event engine's own ``run_event``, one after the other, under
cProfile: what each of the 10,000 starts of ``run.py lag 10000:4`` costs
a manager, without RPC, other managers or the wake-up fanout.
``--batch N`` claims N at a time and runs them as the engine's batches
do (``climate.manager.workers.batch_events``, in this thread).

Printed: wall and CPU per start, each SQL statement's share (by its
first words) and the functions with the most time of their own.
"""

import argparse
import cProfile
import datetime
import pstats
import sys
import time

import common
from climate import context
from climate import dates
from climate.db import api as db_api
from climate.db import migration
from climate.manager import leases
from climate.manager import plugins as plugin_registry
from climate.manager.workers import batch_events
from climate.manager.workers import events
from climate.notifications import lease as lease_notifications
from climate.tests.functional import procs


def _create(service, count, end):
    ctx = context.RequestContext(project_id='p1', user_id='u1',
                                 roles=['member'])
    for i in range(count):
        service.create(ctx, {
            'name': 'start-%05d' % i, 'start_date': 'now',
            'end_date': end.isoformat(),
            'reservations': [{'resource_type': 'noop'}]})


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument('leases', nargs='?', type=int, default=500)
    parser.add_argument('--top', type=int, default=25)
    parser.add_argument('--batch', type=int, default=0,
                        help='claim this many at a time and run them in '
                             'one batch (0: each alone, claims of 50)')
    args = parser.parse_args(argv)

    from climate import conf  # noqa: F401 - registers options
    from oslo_config import cfg
    cfg.CONF([], project='climate', default_config_files=[])
    cfg.CONF.set_override('auth_strategy', 'noauth')
    db = procs.Database(common.ENGINE)
    db.create()
    try:
        db_api.configure(connection=db.url)
        migration.upgrade()
        registry = plugin_registry.Registry(['noop'], owner='profile')
        notifier = lease_notifications.LeaseNotifier('profile')
        service = leases.LeaseService(registry, notifier, wake=lambda: None)
        _create(service, args.leases,
                dates.utcnow() + datetime.timedelta(hours=2))
        engine = events.EventEngine('profile', registry, notifier)
        ctx = context.admin_context()
        timer = common.StatementTimer(db_api.get_engine())
        profile = cProfile.Profile()
        started = 0
        wall, cpu = time.perf_counter(), time.process_time()
        profile.enable()
        while True:
            token = 'token-%d' % started
            # only starts are due: no run order to keep
            claimed = db_api.events_claim(
                ctx, 'profile', token, dates.utcnow(), args.batch or 50,
                datetime.timedelta(seconds=600))
            if not claimed:
                break
            if args.batch:
                batch_events.run(engine, claimed, token)
            else:
                for claim in claimed:
                    engine.run_event(claim.event_id, token, claim.lease_id)
            started += len(claimed)
        profile.disable()
        wall = time.perf_counter() - wall
        cpu = time.process_time() - cpu
        assert started == args.leases, (started, args.leases)
        print('%d starts on %s: %.2f ms wall, %.2f ms CPU per start '
              '(claims included)' % (started, common.ENGINE,
                                     1000 * wall / started,
                                     1000 * cpu / started))
        timer.report(started)
        print('\nfunctions by time of their own (ms per start):')
        stats = pstats.Stats(profile)
        rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])
        for (path, line, name), (_cc, calls, own, total, _c) in \
                rows[:args.top]:
            print('  %7.3f own %7.3f total %6d calls  %s:%d %s' % (
                1000 * own / started, 1000 * total / started, calls,
                path.rsplit('/', 2)[-1] if '/' in path else path, line,
                name))
    finally:
        db_api.get_engine().dispose()
        db.drop()


if __name__ == '__main__':
    main(sys.argv[1:])
