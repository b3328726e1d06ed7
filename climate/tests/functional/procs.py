"""Real services for the functional tests and the benchmarks.

Climate's own processes (``climate-api``, ``climate-manager``) run as
subprocesses against the machine's MariaDB or PostgreSQL and RabbitMQ on
127.0.0.1, each test run in a database and a RabbitMQ vhost of its own
(``climate_ft_*``), so parallel runs never see each other:

- :func:`missing_services` says which of the services cannot be reached;
- :class:`Database` creates and drops a database and queries it directly;
- :class:`Vhost` creates and deletes a RabbitMQ vhost (``rabbitmqctl``);
- :func:`write_config` writes a climate.conf for them;
- :class:`Cluster` starts climate-api and climate-managers in process groups
  of their own, logging to files, and stops them by PID (SIGTERM, then
  SIGKILL);
- :class:`Client` talks to the API over HTTP.

Shared by ``climate/tests/functional`` and ``benchmarks/``.
"""

import contextlib
import datetime
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

import requests
import sqlalchemy as sa

HOST = '127.0.0.1'
MARIADB = 'mariadb'
POSTGRESQL = 'postgresql'
GALERA = 'galera'
ENGINES = (MARIADB, POSTGRESQL)
#: The engines of the tests of the no-double-booking and exactly-once
#: promises: a 3-node MariaDB Galera cluster on loopback too
#: (tools/galera-cluster.sh), with the managers spread over its nodes.
MULTI_WRITER_ENGINES = ENGINES + (GALERA,)
GALERA_PORTS = tuple(int(p) for p in os.environ.get(
    'CLIMATE_TEST_GALERA_PORTS', '4306 4307 4308').split())
SERVICES = {
    MARIADB: (HOST, int(os.environ.get('CLIMATE_TEST_MYSQL_PORT', 3306))),
    POSTGRESQL: (HOST, int(os.environ.get('CLIMATE_TEST_PG_PORT', 5432))),
    'rabbitmq': (HOST, int(os.environ.get('CLIMATE_TEST_RABBIT_PORT', 5672))),
    GALERA: (HOST, GALERA_PORTS[0]),
}
MYSQL_USER = os.environ.get('CLIMATE_TEST_MYSQL_USER', 'root')
PG_USER = os.environ.get('CLIMATE_TEST_PG_USER', 'postgres')
RABBIT_USER = os.environ.get('CLIMATE_TEST_RABBIT_USER', 'guest')
RABBIT_PASSWORD = os.environ.get('CLIMATE_TEST_RABBIT_PASSWORD', 'guest')

START_TIMEOUT = float(os.environ.get('CLIMATE_TEST_START_TIMEOUT', '90'))
STOP_TIMEOUT = 15.0
PREFIX = 'climate_ft_'

# Format of dates sent to the API: ISO 8601 without offset is UTC.
ISO = '%Y-%m-%dT%H:%M:%S'


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def iso(when):
    return when.strftime(ISO)


def unique_name():
    return '%s%d_%s' % (PREFIX, os.getpid(), uuid.uuid4().hex[:8])


def tail(path, lines=80):
    try:
        with open(path, errors='replace') as f:
            text = f.read()
    except OSError as exc:
        return '(cannot read %s: %s)' % (path, exc)
    return '\n'.join(text.rstrip().splitlines()[-lines:])


# -- services ----------------------------------------------------------------

def _reachable(host, port, timeout=3.0):
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as exc:
        return str(exc)


#: The checkout these tests run from.
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
GALERA_SCRIPT = os.path.join(REPO, 'tools', 'galera-cluster.sh')


def galera(*args, timeout=300):
    """``tools/galera-cluster.sh ARGS`` (``up``, ``kill N``, ``start
    N``...), one at a time across the test processes; returns its output,
    raises with it on failure."""
    lock_path = os.path.join(tempfile.gettempdir(),
                             'climate-galera-%d.lock' % os.getuid())
    with open(lock_path, 'a') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            done = subprocess.run(['bash', GALERA_SCRIPT] + list(args),
                                  capture_output=True, text=True,
                                  timeout=timeout)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    if done.returncode != 0:
        raise RuntimeError('tools/galera-cluster.sh %s failed (%d):\n%s%s'
                           % (' '.join(args), done.returncode, done.stdout,
                              done.stderr))
    return done.stdout


@contextlib.contextmanager
def galera_turn(exclusive=False, timeout=1200):
    """Hold the test cluster with the other test processes: shared by the
    tests that only use it, exclusive for one that kills a node (the
    others would see a cluster of two).  Bounded: raises RuntimeError
    after ``timeout`` seconds of waiting."""
    path = os.path.join(tempfile.gettempdir(),
                        'climate-galera-tests-%d.lock' % os.getuid())
    mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    deadline = time.monotonic() + timeout
    with open(path, 'a') as lock:
        while True:
            try:
                fcntl.flock(lock, mode | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise RuntimeError('the Galera cluster was not free '
                                       'for %d s' % timeout)
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def galera_ready():
    """The test cluster up with all its nodes synced (started, or a
    killed node brought back, by ``tools/galera-cluster.sh up``), or
    RuntimeError saying why not."""
    if not galera_problems():
        return
    galera('up')
    problems = galera_problems()
    if problems:
        raise RuntimeError('\n'.join(problems))


def server_status(url, names):
    """``{name: value}`` of the server's global status variables
    ``names`` (text), read on a connection of its own."""
    eng = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with eng.connect() as conn:
            return dict(conn.execute(sa.text(
                'SHOW GLOBAL STATUS WHERE Variable_name IN :names').bindparams(
                sa.bindparam('names', expanding=True)),
                {'names': list(names)}).all())
    finally:
        eng.dispose()


def galera_problems():
    """What keeps the test cluster from being used: each node reachable,
    in a cluster of all of them, synced; [] if all is well."""
    problems = []
    for node, port in enumerate(GALERA_PORTS):
        try:
            status = server_status(_server_url(GALERA, node=node), (
                'wsrep_cluster_size', 'wsrep_ready',
                'wsrep_local_state_comment'))
        except Exception as exc:
            problems.append('Galera node %d (127.0.0.1:%d) refuses us: %s'
                            % (node + 1, port, str(exc).splitlines()[0]))
            continue
        if status.get('wsrep_cluster_size') != str(len(GALERA_PORTS)) or \
                status.get('wsrep_ready') != 'ON' or \
                status.get('wsrep_local_state_comment') != 'Synced':
            problems.append('Galera node %d (127.0.0.1:%d) is not a synced '
                            'member of a %d-node cluster: %s' % (
                                node + 1, port, len(GALERA_PORTS), status))
    return problems


def missing_services(engines=ENGINES):
    """Messages naming each needed service that cannot be used; [] if all
    are fine."""
    problems = []
    for name in tuple(engines) + ('rabbitmq',):
        host, port = SERVICES[name]
        error = _reachable(host, port)
        if error:
            problems.append('%s is not reachable on %s:%d (%s)' % (
                name, host, port, error))
            continue
        if name in ENGINES:
            try:
                eng = sa.create_engine(_server_url(name),
                                       poolclass=sa.pool.NullPool)
                with eng.connect() as conn:
                    conn.execute(sa.text('SELECT 1'))
                eng.dispose()
            except Exception as exc:
                problems.append('%s on %s:%d refuses us: %s' % (
                    name, host, port, exc))
    if not shutil.which('rabbitmqctl'):
        problems.append('rabbitmqctl is not on PATH (needed to create a '
                        'RabbitMQ vhost per run)')
    else:
        try:
            _rabbitmqctl('status')
        except RuntimeError as exc:
            problems.append(str(exc))
    return problems


# -- databases -------------------------------------------------------------

def _server_url(engine, database=None, node=0):
    host, port = SERVICES[engine]
    if engine == GALERA:
        port = GALERA_PORTS[node]
    if engine in (MARIADB, GALERA):
        return 'mysql+pymysql://%s@%s:%d/%s?charset=utf8mb4' % (
            MYSQL_USER, host, port, database or '')
    return 'postgresql+psycopg2://%s@%s:%d/%s' % (
        PG_USER, host, port, database or 'postgres')


class Database:
    """A database of its own on MariaDB, PostgreSQL or the Galera
    cluster (made on its first node, replicated to the others)."""

    def __init__(self, engine, name=None):
        assert engine in MULTI_WRITER_ENGINES, engine
        self.engine_name = engine
        self.name = name or unique_name()
        self.url = _server_url(engine, self.name)
        #: one URL per node the processes may use (the managers are
        #: spread over them, climate.tests.functional.conftest)
        self.node_urls = [_server_url(engine, self.name, node) for node in
                          range(len(GALERA_PORTS) if engine == GALERA
                                else 1)]
        self._engine = None

    @property
    def multi_writer(self):
        return len(self.node_urls) > 1

    def _admin(self, statement):
        eng = sa.create_engine(_server_url(self.engine_name),
                               poolclass=sa.pool.NullPool,
                               isolation_level='AUTOCOMMIT')
        try:
            with eng.connect() as conn:
                conn.execute(sa.text(statement))
        finally:
            eng.dispose()

    def create(self):
        if self.engine_name in (MARIADB, GALERA):
            self._admin('CREATE DATABASE `%s` CHARACTER SET utf8mb4' %
                        self.name)
        else:
            self._admin('CREATE DATABASE "%s"' % self.name)
        return self

    def drop(self):
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
        if self.engine_name in (MARIADB, GALERA):
            self._admin('DROP DATABASE IF EXISTS `%s`' % self.name)
        else:
            self._admin('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' %
                        self.name)

    @property
    def engine(self):
        """A SQLAlchemy engine on this database, for direct queries."""
        if self._engine is None:
            # on Galera, reads wait for what the other nodes committed
            # (wsrep_sync_wait): the checks see every manager's writes
            args = {'init_command': 'SET SESSION wsrep_sync_wait = 1'} \
                if self.engine_name == GALERA else {}
            self._engine = sa.create_engine(self.url, pool_size=4,
                                            pool_pre_ping=True,
                                            connect_args=args)
        return self._engine

    def query(self, sql, **params):
        """Rows of a read query, each a named tuple; always fresh (each
        query is its own transaction)."""
        with self.engine.connect() as conn:
            return conn.execute(sa.text(sql), params).all()

    def scalar(self, sql, **params):
        with self.engine.connect() as conn:
            return conn.execute(sa.text(sql), params).scalar()

    def sessions(self, connections):
        """``(session id, client port, state, statement)`` of the sessions
        on this database opened by ``connections`` (a process's, from
        :func:`tcp_connections`); on Galera, of every node (a session id
        is the node's port and its thread id)."""
        if self.engine_name == POSTGRESQL:
            ports = {local for local, remote in connections
                     if remote == SERVICES[POSTGRESQL][1]}
            rows = self.query(
                'SELECT pid, client_port, state, query FROM '
                'pg_stat_activity WHERE datname = :d AND client_port IS '
                'NOT NULL', d=self.name)
            return [tuple(row) for row in rows if row[1] in ports]
        found = []
        for node, url in enumerate(self.node_urls):
            server_port = (GALERA_PORTS[node] if self.engine_name == GALERA
                           else SERVICES[MARIADB][1])
            ports = {local for local, remote in connections
                     if remote == server_port}
            if not ports:
                continue
            eng = sa.create_engine(url, poolclass=sa.pool.NullPool)
            try:
                with eng.connect() as conn:
                    rows = conn.execute(sa.text(
                        'SELECT ID, HOST, COMMAND, INFO FROM '
                        'information_schema.PROCESSLIST WHERE DB = :d'),
                        {'d': self.name}).all()
            finally:
                eng.dispose()
            for session, host, command, info in rows:
                if ':' in host and int(host.rsplit(':', 1)[1]) in ports:
                    found.append(('%d/%s' % (server_port, session),
                                  int(host.rsplit(':', 1)[1]), command,
                                  info))
        return found

    def wait_sessions_idle(self, connections, timeout=30):
        """Wait until no session of ``connections`` (a paused process's)
        runs a statement."""
        def busy():
            return [row for row in self.sessions(connections)
                    if row[2] not in ('idle', 'idle in transaction',
                                      'idle in transaction (aborted)',
                                      'Sleep')]
        wait_for(lambda: not busy(), timeout, interval=0.01,
                 message=lambda: 'the sessions of a paused process to be '
                 'idle: %s' % (busy(),))

    def wait_sessions_gone(self, connections, timeout=30):
        """Wait until the database has ended every session of a killed
        process (``connections``: what :meth:`Proc.kill9` returned); returns
        how many there were.

        Until then, a statement the process sent before it died, a COMMIT
        above all, may still be running: what the database shows is not
        final yet.  Sessions are followed by id, so that a later session
        on a reused client port is not mistaken for one of them.
        """
        ids = {row[0] for row in self.sessions(connections)}

        def left():
            return [row for row in self.sessions(connections)
                    if row[0] in ids]
        wait_for(lambda: not left(), timeout, interval=0.01,
                 message=lambda: 'the sessions of a killed process to '
                 'end: %s' % (left(),))
        return len(ids)


# -- RabbitMQ --------------------------------------------------------------

def _rabbitmqctl(*args, timeout=60):
    try:
        done = subprocess.run(['rabbitmqctl', '-q'] + list(args),
                              capture_output=True, text=True,
                              timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RuntimeError('rabbitmqctl %s failed: %s' % (
            ' '.join(args), exc))
    if done.returncode != 0:
        raise RuntimeError('rabbitmqctl %s failed (%d): %s' % (
            ' '.join(args), done.returncode,
            (done.stderr or done.stdout).strip()))
    return done.stdout


class Vhost:
    """A RabbitMQ vhost of its own, open to the test user."""

    def __init__(self, name=None):
        self.name = name or unique_name()

    @property
    def transport_url(self):
        host, port = SERVICES['rabbitmq']
        return 'rabbit://%s:%s@%s:%d/%s' % (RABBIT_USER, RABBIT_PASSWORD,
                                            host, port, self.name)

    def create(self):
        _rabbitmqctl('add_vhost', self.name)
        _rabbitmqctl('set_permissions', '-p', self.name, RABBIT_USER,
                     '.*', '.*', '.*')
        return self

    def delete(self):
        _rabbitmqctl('delete_vhost', self.name)


# -- configuration -----------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def write_config(path, connection, transport_url, port, api_threads=4,
                 manager=None, database=None, extra=None):
    """Write a climate.conf; ``manager``/``database`` add to those
    sections, ``extra`` is {section: {option: value}}."""
    sections = {
        'DEFAULT': {
            'transport_url': transport_url,
            'auth_strategy': 'noauth',
            'host': HOST,
            'port': port,
            'debug': 'false',
            'rpc_response_timeout': 30,
        },
        'api': {'threads': api_threads},
        'database': {'connection': connection, 'max_pool_size': 10,
                     'max_overflow': 20},
        'manager': {},
        'oslo_messaging_notifications': {'driver': 'noop'},
    }
    sections['manager'].update(manager or {})
    sections['database'].update(database or {})
    for section, values in (extra or {}).items():
        sections.setdefault(section, {}).update(values)
    with open(path, 'w') as f:
        for section, values in sections.items():
            f.write('[%s]\n' % section)
            for key, value in values.items():
                if isinstance(value, (list, tuple)):
                    value = ','.join(str(v) for v in value)
                elif isinstance(value, bool):
                    value = str(value).lower()
                f.write('%s = %s\n' % (key, value))
            f.write('\n')
    return path


def no_credentials_env(home):
    """This process's environment as a user with no OpenStack credentials
    has it: no ``OS_*`` variable, ``HOME`` an empty directory (no
    clouds.yaml, no ~/.climate/climate.conf of the machine), so the
    ``climate`` command talks to the embedded default without
    authentication."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(('OS_', 'CLIMATE_NOAUTH'))}
    env['HOME'] = home
    env['PYTHONWARNINGS'] = 'ignore'
    return env


def console_script(name):
    """The console script next to this interpreter (venv, tox env)."""
    path = os.path.join(os.path.dirname(sys.executable), name)
    if os.path.exists(path):
        return [path]
    found = shutil.which(name)
    if found:
        return [found]
    module = 'climate.cmd.%s' % name.split('-', 1)[1].replace('-', '_')
    return [sys.executable, '-c', 'import %s as m; m.main()' % module]


def db_upgrade(config_path, timeout=180):
    """``climate-db-manage --config-file F upgrade``; raises with the
    output on failure."""
    cmd = console_script('climate-db-manage') + [
        '--config-file', config_path, 'upgrade']
    done = subprocess.run(cmd, capture_output=True, text=True,
                          timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError('%s failed (%d):\n%s%s' % (
            ' '.join(cmd), done.returncode, done.stdout, done.stderr))
    return done.stdout


def node_configs(workdir, database):
    """On a multi-writer cluster, a config file per node naming it, for
    :class:`Cluster`'s ``manager_configs``: the managers are spread over
    the nodes (the API and the schema upgrade use the first); [] on one
    server."""
    if not database.multi_writer:
        return []
    paths = []
    for node, url in enumerate(database.node_urls):
        path = os.path.join(workdir, 'node-%d.conf' % node)
        with open(path, 'w') as f:
            f.write('[database]\nconnection = %s\n' % url)
        paths.append(path)
    return paths


# -- processes -------------------------------------------------------------

def wait_answering(popen, url, log_path, name, timeout=START_TIMEOUT):
    """Wait until the API at ``url`` that ``popen`` is starting answers
    ``/healthcheck``; RuntimeError with the tail of its log if it exits
    first or does not answer within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        if popen.poll() is not None:
            raise RuntimeError('%s exited at start (%s):\n%s' % (
                name, popen.returncode, tail(log_path)))
        try:
            if requests.get(url + '/healthcheck',
                            timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError('%s not answering on %s after %d s:\n%s' % (
                name, url, timeout, tail(log_path)))
        time.sleep(0.2)


class Proc:
    """One climate-* subprocess in a process group of its own."""

    def __init__(self, kind, popen, log_path):
        self.kind = kind
        #: the Galera node (index) a manager writes to, or None
        self.node = None
        self.popen = popen
        self.log_path = log_path
        self.killed = False
        self.terminated = False

    @property
    def pid(self):
        return self.popen.pid

    @property
    def manager_name(self):
        """The owner name a manager writes in events.claimed_by and
        noop_actions.manager (ManagerService's default host)."""
        return '%s-%s' % (socket.gethostname(), self.pid)

    def alive(self):
        return self.popen.poll() is None

    def log(self):
        try:
            with open(self.log_path, errors='replace') as f:
                return f.read()
        except OSError:
            return ''

    def signal(self, signum):
        if self.alive():
            try:
                os.kill(self.pid, signum)
            except ProcessLookupError:
                pass

    def terminate(self):
        self.signal(signal.SIGTERM)
        self.terminated = True

    def kill9(self):
        """SIGKILL now, as a crash would.  Returns its TCP connections
        (see :func:`tcp_connections`, :meth:`Database.wait_sessions_gone`):
        it is stopped (SIGSTOP) first, so that it opens none after they
        are read."""
        connections = self.pause() if self.alive() else set()
        self.signal(signal.SIGKILL)
        self.killed = True
        self.popen.wait(STOP_TIMEOUT)
        return connections

    def pause(self):
        """SIGSTOP: frozen, as a process in a long pause; returns its TCP
        connections (:func:`tcp_connections`)."""
        self.signal(signal.SIGSTOP)
        return tcp_connections(self.pid)

    def resume(self):
        """SIGCONT after :meth:`pause`."""
        self.signal(signal.SIGCONT)

    def stop(self, timeout=STOP_TIMEOUT):
        """SIGTERM, then SIGKILL (the process, then what is left of its
        group) if it does not exit in time."""
        if self.alive():
            if not self.terminated:
                self.terminate()
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.signal(signal.SIGKILL)
                try:
                    self.popen.wait(timeout)
                except subprocess.TimeoutExpired:
                    pass
        try:  # the group is ours: its id is the PID we started
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def describe(self):
        status = 'running' if self.alive() else 'exited %s' % (
            self.popen.returncode,)
        return '%s pid %d (%s), log %s' % (self.kind, self.pid, status,
                                           self.log_path)


def tcp_connections(pid):
    """``(local port, remote port)`` of the TCP sockets process ``pid``
    holds (Linux /proc): a database shows the local one as its session's
    client port."""
    inodes = set()
    fd_dir = '/proc/%d/fd' % pid
    for fd in os.listdir(fd_dir):
        try:
            link = os.readlink(os.path.join(fd_dir, fd))
        except OSError:  # closed meanwhile
            continue
        if link.startswith('socket:['):
            inodes.add(link[len('socket:['):-1])
    ports = set()
    for table in ('tcp', 'tcp6'):
        try:
            with open('/proc/%d/net/%s' % (pid, table)) as f:
                lines = f.readlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if cols[9] in inodes:
                ports.add((int(cols[1].rsplit(':', 1)[1], 16),
                           int(cols[2].rsplit(':', 1)[1], 16)))
    return ports


class Cluster:
    """climate-api and climate-managers sharing one config file."""

    def __init__(self, workdir, config_path, port, env=None,
                 manager_configs=()):
        """:param manager_configs: config files read after the shared
        one, the n-th manager taking the n-th (round robin): on Galera,
        each names another node (a manager per node)."""
        self.workdir = workdir
        self.config_path = config_path
        self.manager_configs = list(manager_configs)
        self.port = port
        self.env = dict(os.environ)
        self.env.update(env or {})
        self.procs = []
        self.api = None
        self.managers = []

    @property
    def url(self):
        return 'http://%s:%d' % (HOST, self.port)

    def _start(self, kind):
        index = sum(1 for p in self.procs if p.kind == kind)
        log_path = os.path.join(self.workdir, '%s-%d.log' % (kind, index))
        cmd = console_script(kind) + ['--config-file', self.config_path]
        node = None
        if kind == 'climate-manager' and self.manager_configs:
            node = index % len(self.manager_configs)
            cmd += ['--config-file', self.manager_configs[node]]
        with open(log_path, 'ab') as log:
            popen = subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, env=self.env,
                start_new_session=True, cwd=self.workdir)
        proc = Proc(kind, popen, log_path)
        proc.node = node
        self.procs.append(proc)
        return proc

    def start_api(self, timeout=START_TIMEOUT):
        self.api = self._start('climate-api')
        wait_answering(self.api.popen, self.url, self.api.log_path,
                       'climate-api', timeout)
        return self.api

    def start_managers(self, count, timeout=START_TIMEOUT):
        """Start ``count`` managers and wait until each serves RPC."""
        started = [self._start('climate-manager') for _ in range(count)]
        self.managers.extend(started)
        deadline = time.monotonic() + timeout
        waiting = list(started)
        while waiting:
            for proc in list(waiting):
                if not proc.alive():
                    raise RuntimeError('climate-manager exited at start:\n'
                                       '%s' % tail(proc.log_path))
                if 'climate-manager %s started' % proc.manager_name in \
                        proc.log():
                    waiting.remove(proc)
            if waiting and time.monotonic() > deadline:
                raise RuntimeError('climate-manager not started after %ds:'
                                   '\n%s' % (timeout, '\n'.join(
                                       tail(p.log_path) for p in waiting)))
            time.sleep(0.2)
        return started

    def stop(self):
        for proc in reversed(self.procs):  # all at once, then wait
            if proc.alive():
                proc.terminate()
        for proc in reversed(self.procs):
            proc.stop()

    def report(self, lines=60):
        """Each process's state and the tail of its log."""
        out = []
        for proc in self.procs:
            out.append('===== %s =====\n%s' % (proc.describe(),
                                               tail(proc.log_path, lines)))
        return '\n'.join(out)

    def errors_in_logs(self):
        """Lines of unexpected tracebacks and errors in every log."""
        found = []
        for proc in self.procs:
            for line in proc.log().splitlines():
                if ' ERROR ' in line or 'Traceback' in line:
                    found.append('%s: %s' % (proc.kind, line))
        return found


# -- HTTP ------------------------------------------------------------------

class APIError(AssertionError):
    def __init__(self, response):
        self.response = response
        super().__init__('%s %s -> %d: %s' % (
            response.request.method, response.request.url,
            response.status_code, response.text[:2000]))


class Client:
    """The v1 API over HTTP, as project ``project`` (noauth headers)."""

    def __init__(self, url, project='ft-project', user='ft-user',
                 roles='admin,member,reader', version=None, timeout=60):
        self.url = url.rstrip('/')
        self.timeout = timeout
        self.session = requests.Session()
        self.session.headers.update({
            'X-Project-Id': project, 'X-User-Id': user, 'X-Roles': roles,
            'Content-Type': 'application/json'})
        if version:
            self.session.headers['OpenStack-API-Version'] = \
                'reservation %s' % version

    def request(self, method, path, expect=(200,), **kwargs):
        kwargs.setdefault('timeout', self.timeout)
        response = self.session.request(method, self.url + path, **kwargs)
        if response.status_code not in expect:
            raise APIError(response)
        return response

    def create_lease(self, name, start, end, reservations=None, **extra):
        body = {'name': name,
                'start_date': start if isinstance(start, str) else iso(start),
                'end_date': end if isinstance(end, str) else iso(end),
                'reservations': reservations or [{'resource_type': 'noop'}],
                'events': []}
        body.update(extra)
        return self.request('POST', '/v1/leases', expect=(201,),
                            json=body).json()['lease']

    def get_lease(self, lease_id):
        return self.request('GET', '/v1/leases/%s' % lease_id).json()['lease']

    def list_leases(self, **params):
        return self.request('GET', '/v1/leases', params=params).json()

    def delete_lease(self, lease_id):
        self.request('DELETE', '/v1/leases/%s' % lease_id, expect=(204,))

    def close(self):
        self.session.close()


# -- waiting -----------------------------------------------------------------

def wait_for(predicate, timeout, interval=0.1, message='condition'):
    """Call ``predicate`` until it returns something true; return it.

    Raises AssertionError after ``timeout`` seconds, naming ``message``
    (a string or a callable giving the current state)."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            text = message() if callable(message) else message
            raise AssertionError('timed out after %.0fs waiting for %s' % (
                timeout, text))
        time.sleep(interval)


def wait_progress(measure, done, quiet, cap, interval=0.25,
                  message='progress'):
    """Wait until ``done(measure())`` holds; return that measure.

    No fixed deadline for work whose speed is the machine's: the wait goes
    on while the measure changes, and fails after ``quiet`` seconds
    without a change or ``cap`` seconds in all, naming ``message`` (a
    string or a callable giving the current state) and the last
    measure."""
    began = time.monotonic()
    last, changed = None, began
    while True:
        value = measure()
        if done(value):
            return value
        now = time.monotonic()
        if value != last:
            last, changed = value, now
        if now - changed > quiet or now - began > cap:
            text = message() if callable(message) else message
            raise AssertionError(
                'no %s after %.0f s (%.0f s without a change): %s' % (
                    text, now - began, now - changed, value))
        time.sleep(interval)


def create_many(url, bodies, threads=8, timeout=600):
    """POST each lease body (a callable returning one, called just before
    sending, or a dict) with ``threads`` concurrent clients; returns the
    created leases in order.  Bounded: ``threads`` at a time, ``timeout``
    seconds in all."""
    import concurrent.futures
    import threading

    local = threading.local()
    clients = []
    lock = threading.Lock()
    deadline = time.monotonic() + timeout

    def one(body):
        if time.monotonic() > deadline:
            raise AssertionError('creating %d leases took over %ds' % (
                len(bodies), timeout))
        client = getattr(local, 'client', None)
        if client is None:
            client = local.client = Client(url)
            with lock:
                clients.append(client)
        body = body() if callable(body) else body
        return client.request('POST', '/v1/leases', expect=(201,),
                              json=body).json()['lease']

    try:
        # The first request alone: climate-api builds its policy enforcer
        # on first use, and concurrent first requests race there (see
        # climate/policy.py get_enforcer).
        first = [one(body) for body in bodies[:1]]
        with concurrent.futures.ThreadPoolExecutor(threads) as pool:
            return first + list(pool.map(one, bodies[1:]))
    finally:
        for client in clients:
            client.close()


def lease_body(name, start, end, reservations=None):
    return {'name': name,
            'start_date': start if isinstance(start, str) else iso(start),
            'end_date': end if isinstance(end, str) else iso(end),
            'reservations': reservations or [{'resource_type': 'noop'}],
            'events': []}


# -- what the database says ---------------------------------------------------

def lease_status_counts(db):
    return dict(db.query('SELECT status, count(*) FROM leases '
                         'GROUP BY status'))


def wait_all_leases(db, status, count, timeout, interval=0.25):
    """Wait until ``count`` leases are in ``status``; the message on
    timeout gives every status and the events still to run."""
    def state():
        return 'all %d leases %s; now %s; events %s' % (
            count, status, lease_status_counts(db), dict(db.query(
                'SELECT status, count(*) FROM events GROUP BY status')))
    return wait_for(lambda: db.scalar(
        'SELECT count(*) FROM leases WHERE status = :s', s=status) == count,
        timeout, interval=interval, message=state)


def event_runs(db):
    """Every event with how many noop_actions rows it produced:
    rows of (id, lease_id, event_type, status, attempts, runs)."""
    return db.query(
        'SELECT e.id, e.lease_id, e.event_type, e.status, e.attempts, '
        'count(n.id) AS runs FROM events e LEFT JOIN noop_actions n '
        'ON n.event_id = e.id GROUP BY e.id, e.lease_id, e.event_type, '
        'e.status, e.attempts')


def check_exactly_once(db, leases):
    """Every event of the ``leases`` (ids) is DONE and produced exactly one
    action per noop reservation (before_end: at most one, none when the
    lease had already ended).  Returns {event_type: count}."""
    rows = [r for r in event_runs(db) if r.lease_id in leases]
    problems = []
    seen = {}
    for row in rows:
        seen[row.event_type] = seen.get(row.event_type, 0) + 1
        allowed = (0, 1) if row.event_type == 'before_end_lease' else (1,)
        if row.status != 'DONE' or row.runs not in allowed:
            problems.append(row)
    assert not problems, '%d events not run exactly once, e.g. %s' % (
        len(problems), problems[:10])
    assert seen.get('start_lease') == len(leases), seen
    assert seen.get('end_lease') == len(leases), seen
    stray = db.scalar(
        "SELECT count(*) FROM noop_actions WHERE action IN "
        "('on_start', 'on_end', 'before_end') AND (event_id IS NULL OR "
        "event_id NOT IN (SELECT id FROM events))")
    assert stray == 0, '%d actions without their event' % stray
    return seen


def registered_managers(db):
    """The names in ``managers``: the managers alive by their heartbeat."""
    return {row.name for row in db.query('SELECT name FROM managers')}


def wait_heartbeats(db, managers, timeout=10):
    """Wait until every one of ``managers`` (procs) has written its
    heartbeat, and no other manager's row is there."""
    wait_for(lambda: registered_managers(db) == {
        proc.manager_name for proc in managers}, timeout,
        message='every manager to write its heartbeat')


def freeze_holding(db, manager, deadline, holding, ready=None,
                   progress=None, **params):
    """SIGSTOP ``manager`` while ``holding`` (SQL reading ids, with
    ``params``) reads some, once ``ready()`` (default: it does), and keep
    it frozen; gives up (AssertionError) at ``deadline`` (monotonic).

    Once frozen, what it holds must stand still (a COMMIT it sent before
    the freeze may still be on its way: on a loaded machine, seconds);
    if it does not, the manager goes on and the next chance is taken.
    With ``progress`` (a callable reading a count of the manager's own
    commits), what it holds may shrink meanwhile as long as that count
    does not move: the other managers released its claims (it froze past
    their heartbeat timeout, which the wait for its sessions can outlast
    on a loaded machine), which is no commit of its own.
    Returns ``(ids, connections, stopped_at, attempts)``: what
    ``holding`` read, its TCP connections (for
    :meth:`Database.wait_sessions_gone`), the monotonic time it was
    frozen for good, and how many freezes it took.
    """
    def held():
        return {row.id for row in db.query(holding, **params)}

    attempts = 0
    while True:
        assert time.monotonic() < deadline, (
            '%s never stood still holding what the test waits for (%d '
            'attempts): %s' % (manager.manager_name, attempts,
                               actions_by_manager(db)))
        if not (ready() if ready is not None else held()):
            time.sleep(0.005)
            continue
        attempts += 1
        stopped_at = time.monotonic()
        connections = manager.pause()
        try:
            db.wait_sessions_idle(connections, timeout=2)
        except AssertionError:
            # one of its sessions waits for a lock another of them holds:
            # decide on what the database shows
            pass
        done = progress() if progress is not None else None
        before = held()
        time.sleep(0.3)
        after = held()
        if progress is None:
            if after and after == before:
                return after, connections, stopped_at, attempts
        elif before and after <= before and progress() == done:
            return before, connections, stopped_at, attempts
        manager.resume()


def kill_holding_claims(db, manager, deadline, min_done=5):
    """kill -9 ``manager`` while it holds claimed events, once it has run
    ``min_done`` starts (:func:`freeze_holding`, then the kill); returns
    what that does.

    What it held is the sample taken when it was frozen, not a later
    read of the claims: a victim frozen past the heartbeat timeout is
    declared dead and its claims released, so that by the time its
    sessions are gone the claims may already carry a survivor's name.
    """
    started = ('SELECT (SELECT count(*) FROM events WHERE status = :s AND '
               'claimed_by = :v), (SELECT count(*) FROM noop_actions WHERE '
               'manager = :v AND action = :a)')

    def ready():
        claims, done = db.query(started, s='IN_PROGRESS',
                                v=manager.manager_name, a='on_start')[0]
        return claims and done >= min_done

    def own_actions():
        return db.scalar('SELECT count(*) FROM noop_actions WHERE '
                         'manager = :v', v=manager.manager_name)

    found = freeze_holding(
        db, manager, deadline,
        'SELECT id FROM events WHERE status = :s AND claimed_by = :v',
        ready, progress=own_actions, s='IN_PROGRESS',
        v=manager.manager_name)
    manager.kill9()
    return found


def sql_list(values):
    """``values`` (ids, names: the tests' own, never a user's) as the
    text of an SQL ``IN (...)`` list."""
    return ', '.join("'%s'" % value for value in values)


def left_by(db, manager_name, held):
    """What a killed manager left of the claims it ``held`` (the ids
    :func:`kill_holding_claims` returned): those whose action it never
    committed (a noop action is written in its event's transaction).  Read
    once its sessions are gone (:meth:`Database.wait_sessions_gone`)."""
    if not held:
        return set()
    ran = {row.event_id for row in db.query(
        'SELECT DISTINCT event_id FROM noop_actions WHERE manager = :m AND '
        'event_id IN (%s)' % sql_list(held), m=manager_name)}
    return set(held) - ran


def wait_done(db, event_ids, since, timeout):
    """Poll until every event of ``event_ids`` is DONE; returns {event id:
    seconds from ``since`` (monotonic) to when it was seen DONE}, to
    20 ms."""
    done = {}
    deadline = time.monotonic() + timeout
    while len(done) < len(event_ids):
        assert time.monotonic() < deadline, (
            'events not DONE after %ds: %s' % (
                timeout, sorted(set(event_ids) - set(done))))
        ids = sql_list(i for i in event_ids if i not in done)
        now = time.monotonic()
        for (event_id,) in db.query(
                "SELECT id FROM events WHERE status = 'DONE' AND id IN "
                "(%s)" % ids):
            done[event_id] = now - since
        time.sleep(0.02)
    return done


def actions_by_manager(db, actions=('on_start', 'on_end')):
    return dict(db.query(
        'SELECT manager, count(*) FROM noop_actions WHERE action IN '
        '(%s) GROUP BY manager' % sql_list(actions)))
