"""Lease start and end fan-out of the ``nova`` host backend on real Nova.

    tools/cloud-harness.sh up          # with COMPUTE_HOSTS="compute1 ... computeN"
    python benchmarks/bench_fanout.py [--hosts N] [--parallel 1,10,20] [--rounds 3]

Against the cloud of ``tools/cloud-harness.sh`` (same environment:
``PORT_OFFSET``, ``CLIMATE_CLOUD_DIR``...; one fake-driver nova-compute per
hypervisor), as Climate's service user: every hypervisor is enrolled in the
freepool, then, for each ``[hosts] max_parallel`` value, ``rounds`` times:
``NovaBackend.start`` of one reservation holding all N hosts (aggregate
created, hosts added to it and removed from the freepool, both re-read and
checked, schedulers refreshed) and ``NovaBackend.end`` (servers looked up
and none found, hosts back, aggregate deleted).  The figure of the issue is
the start: seconds until every host is in the reservation's aggregate,
verified.  Also printed: the per-host cost and the memory of the
nova-compute processes (what limits N on a small machine).
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from climate.plugins.physical_host.backends import nova as nova_backend  # noqa: E402
from climate.tests.integration import compute as compute_mod  # noqa: E402

HARNESS = REPO / 'tools' / 'cloud-harness.sh'


def harness(*args):
    done = subprocess.run(['bash', str(HARNESS), *args], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        sys.exit('cloud-harness.sh %s failed: %s' % (
            ' '.join(args), (done.stderr or done.stdout)[-2000:]))
    return done.stdout


def climate_config(info, directory):
    climate = info['users']['climate']
    path = pathlib.Path(directory) / 'climate.conf'
    path.write_text(f"""[service_auth]
auth_type = password
auth_url = {info['auth_url']}
username = {climate['username']}
password = {climate['password']}
project_name = {climate['project_name']}
user_domain_name = Default
project_domain_name = Default

[nova]
region_name = {info['region']}
""")
    return path


def compute_rss(status_text):
    """MiB of RSS of the nova-compute processes, from ``status``."""
    sizes = []
    for line in status_text.splitlines():
        fields = line.split()
        if fields and fields[0].startswith('nova-compute-') and \
                fields[-1].isdigit():
            sizes.append(int(fields[-1]))
    return sizes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--hosts', type=int, default=0,
                        help='hosts to reserve (default: every hypervisor)')
    parser.add_argument('--parallel', default='1,10,20',
                        help='[hosts] max_parallel values to measure')
    parser.add_argument('--rounds', type=int, default=3)
    args = parser.parse_args(argv)
    rounds = max(1, min(args.rounds, 20))
    parallels = [int(p) for p in args.parallel.split(',') if p]

    info = json.loads(harness('json'))
    names = info['compute_hosts']
    if args.hosts:
        names = names[:args.hosts]
    with tempfile.TemporaryDirectory(prefix='climate-fanout-') as tmp:
        config = climate_config(info, tmp)
        setup = nova_backend.NovaBackend(compute_mod.backend_conf(
            config, inventory='nova', max_parallel=10))
        t0 = time.monotonic()
        hosts = [setup.describe_host(n) for n in names]
        down = setup.down_hosts(hosts)
        if down:
            sys.exit('nova-compute down on %s: wait for the cloud' % ', '.join(
                h['hypervisor_hostname'] for h in down))
        for host in hosts:
            setup.enroll(host)
        print('fan-out of the nova backend: %d fake hypervisors, Nova %s, '
              'enrolled in %.1f s' % (len(hosts), info['urls']['nova'],
                                      time.monotonic() - t0))
        rss = compute_rss(harness('status'))
        if rss:
            print('  nova-compute RSS: %d processes, %.0f MiB each (median), '
                  '%.1f GiB in all' % (len(rss), statistics.median(rss),
                                       sum(rss) / 1024.0))
        project = str(uuid.uuid4().hex)
        for parallel in parallels:
            backend = nova_backend.NovaBackend(compute_mod.backend_conf(
                config, inventory='nova', max_parallel=parallel))
            starts, ends = [], []
            for _ in range(rounds):
                rid = str(uuid.uuid4())
                began = time.monotonic()
                backend.start(rid, project, hosts)
                starts.append(time.monotonic() - began)
                began = time.monotonic()
                backend.end(rid, hosts)
                ends.append(time.monotonic() - began)
            print('  max_parallel %3d: start %s s (median %.2f s, %.0f ms per '
                  'host), end %s s (median %.2f s)' % (
                      parallel, ' '.join('%.2f' % s for s in starts),
                      statistics.median(starts),
                      1000.0 * statistics.median(starts) / len(hosts),
                      ' '.join('%.2f' % s for s in ends),
                      statistics.median(ends)))
        for host in hosts:
            setup.withdraw(host)


if __name__ == '__main__':
    os.environ.setdefault('PYTHONUNBUFFERED', '1')
    main()
