"""Where the milliseconds of a noop create go, in climate-api and in
climate-manager.

``python benchmarks/profile_create.py [--requests N] [--rate HZ]
[--keep DIR]``

On one Climate of the working tree (``common.Climate``: climate-api with 2
threads, one climate-manager, MariaDB, RabbitMQ, noauth), after a
warm-up, three phases of ``--requests`` sequential POSTs of bench_post's
noop lease (each on a new connection, as bench_ab does):

1. bare: the latency and each process's CPU per request (user + system
   from /proc/<pid>/stat, every thread), no profiler attached;
2. cpu: py-spy (``--gil``: only the thread holding the GIL, that is
   running Python) samples both processes: each category's share of the
   samples times the process's CPU per request (/proc) in that phase;
3. wall: py-spy (``--idle``: every thread, waiting or not, at half the
   rate) samples both; only the stacks of the thread serving the request
   count (a cheroot worker in ``communicate`` in the API, the RPC
   server's dispatch in the manager): wall time per request by category,
   waits included, over the rate py-spy kept (it falls behind on the
   manager's 70 threads).  The profiler slows the process it samples
   this way: these are the shares of a slower request.

Each stack is put in the first category of :data:`CATEGORIES` one of its
frames matches (policy, quota and notification code with the SQL or
messaging it calls; then serialization, SQL, RPC, logging, WSGI), and a
wait at the bottom of a stack is named after what it waits for.  py-spy
must be installed (on PATH or next to this interpreter; ``pip install
py-spy``).
"""

import argparse
import collections
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import common

#: (category, substrings of a frame, any of which puts a stack in it), in
#: order of precedence
CATEGORIES = (
    ('policy (oslo.policy, climate.policy)',
     ('oslo_policy/', 'climate/policy.py', 'authorize (')),
    ('quota and usage checks',
     ('climate/manager/quotas.py', 'climate/db/quotas.py',
      'climate/db/usage.py', 'climate/quotas')),
    ('notifications and webhooks',
     ('climate/notifications/', 'oslo_messaging/notify/',
      'climate/manager/webhooks.py', 'climate/outbound.py')),
    ('input checks (JSON body, types, lease_input, plugin validate)',
     ('climate/api/v1/types.py', 'check_json_value', 'decode_json_body',
      'climate/lease/input.py', 'climate/lease/types.py',
      '_buffer_body (', '_url_refusal (', 'validate (climate/plugins',
      'check (climate/plugins', '_validated (', 'wsme/')),
    ('serialization (JSON, views, RPC payloads)',
     ('json/', 'climate/lease/views.py', 'oslo_serialization/',
      'serialize_entity', 'deserialize_entity', 'to_dict (',
      'from_dict (')),
    ('SQL (SQLAlchemy, oslo.db, PyMySQL)',
     ('sqlalchemy/', 'pymysql/', 'oslo_db/', 'climate/db/')),
    ('RPC (oslo.messaging, kombu, amqp)',
     ('oslo_messaging/', 'kombu/', 'amqp/', 'climate/rpc.py',
      'climate/manager/rpcapi.py')),
    ('logging (oslo.log, logging)',
     ('logging/', 'oslo_log/')),
    ('WSGI, middleware, pecan, context',
     ('cheroot/', 'pecan/', 'webob/', 'oslo_middleware/', 'climate/api/',
      'oslo_context/', 'climate/context.py', 'routes/')),
    ('plugins and the rest of the manager',
     ('climate/',)),
)
#: the first four are what a create does, counted with whatever they
#: call; the others are where the time is spent, the innermost frame
#: deciding
FUNCTIONAL = 4
OTHER = 'other'
#: the API's request thread waiting for the manager's answer (wall only)
REPLY_WAIT = 'RPC: the API waits for the manager\'s answer'
#: a request-serving thread's stack contains one of these
SERVING = {'climate-api': ('communicate (cheroot',),
           'climate-manager': ('_process_incoming (oslo_messaging',
                               '_do_dispatch (oslo_messaging',
                               'dispatch (oslo_messaging')}


def _pyspy():
    found = shutil.which('py-spy') or os.path.join(
        os.path.dirname(sys.executable), 'py-spy')
    if not os.path.exists(found):
        sys.exit('py-spy is not installed (pip install py-spy)')
    return found


def _body(i):
    return {'name': 'profile-%06d' % i, 'start_date': '2099-01-01 00:00',
            'end_date': '2099-01-02 00:00',
            'reservations': [{'resource_type': 'noop'}], 'events': []}


def _cpu(pids):
    return {kind: common.process_cpu_seconds(pid)
            for kind, pid in pids.items()}


def _posts(client, first, count):
    times = []
    for i in range(first, first + count):
        began = time.perf_counter()
        client.request('POST', '/v1/leases', expect=(201,), json=_body(i))
        times.append((time.perf_counter() - began) * 1000)
        client.close()  # a new connection per request
    return times


def _record(pyspy, procs_by_kind, directory, mode, rate):
    spies = {}
    for kind, pid in procs_by_kind.items():
        out = os.path.join(directory, '%s-%s.txt' % (mode, kind))
        flag = '--gil' if mode == 'cpu' else '--idle'
        spies[kind] = (out, subprocess.Popen(
            [pyspy, 'record', '--pid', str(pid), '--rate', str(rate), flag,
             '--nonblocking', '--threads', '--format', 'raw', '--output',
             out], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    time.sleep(1.5)  # attached
    return spies


def _stop(spies):
    for out, proc in spies.values():
        proc.send_signal(signal.SIGINT)
    for out, proc in spies.values():
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _category(frames):
    for name, needles in CATEGORIES[:FUNCTIONAL]:
        for frame in frames:
            if any(needle in frame for needle in needles):
                return name
    for frame in reversed(frames):
        for name, needles in CATEGORIES[FUNCTIONAL:]:
            if any(needle in frame for needle in needles):
                return name
    return OTHER


def _wait_of(leaf):
    """What a thread whose innermost frame is ``leaf`` waits for, or
    None when it is running."""
    if any(s in leaf for s in ('pymysql/', 'sqlalchemy/', 'oslo_db/')):
        return 'SQL (SQLAlchemy, oslo.db, PyMySQL)'
    if any(s in leaf for s in ('amqp/', 'kombu/', 'oslo_messaging/')):
        return 'RPC (oslo.messaging, kombu, amqp)'
    return None


def classify(path, kind, wall):
    """``({category: samples}, most samples of one thread)`` of a py-spy
    raw file; for ``wall``, of the request-serving thread only, a wait in
    the database or the message bus counted in SQL or RPC whatever called
    it."""
    counts = collections.Counter()
    threads = collections.Counter()
    functional = [name for name, _ in CATEGORIES[:FUNCTIONAL]]
    with open(path) as f:
        for line in f:
            stack, _, count = line.rstrip('\n').rpartition(' ')
            if not stack or not count.isdigit():
                continue
            count = int(count)
            thread, *frames = stack.split(';')
            threads[thread] += count
            if wall:
                if not any(n in frame for frame in frames
                           for n in SERVING[kind]):
                    continue
                if any('ReplyWaiter.wait' in frame for frame in frames):
                    counts[REPLY_WAIT] += count
                    continue
                waited = _wait_of(frames[-1]) if frames else None
                if waited is not None and \
                        _category(frames) not in functional:
                    counts[waited] += count
                    continue
            counts[_category(frames)] += count
    return counts, max(threads.values() or [0])


def _phase(client, pids, pyspy, directory, mode, rate, first, requests):
    """One profiled phase: ``(latencies, {kind: CPU ms per create},
    {kind: {category: ms per create}})``.

    CPU: each category's share of the GIL holder's samples times the
    process's CPU per create (/proc).  Wall: the serving thread's samples
    over the rate py-spy kept (the most samples one thread got, over the
    time it recorded: a process of many threads is sampled more slowly
    than asked), per create.
    """
    cpu_before = _cpu(pids)
    began = time.monotonic()
    spies = _record(pyspy, pids, directory, mode, rate)
    times = _posts(client, first, requests)
    _stop(spies)
    recorded = time.monotonic() - began
    cpu = {k: (seconds - cpu_before[k]) * 1000 / requests
           for k, seconds in _cpu(pids).items()}
    table = {}
    for kind, (out, _proc) in spies.items():
        counts, per_thread = classify(out, kind, mode == 'wall')
        if mode == 'cpu':
            total = sum(counts.values()) or 1
            table[kind] = {name: n * cpu[kind] / total
                           for name, n in counts.items()}
        else:
            kept = per_thread / recorded or rate
            table[kind] = {name: n * 1000.0 / kept / requests
                           for name, n in counts.items()}
            print('  (%s: py-spy kept %.0f Hz of %d)' % (kind, kept, rate))
    return times, cpu, table


def run(requests=1000, rate=250, keep=None):
    pyspy = _pyspy()
    directory = keep or tempfile.mkdtemp(prefix='climate-profile-')
    os.makedirs(directory, exist_ok=True)
    print('== where a noop create goes: %d POSTs per phase, a new '
          'connection each, py-spy at %d Hz, %s' % (requests, rate,
                                                    common.ENGINE))
    with common.Climate(managers=1, api_threads=2) as env:
        client = env.latency_client()
        pids = {'climate-api': env.api_pid,
                'climate-manager': env.manager_pids[0]}
        n = 0
        _posts(client, n, 100)  # warm-up
        n += 100
        cpu_before = _cpu(pids)
        began = time.perf_counter()
        bare = _posts(client, n, requests)
        elapsed = time.perf_counter() - began
        n += requests
        bare_cpu = {k: (seconds - cpu_before[k]) * 1000 / requests
                    for k, seconds in _cpu(pids).items()}
        print('  no profiler: POST %s, mean %.1f ms; %.0f creates/s' % (
            common.summary(bare), sum(bare) / len(bare),
            requests / elapsed))
        print('  CPU per create: climate-api %.1f ms, climate-manager %.1f '
              'ms (/proc, every thread)' % (
                  bare_cpu['climate-api'], bare_cpu['climate-manager']))
        results = {}
        for mode, mode_rate in (('cpu', rate), ('wall', max(1, rate // 2))):
            times, cpu, table = _phase(client, pids, pyspy, directory, mode,
                                       mode_rate, n, requests)
            n += requests
            print('  %s phase (py-spy attached): POST %s; CPU per create: '
                  'api %.1f ms, manager %.1f ms' % (
                      mode, common.summary(times), cpu['climate-api'],
                      cpu['climate-manager']))
            for kind, counts in table.items():
                results[mode, kind] = counts
        client.close()
    names = [name for name, _ in CATEGORIES] + [
        'SQL (SQLAlchemy, oslo.db, PyMySQL)', REPLY_WAIT, OTHER]
    names = list(dict.fromkeys(names))
    columns = [(m, k) for m in ('cpu', 'wall')
               for k in ('climate-api', 'climate-manager')]
    print('  ms per create; CPU: share of py-spy --gil samples x CPU per '
          'create (/proc, profiled phase); wall: the serving thread, '
          'py-spy --idle (profiler attached)')
    print('  %-62s %8s %8s %8s %8s' % ('', 'api CPU', 'mgr CPU',
                                       'api wall', 'mgr wall'))
    totals = [0.0] * len(columns)
    table = {}
    for name in names:
        row = [results[col].get(name, 0.0) for col in columns]
        table[name] = row
        totals = [t + v for t, v in zip(totals, row)]
        print('  %-62s %8.2f %8.2f %8.2f %8.2f' % ((name,) + tuple(row)))
    print('  %-62s %8.2f %8.2f %8.2f %8.2f' % (('total',) + tuple(totals)))
    print('  raw stacks in %s' % directory)
    return {'cpu_ms': bare_cpu, 'p50_ms': common.percentile(bare, 50),
            'table': table}


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--requests', type=int, default=1000)
    parser.add_argument('--rate', type=int, default=250)
    parser.add_argument('--keep', help='directory for the raw stacks')
    args = parser.parse_args()
    before = common.cpu_reference()
    run(args.requests, args.rate, args.keep)
    print('  [CPU reference loop %.1f ms before, %.1f ms after]' % (
        before, common.cpu_reference()))
