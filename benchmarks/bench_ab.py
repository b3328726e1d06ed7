"""A/B: POST /v1/leases on the working tree against a git ref, side by
side in one run.

``python benchmarks/run.py ab <git ref> [noop] [host] [--rounds N]
[--per-round N] [--hosts N] [--new <git ref>]``

The ref is exported (``git archive``) into
``~/.cache/climate-ab/<sha>/src`` (``CLIMATE_AB_CACHE`` moves the cache)
and installed into its own venv there (``pip install -r requirements.txt``
with this interpreter's packages as constraints, so that both sides run
the same libraries, then ``pip install --no-deps -e``); both are reused
for as long as the directory exists.  The working tree runs from the
current interpreter; with ``--new <git ref>`` the new side is that ref,
exported and installed the same way (two commits compared, whatever the
working tree holds).

Each side gets a fresh MariaDB database (``CLIMATE_BENCH_ENGINE``) and
RabbitMQ vhost, its schema made by its own ``climate-db-manage``, its own
``climate-api`` (2 threads) and one ``climate-manager``, noauth, all
started from its own venv's console scripts and bound to 127.0.0.1.  The
config file of the ref is written by the ref's own
``climate/tests/functional/procs.py`` ``write_config`` when it has one
(options it does not know are not written to it, and what the two files
differ in is printed); the current one otherwise.

Both are up for the whole run; rounds are interleaved: in each round,
for each kind of lease, ``--per-round`` creates (50) on one side, then as
many on the other, the side going first alternating from round to round
(ABBA), so that a drift of the machine weighs on both alike.  Every
request opens a new HTTP connection (as a client without keep-alive
does; ``CLIMATE_AB_KEEPALIVE=1`` keeps one connection per side).  Kinds:

- ``noop``: a lease 30 days ahead, one day long, one ``noop``
  reservation;
- ``host``: a ``physical:host`` reservation of one host (``min = max =
  1``) with a filter on one property (``["=", "$gpu", "True"]``, half the
  hosts), 4 hours long, the n-th lease starting 30 days + n * 15 minutes
  ahead (16 overlap; spaced further when fewer than 64 hosts, so that at
  most half the matching hosts are taken at once), among ``--hosts``
  hosts (100) registered through ``POST /v1/os-hosts`` in the static
  inventory, each with ``gpu`` and ``rack`` properties.

Printed: p50/p90/p99 of each side and the ratio new/old of each
percentile (below 1: the working tree is faster); the ratio of the p50s
round by round (its spread says how far the machine drifted); the CPU
each side's climate-api and climate-manager used per create during its
own rounds (/proc, every thread; 10 ms ticks, summed over the rounds),
which a loaded machine blurs far less than latency.  Bounded: at most
``--rounds`` rounds (10) and ``CLIMATE_AB_TIMEOUT`` seconds (900) of
measuring, after which the rounds done so far are reported.
"""

import argparse
import contextlib
import datetime
import fcntl
import importlib.util
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import common
from climate.tests.functional import procs

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
CACHE = os.environ.get('CLIMATE_AB_CACHE', os.path.join(
    os.path.expanduser('~'), '.cache', 'climate-ab'))
KEEPALIVE = os.environ.get('CLIMATE_AB_KEEPALIVE') == '1'
TIMEOUT = float(os.environ.get('CLIMATE_AB_TIMEOUT', '900'))
ROUNDS = 10
PER_ROUND = 50
WARMUP = 30
HOSTS = 100
KINDS = ('noop', 'host')
INSTALL_TIMEOUT = 1200


def _run(cmd, timeout=INSTALL_TIMEOUT, **kwargs):
    done = subprocess.run(cmd, capture_output=True, text=True,
                          timeout=timeout, **kwargs)
    if done.returncode != 0:
        raise RuntimeError('%s failed (%d):\n%s%s' % (
            ' '.join(cmd), done.returncode, done.stdout[-3000:],
            done.stderr[-3000:]))
    return done.stdout


def _clean_env():
    """The environment a process of the ref runs in: nothing pointing
    Python at the working tree."""
    env = dict(os.environ)
    for name in ('PYTHONPATH', 'PYTHONHOME', 'VIRTUAL_ENV'):
        env.pop(name, None)
    return env


def resolve(ref):
    return _run(['git', '-C', REPO, 'rev-parse', '--verify',
                 '%s^{commit}' % ref], timeout=30).strip()


def prepare(ref):
    """The ref's source and venv, made once per commit: returns (sha, its
    source directory, its venv's bin directory)."""
    sha = resolve(ref)
    base = os.path.join(CACHE, sha)
    src = os.path.join(base, 'src')
    bindir = os.path.join(base, 'venv', 'bin')
    ready = os.path.join(base, 'ready')
    os.makedirs(base, exist_ok=True)
    with open(os.path.join(base, 'lock'), 'a') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build per sha at a time
        try:
            if not os.path.exists(ready):
                _build(sha, base, src, bindir)
                with open(ready, 'w') as f:
                    f.write(sha + '\n')
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return sha, src, bindir


def _build(sha, base, src, bindir):
    began = time.monotonic()
    print('  building %s: source and venv in %s' % (sha[:10], base))
    for path in (src, os.path.join(base, 'venv')):
        if os.path.exists(path):
            _run(['rm', '-rf', path], timeout=120)
    os.makedirs(src)
    archive = subprocess.Popen(['git', '-C', REPO, 'archive', sha],
                               stdout=subprocess.PIPE)
    _run(['tar', '-x', '-C', src], stdin=archive.stdout, timeout=300)
    archive.stdout.close()
    if archive.wait(60) != 0:
        raise RuntimeError('git archive %s failed' % sha)
    _run([sys.executable, '-m', 'venv', os.path.join(base, 'venv')])
    # this interpreter's own versions as constraints: both sides run the
    # same libraries, only Climate differs
    frozen = _run([sys.executable, '-m', 'pip', 'freeze',
                   '--exclude-editable'], timeout=300)
    constraints = os.path.join(base, 'constraints.txt')
    with open(constraints, 'w') as f:
        f.write(''.join(line + '\n' for line in frozen.splitlines()
                        if line and not line.startswith(('#', '-e'))
                        and not line.lower().startswith('climate')))
    env = _clean_env()
    pip = [os.path.join(bindir, 'python'), '-m', 'pip', 'install', '-q']
    _run(pip + ['-c', constraints, '-r',
                os.path.join(src, 'requirements.txt'), 'PyMySQL',
                'psycopg2-binary'], env=env)
    # pbr takes the version from git, which an archive has not
    env['PBR_VERSION'] = '0.0.0'
    _run(pip + ['--no-deps', '-e', src], env=env)
    where = _run([os.path.join(bindir, 'python'), '-c',
                  'import climate; print(climate.__file__)'],
                 env=_clean_env(), cwd=base, timeout=60).strip()
    if not where.startswith(src):
        raise RuntimeError('the venv of %s imports climate from %s' % (
            sha, where))
    print('  (built in %.0fs)' % (time.monotonic() - began))


def _load_procs(src):
    """The ref's own procs module (its write_config), or None."""
    path = os.path.join(src, 'climate', 'tests', 'functional', 'procs.py')
    if not os.path.exists(path):
        return None
    spec = importlib.util.spec_from_file_location('_climate_ab_ref_procs',
                                                  path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # needs what this interpreter lacks
        print('  (the ref\'s procs.py does not load here: %s; its config '
              'is written by the current one)' % exc)
        return None
    return module if hasattr(module, 'write_config') else None


class _Cluster(procs.Cluster):
    """procs.Cluster starting the console scripts of ``bindir``."""

    def __init__(self, bindir, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.bindir = bindir

    def _start(self, kind):
        index = sum(1 for p in self.procs if p.kind == kind)
        log_path = os.path.join(self.workdir, '%s-%d.log' % (kind, index))
        cmd = [os.path.join(self.bindir, kind), '--config-file',
               self.config_path]
        with open(log_path, 'ab') as log:
            popen = subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, env=self.env,
                start_new_session=True, cwd=self.workdir)
        proc = procs.Proc(kind, popen, log_path)
        self.procs.append(proc)
        return proc


class Side:
    """One build: its database, vhost, climate-api and climate-manager."""

    def __init__(self, label, bindir, writer, env=None):
        self.label = label
        self.bindir = bindir
        self.writer = writer  # a procs module with write_config
        self.env = env
        self.workdir = tempfile.mkdtemp(prefix='climate-ab-%s-' % label)
        self.database = self.vhost = self.cluster = None
        self.config = None
        self.client = None

    def start(self):
        self.database = procs.Database(common.ENGINE).create()
        self.vhost = procs.Vhost().create()
        port = procs.free_port()
        self.config = self.writer.write_config(
            os.path.join(self.workdir, 'climate.conf'), self.database.url,
            self.vhost.transport_url, port, api_threads=2)
        _run([os.path.join(self.bindir, 'climate-db-manage'),
              '--config-file', self.config, 'upgrade'], timeout=300,
             env=self.env)
        self.cluster = _Cluster(self.bindir, self.workdir, self.config, port,
                                env=self.env)
        if self.env is not None:
            self.cluster.env = dict(self.env)
        self.cluster.start_api()
        self.cluster.start_managers(1)
        self.client = common.LeanClient(self.cluster.url)
        return self

    def cpu_seconds(self):
        """CPU used so far by its climate-api and its climate-manager."""
        return [common.process_cpu_seconds(proc.pid)
                for proc in (self.cluster.api, self.cluster.managers[0])]

    def post(self, body):
        began = time.perf_counter()
        self.client.request('POST', '/v1/leases', expect=(201,), json=body)
        elapsed = (time.perf_counter() - began) * 1000
        if not KEEPALIVE:
            self.client.close()
        return elapsed

    def stop(self, failed=False):
        if self.client is not None:
            self.client.close()
        common.tear_down(self.cluster, self.database, self.vhost,
                         self.workdir, failed)


def _config_lines(path):
    skip = ('connection', 'transport_url', 'port')
    lines, section = set(), ''
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith('['):
                section = line
            elif '=' in line and line.split('=')[0].strip() not in skip:
                lines.add('%s %s' % (section, line))
    return lines


class Bodies:
    """The lease bodies of one kind, the n-th the same on both sides."""

    def __init__(self, kind, hosts=HOSTS):
        self.kind = kind
        # at most half the matching hosts (half the hosts) taken at once
        self.step = max(15, math.ceil(4 * 60 * 2 / max(1, hosts // 2)))
        self.base = procs.utcnow().replace(microsecond=0, second=0) + \
            datetime.timedelta(days=30)

    def __call__(self, n):
        if self.kind == 'noop':
            start = self.base
            end = start + datetime.timedelta(days=1)
            reservations = [{'resource_type': 'noop'}]
        else:
            start = self.base + datetime.timedelta(minutes=self.step * n)
            end = start + datetime.timedelta(hours=4)
            reservations = [{'resource_type': 'physical:host', 'min': 1,
                             'max': 1, 'hypervisor_properties': '',
                             'resource_properties': '["=", "$gpu", "True"]'}]
        return {'name': 'ab-%s-%05d' % (self.kind, n),
                'start_date': procs.iso(start), 'end_date': procs.iso(end),
                'reservations': reservations, 'events': []}


def _register_hosts(side, count):
    admin = common.LeanClient(side.cluster.url)
    for i in range(count):
        admin.request('POST', '/v1/os-hosts', expect=(201,), json={
            'name': 'ab-host-%04d' % i, 'gpu': 'True' if i % 2 else 'False',
            'rack': 'r%d' % (i % 10)})
    admin.close()


def _parse(argv):
    parser = argparse.ArgumentParser(prog='run.py ab')
    parser.add_argument('ref', nargs='?', default='HEAD')
    parser.add_argument('kinds', nargs='*', metavar='noop|host')
    parser.add_argument('--rounds', type=int, default=ROUNDS)
    parser.add_argument('--per-round', type=int, default=PER_ROUND)
    parser.add_argument('--hosts', type=int, default=HOSTS)
    parser.add_argument('--new', metavar='REF',
                        help='a git ref as the new side instead of the '
                             'working tree (exported and installed as the '
                             'old one is)')
    args = parser.parse_args(argv)
    unknown = set(args.kinds) - set(KINDS)
    if unknown:
        parser.error('unknown kind(s) %s; choose from %s' % (
            ', '.join(sorted(unknown)), ', '.join(KINDS)))
    args.kinds = [k for k in KINDS if k in (args.kinds or KINDS)]
    if not 1 <= args.rounds <= 100 or not 1 <= args.per_round <= 500 or \
            not 2 <= args.hosts <= 5000:
        parser.error('rounds 1-100, per-round 1-500, hosts 2-5000')
    return args


def run(argv=()):
    args = _parse(list(argv))
    problems = procs.missing_services((common.ENGINE,))
    if problems:
        sys.exit('benchmarks need the services on 127.0.0.1:\n  ' +
                 '\n  '.join(problems))
    sha, src, bindir = prepare(args.ref)
    if args.new:
        new_sha, new_src, new_bindir = prepare(args.new)
        new_label = '%s (%s)' % (args.new, new_sha[:10])
    else:
        new_label = 'the working tree (%s)' % REPO
    print('== A/B POST /v1/leases: old = %s (%s), new = %s; %s; rounds of '
          '%d per side and kind, %s; %s, %s' % (
              args.ref, sha[:10], new_label, ', '.join(
                  k if k == 'noop' else 'physical:host among %d hosts' %
                  args.hosts for k in args.kinds), args.per_round,
              'one keep-alive connection' if KEEPALIVE else
              'a new connection per request', common.ENGINE,
              'API 2 threads + 1 manager each'))
    old_procs = _load_procs(src) or procs
    old = Side('old', bindir, old_procs, env=_clean_env())
    if args.new:
        new = Side('new', new_bindir, _load_procs(new_src) or procs,
                   env=_clean_env())
    else:
        new = Side('new', os.path.dirname(sys.executable), procs)
    sides = (old, new)
    failed = True
    with contextlib.ExitStack() as stack:
        for side in sides:
            stack.callback(lambda s=side: s.stop(failed))
        for side in sides:
            side.start()
        differ = _config_lines(old.config) ^ _config_lines(new.config)
        if differ:
            print('  config files differ in: %s' % ', '.join(sorted(differ)))
        if 'host' in args.kinds:
            with common.timed('registering %d hosts on each side' %
                              args.hosts):
                for side in sides:
                    _register_hosts(side, args.hosts)
        times, cpu = _measure(sides, args)
        failed = False
    return _report(sides, times, cpu, args, sha)


def _measure(sides, args):
    bodies = {kind: Bodies(kind, args.hosts) for kind in args.kinds}
    count = {kind: 0 for kind in args.kinds}
    times = {(side.label, kind): [] for side in sides for kind in args.kinds}
    # (side, kind): [api, manager] CPU seconds used during its own batches
    cpu = {key: [0.0, 0.0] for key in times}
    for kind in args.kinds:  # warm-up, not counted, the same on both
        for side in sides:
            for n in range(WARMUP):
                side.post(bodies[kind](n))
        count[kind] = WARMUP
    deadline = time.monotonic() + TIMEOUT
    for rnd in range(args.rounds):
        if time.monotonic() > deadline:
            print('  stopped after %d rounds: CLIMATE_AB_TIMEOUT (%.0f s)' %
                  (rnd, TIMEOUT))
            break
        order = sides if rnd % 2 == 0 else sides[::-1]
        for kind in args.kinds:
            first = count[kind]
            for side in order:
                before = side.cpu_seconds()
                for n in range(first, first + args.per_round):
                    times[side.label, kind].append(
                        side.post(bodies[kind](n)))
                cpu[side.label, kind] = [
                    total + after - was for total, after, was in zip(
                        cpu[side.label, kind], side.cpu_seconds(), before)]
            count[kind] = first + args.per_round
    return times, cpu


def _report(sides, times, cpu, args, sha):
    results = {}
    for kind in args.kinds:
        label = 'noop' if kind == 'noop' else 'physical:host'
        pct, cpu_ms = {}, {}
        for side in sides:
            values = times[side.label, kind]
            pct[side.label] = [common.percentile(values, p)
                               for p in (50, 90, 99)]
            cpu_ms[side.label] = [seconds * 1000 / len(values)
                                  for seconds in cpu[side.label, kind]]
            print('  %-13s %-3s %s; CPU per create: api %.2f ms, manager '
                  '%.2f ms' % ((label, side.label, common.summary(values)) +
                               tuple(cpu_ms[side.label])))
        ratios = [n / o for n, o in zip(pct['new'], pct['old'])]
        cpu_ratios = [n / o if o else float('nan')
                      for n, o in zip(cpu_ms['new'], cpu_ms['old'])]
        print('  %-13s new/old  p50 %.2f  p90 %.2f  p99 %.2f; CPU api %.2f, '
              'manager %.2f' % ((label,) + tuple(ratios) +
                                tuple(cpu_ratios)))
        # the round to round spread says how far to trust the ratio: the
        # machine's drift within one round weighs on one side only
        per_round = sorted(
            statistics.median(new) / statistics.median(old)
            for new, old in zip(_rounds(times['new', kind], args.per_round),
                                _rounds(times['old', kind], args.per_round)))
        if len(per_round) > 1:
            print('  %-13s p50 new/old round by round: median %.2f, middle '
                  'half %.2f-%.2f, all %.2f-%.2f (%d rounds)' % (
                      label, statistics.median(per_round),
                      common.percentile(per_round, 25),
                      common.percentile(per_round, 75), per_round[0],
                      per_round[-1], len(per_round)))
        results[kind] = {'old_ms': pct['old'], 'new_ms': pct['new'],
                         'ratio': ratios, 'old_sha': sha,
                         'cpu_ms': cpu_ms, 'cpu_ratio': cpu_ratios,
                         'round_ratios': per_round}
    return results


def _rounds(values, size):
    return [values[i:i + size] for i in range(0, len(values), size)]


if __name__ == '__main__':
    run(sys.argv[1:])
