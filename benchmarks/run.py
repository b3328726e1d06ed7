"""Climate benchmarks: python benchmarks/run.py [post] [list] [lag] [hosts]
[instances] [volumes]
[floatingips] [stacks] [floor] [ledger] [takeover] [usage] [quotas]
[retries] [galera] [power]

or python benchmarks/run.py ab <git ref> [noop] [host] [--rounds N]
[--per-round N] [--hosts N] [--new <git ref>]: the working tree (or the
ref ``--new``) against a git ref, side by
side in one run, each in its own venv, database and vhost, interleaved
rounds of POST /v1/leases, printing p50/p90/p99 of each and the ratios
new/old (bench_ab.py; ``ab HEAD`` checks the benchmark itself: about
1.0).  Every performance claim and every review of a change to a hot
path uses it.  ``ab`` takes the rest of the command line and is not run
when no benchmark is named.

``hosts``, ``lag`` and ``power``, named first, take sizes: ``hosts
100000:1000000`` (hosts:future allocations; by default 1,000 and 10,000
hosts with 100,000), ``lag 10000:4`` (leases due in the same second:managers;
only the bursts), ``power 1000:60`` (hosts:days; by default 200 hosts over
30 days).

Each benchmark starts its own climate-api (2 threads) and climate-manager
processes on a fresh MariaDB database and RabbitMQ vhost (the functional
tests' helpers, climate/tests/functional/procs.py) and prints its figures
against the targets.  (``power`` simulates the power plan over a
synthetic lease trace in-process, with no services at all; ``ledger``
measures the capacity ledger's functions in-process on a fresh
database, without API or manager.)
CLIMATE_BENCH_ENGINE=postgresql runs on PostgreSQL (``volumes`` and
``floatingips`` also take sqlite: climate-all, the embedded default, on a
SQLite file);
CLIMATE_BENCH_CLIENT=requests measures latency with the
requests library instead of a lean http.client connection;
CLIMATE_BENCH_PROFILE=DIR records py-spy profiles of climate-api and the
managers into DIR (collapsed stacks, GIL holders only; py-spy must be
installed); CLIMATE_TEST_KEEP=1 keeps the database, vhost and logs.

Each benchmark also prints a CPU reference (a fixed pure-Python loop, see
common.cpu_reference) from before and after it: virtual machines drift, and
figures from two runs compare only with it.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_ab  # noqa: E402
import bench_floatingips  # noqa: E402
import bench_floor  # noqa: E402
import bench_galera  # noqa: E402
import bench_hosts  # noqa: E402
import bench_instances  # noqa: E402
import bench_ledger  # noqa: E402
import bench_lag  # noqa: E402
import bench_list  # noqa: E402
import bench_post  # noqa: E402
import bench_power  # noqa: E402
import bench_quotas  # noqa: E402
import bench_retries  # noqa: E402
import bench_stacks  # noqa: E402
import bench_takeover  # noqa: E402
import bench_usage  # noqa: E402
import bench_volumes  # noqa: E402
import common  # noqa: E402

BENCHMARKS = {'post': bench_post.run, 'list': bench_list.run,
              'lag': bench_lag.run, 'hosts': bench_hosts.run,
              'instances': bench_instances.run,
              'volumes': bench_volumes.run,
              'floatingips': bench_floatingips.run,
              'stacks': bench_stacks.run,
              'floor': bench_floor.run, 'ledger': bench_ledger.run,
              'takeover': bench_takeover.run, 'usage': bench_usage.run,
              'quotas': bench_quotas.run, 'retries': bench_retries.run,
              'galera': bench_galera.run, 'power': bench_power.run,
              'ab': bench_ab.run}
#: the benchmarks that take the rest of the command line as arguments
#: when named first (``hosts 100000:1000000``, ``lag 10000:4``,
#: ``power 1000:60``)
WITH_ARGUMENTS = ('ab', 'hosts', 'lag', 'power')
#: named only: it needs a git ref
NAMED_ONLY = ('ab',)


def main(argv):
    if argv and argv[0] in WITH_ARGUMENTS:
        runs = [(argv[0], (argv[1:],))]
    else:
        names = argv or [n for n in BENCHMARKS if n not in NAMED_ONLY]
        unknown = [n for n in names if n not in BENCHMARKS]
        if unknown:
            sys.exit('unknown benchmark(s) %s; choose from %s' % (
                ', '.join(unknown), ', '.join(BENCHMARKS)))
        runs = [(name, ()) for name in names]
    for name, args in runs:
        began = time.monotonic()
        before = common.cpu_reference()
        BENCHMARKS[name](*args)
        print('  [%s took %.0fs; CPU reference loop %.1f ms before, %.1f ms '
              'after]\n' % (name, time.monotonic() - began, before,
                            common.cpu_reference()))


if __name__ == '__main__':
    main(sys.argv[1:])
