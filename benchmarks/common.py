"""What every benchmark shares: a Climate on MariaDB + RabbitMQ, started
as subprocesses with the functional tests' helpers, and the statistics."""

import collections
import contextlib
import datetime
import http.client
import json
import math
import os
import re
import select
import shutil
import signal
import subprocess
import statistics
import sys
import tempfile
import time
import types
import urllib.parse
import uuid

import sqlalchemy as sa

from climate.db import models
from climate.lease import views
from climate.tests.functional import procs

ENGINE = os.environ.get('CLIMATE_BENCH_ENGINE', procs.MARIADB)
KEEP = os.environ.get('CLIMATE_TEST_KEEP') == '1'
# The HTTP client the latency benchmarks measure with: "lean" (http.client,
# one keep-alive connection) or "requests" (the functional tests' client).
CLIENT = os.environ.get('CLIMATE_BENCH_CLIENT', 'lean')
# A directory: record py-spy profiles (collapsed stacks, idle frames left
# out) of climate-api and the managers while the benchmark runs.
PROFILE = os.environ.get('CLIMATE_BENCH_PROFILE')


def cpu_reference(rounds=5):
    """Milliseconds a fixed pure-Python loop takes (best of ``rounds``).

    Virtual machines drift: the same benchmark on the same code has given
    p50s 1.6x apart within an hour.  Printed beside each benchmark, this
    says how fast the machine was while it ran (about 10 ms on a quiet
    machine of the 2026 CI kind, 20 ms at its slowest).
    """
    best = float('inf')
    for _ in range(rounds):
        began = time.perf_counter()
        counts = {}
        for i in range(60000):
            counts[i % 100] = counts.get(i % 100, 0) + len(str(i))
        best = min(best, time.perf_counter() - began)
    return best * 1000


def process_cpu_seconds(pid):
    """CPU seconds (user + system, every thread) process ``pid`` has used
    (Linux /proc)."""
    with open('/proc/%d/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def percentile(values, pct):
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100.0 * len(ordered)))
    return ordered[rank - 1]


def summary(values_ms):
    return 'n=%d p50 %.1f ms  p90 %.1f ms  p99 %.1f ms  max %.1f ms' % (
        len(values_ms), statistics.median(values_ms),
        percentile(values_ms, 90), percentile(values_ms, 99),
        max(values_ms))


def verdict(value, target):
    return 'OK' if value <= target else 'MISSED (target %s)' % target


class Climate:
    """climate-api (``api_threads``) and ``managers`` climate-managers on a
    fresh database and vhost; everything removed on exit."""

    def __init__(self, managers=1, api_threads=2, manager_opts=None,
                 engine=ENGINE):
        self.managers = managers
        self.api_threads = api_threads
        self.manager_opts = manager_opts
        self.engine = engine
        self.workdir = tempfile.mkdtemp(prefix='climate-bench-')
        self.database = None
        self.vhost = None
        self.cluster = None
        self.profilers = []

    def __enter__(self):
        problems = procs.missing_services((self.engine,))
        if problems:
            sys.exit('benchmarks need the services on 127.0.0.1:\n  ' +
                     '\n  '.join(problems))
        try:
            self.database = procs.Database(self.engine).create()
            self.vhost = procs.Vhost().create()
            port = procs.free_port()
            config = procs.write_config(
                os.path.join(self.workdir, 'climate.conf'),
                self.database.url, self.vhost.transport_url, port,
                api_threads=self.api_threads, manager=self.manager_opts)
            procs.db_upgrade(config)
            self.cluster = procs.Cluster(
                self.workdir, config, port,
                manager_configs=procs.node_configs(self.workdir,
                                                   self.database))
            self.cluster.start_api()
            self.cluster.start_managers(self.managers)
            if PROFILE:
                self._profile(PROFILE)
        except BaseException:
            self.__exit__(*sys.exc_info())
            raise
        return self

    def _profile(self, directory):
        os.makedirs(directory, exist_ok=True)
        pyspy = shutil.which('py-spy') or os.path.join(
            os.path.dirname(sys.executable), 'py-spy')
        for proc in self.cluster.procs:
            out = os.path.join(directory, '%s-%d.txt' % (proc.kind,
                                                         proc.pid))
            self.profilers.append(subprocess.Popen(
                [pyspy, 'record', '--pid', str(proc.pid), '--rate', '250',
                 '--gil', '--nonblocking',
                 '--format', 'raw', '--threads', '--output', out],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(1)
        print('  profiling to %s' % directory)

    def __exit__(self, exc_type, exc, tb):
        for profiler in self.profilers:
            profiler.send_signal(signal.SIGINT)
        for profiler in self.profilers:
            try:
                profiler.wait(60)
            except subprocess.TimeoutExpired:
                profiler.kill()
        tear_down(self.cluster, self.database, self.vhost, self.workdir,
                  failed=exc_type is not None)

    def client(self, **kwargs):
        return procs.Client(self.cluster.url, **kwargs)

    def latency_client(self, **kwargs):
        """The client a latency figure is measured with (``CLIENT``)."""
        if CLIENT == 'requests':
            return self.client(**kwargs)
        return LeanClient(self.cluster.url, **kwargs)

    @property
    def manager_pids(self):
        return [p.pid for p in self.cluster.managers]

    @property
    def api_pid(self):
        return self.cluster.api.pid


def tear_down(cluster, database, vhost, workdir, failed):
    """Stop a benchmark's processes and drop its database, vhost and
    directory (kept with CLIMATE_TEST_KEEP; the logs are kept when it
    ``failed``, and the processes' last lines printed)."""
    if cluster is not None:
        cluster.stop()
        if failed:
            print(cluster.report(30), file=sys.stderr)
    if KEEP:
        print('kept %s, %s, %s' % (workdir, database and database.name,
                                   vhost and vhost.name))
        return
    if database is not None:
        database.drop()
    if vhost is not None:
        vhost.delete()
    if not failed:
        shutil.rmtree(workdir, ignore_errors=True)


# LeanClient.request takes ``json=`` as procs.Client does, which hides the
# module inside it
_json_dumps = json.dumps


class _Response:
    def __init__(self, status_code, content):
        self.status_code = status_code
        self.content = content

    def json(self):
        return json.loads(self.content)


class LeanClient:
    """procs.Client's ``request`` over one keep-alive http.client
    connection.

    A latency benchmark measures Climate, as wrk or ab would, not its HTTP
    client: requests spends about 2 ms of CPU per call on this machine's
    kind (building the request, cookie and adapter machinery, decoding),
    and on 2 cores that CPU is taken from the API and the manager.
    ``CLIMATE_BENCH_CLIENT=requests`` measures with requests instead.
    """

    def __init__(self, url, project='ft-project', user='ft-user',
                 roles='admin,member,reader', version=None, timeout=60):
        parsed = urllib.parse.urlsplit(url)
        self.host, self.port = parsed.hostname, parsed.port
        self.timeout = timeout
        self.headers = {'X-Project-Id': project, 'X-User-Id': user,
                        'X-Roles': roles, 'Accept': 'application/json'}
        if version:
            self.headers['OpenStack-API-Version'] = 'reservation %s' % \
                version
        self.conn = None

    def request(self, method, path, expect=(200,), json=None, params=None):
        if params:
            path += '?' + urllib.parse.urlencode(params)
        headers = self.headers
        body = None
        if json is not None:
            body = _json_dumps(json).encode('utf-8')
            headers = dict(headers, **{'Content-Type': 'application/json'})
        response = self._exchange(method, path, body, headers)
        if response.status_code not in expect:
            raise AssertionError('%s %s: %d %s' % (
                method, path, response.status_code, response.content[:500]))
        return response

    def _exchange(self, method, path, body, headers):
        if self.conn is not None and self.conn.sock is not None and \
                select.select([self.conn.sock], [], [], 0)[0]:
            # an idle keep-alive connection is readable only when the
            # server closed it (cheroot does after 10 s, as during a bulk
            # insert): open a new one before sending rather than resend a
            # request that may have been received (urllib3 checks the same)
            self.close()
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.host, self.port,
                                                   timeout=self.timeout)
        try:
            self.conn.request(method, path, body=body, headers=headers)
            raw = self.conn.getresponse()
            return _Response(raw.status, raw.read())
        except (http.client.HTTPException, OSError):
            self.close()
            raise

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


# -- bulk rows ----------------------------------------------------------------

class StatementTimer:
    """Seconds spent in each kind of statement, from the engine's cursor
    events (the database's answer and the driver's work on it)."""

    def __init__(self, engine):
        self.engine = engine
        self.spent = collections.defaultdict(float)
        self.count = collections.Counter()
        self._began = {}
        sa.event.listen(engine, 'before_cursor_execute', self._before)
        sa.event.listen(engine, 'after_cursor_execute', self._after)

    @staticmethod
    def kind(statement):
        words = re.sub(r'\s+', ' ', statement).strip()
        return words[:90]

    def _before(self, conn, cursor, statement, params, context, many):
        self._began[id(cursor)] = time.perf_counter()

    def _after(self, conn, cursor, statement, params, context, many):
        began = self._began.pop(id(cursor), None)
        if began is not None:
            key = self.kind(statement)
            self.spent[key] += time.perf_counter() - began
            self.count[key] += 1

    def reset(self):
        self.spent.clear()
        self.count.clear()

    def report(self, runs, what='start'):
        """Print each kind's milliseconds and count per one of ``runs``."""
        print('SQL per %s, by statement (ms, count):' % what)
        for key, spent in sorted(self.spent.items(), key=lambda kv: -kv[1]):
            print('  %7.2f  %5.1f  %s' % (spent * 1000 / runs,
                                          self.count[key] / runs, key))


def lease_row(lid, name, start, end, project='bench', created=None,
              status='PENDING', user='bench-user'):
    """A lease's row as Climate writes it, without its listing body."""
    return dict(
        id=lid, name=name, user_id=user, project_id=project,
        trust_id=None, start_date=start, end_date=end, status=status,
        status_reason=None, degraded=False, lease_type=None,
        max_retries=None, retry_attempts=None, next_attempt_at=None,
        created_at=created, updated_at=None)


def reservation_row(rid, lid, resource_type='noop', params=None,
                    created=None, resource_id=None):
    """A pending reservation's row as Climate writes it."""
    return dict(
        id=rid, lease_id=lid, resource_type=resource_type,
        resource_id=resource_id, status='pending', params=params or {},
        missing_resources=False, resources_changed=False, part_of=None,
        created_at=created, updated_at=None)


def with_body(lease, reservations, events=()):
    """``lease`` with the listing's body the create stores."""
    lease['body'] = json.dumps(views.lease(types.SimpleNamespace(
        reservations=[types.SimpleNamespace(**r) for r in reservations],
        events=[types.SimpleNamespace(**e) for e in events], **lease)))
    return lease


def lease_rows(name, start, end, project='bench', created=None,
               status='PENDING', event_status='UNDONE', resource_type='noop'):
    """The rows Climate writes for a lease with one reservation (noop by
    default) and its start/before_end/end events: ``(lease, reservation,
    events)``."""
    lid = str(uuid.uuid4())
    created = created or procs.utcnow().replace(microsecond=0)
    lease = lease_row(lid, name, start, end, project, created, status)
    reservation = reservation_row(str(uuid.uuid4()), lid, resource_type,
                                  created=created)
    # before_end as Climate puts it by default: 60 minutes before the end,
    # not before the start
    before_end = max(start, end - datetime.timedelta(minutes=60))
    events = [dict(
        id=str(uuid.uuid4()), lease_id=lid, event_type=etype, time=etime,
        due_at=etime, status=event_status, attempts=0, claimed_by=None,
        claim_token=None, last_error=None, created_at=created,
        updated_at=None)
        for etype, etime in (('start_lease', start),
                             ('before_end_lease', before_end),
                             ('end_lease', end))]
    return with_body(lease, [reservation], events), reservation, events


def bulk_leases(db, count, start, end, project='bench', first=0,
                created=None, status='PENDING', event_status='UNDONE',
                chunk=5000):
    """Insert ``count`` leases straight into SQL (``lease_rows``).
    Returns their ids."""
    leases = models.Lease.__table__
    reservations = models.Reservation.__table__
    events = models.Event.__table__
    created = created or procs.utcnow().replace(microsecond=0)
    ids = []
    for base in range(0, count, chunk):
        lrows, rrows, erows = [], [], []
        for i in range(base, min(count, base + chunk)):
            lease, reservation, lease_events = lease_rows(
                'bulk-%07d' % (first + i), start, end, project,
                created + datetime.timedelta(seconds=i // 10), status,
                event_status)
            ids.append(lease['id'])
            lrows.append(lease)
            rrows.append(reservation)
            erows.extend(lease_events)
        with db.engine.begin() as conn:
            conn.execute(leases.insert(), lrows)
            conn.execute(reservations.insert(), rrows)
            conn.execute(events.insert(), erows)
    analyze(db, ('leases', 'reservations', 'events'))
    return ids


def analyze(db, tables):
    """Refresh the planner's statistics after a bulk insert."""
    if db.engine_name == procs.POSTGRESQL:
        with db.engine.connect() as conn:
            conn.execution_options(isolation_level='AUTOCOMMIT').execute(
                sa.text('ANALYZE'))
    else:
        with db.engine.begin() as conn:
            conn.execute(sa.text('ANALYZE TABLE %s' % ', '.join(tables)))


@contextlib.contextmanager
def timed(label):
    began = time.perf_counter()
    yield
    print('  (%s: %.1fs)' % (label, time.perf_counter() - began))
