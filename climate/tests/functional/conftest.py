"""Fixtures of the functional tests: Climate's real processes on real
services (MariaDB, PostgreSQL, RabbitMQ on 127.0.0.1).

- ``services`` (session): every service reachable, or the whole run FAILS
  (never skips) saying which one is missing;
- ``db_engine``: each test runs once on MariaDB and once on PostgreSQL
  (a module of the no-double-booking and exactly-once tests overrides it
  with ``procs.MULTI_WRITER_ENGINES``: a third time on a 3-node Galera
  cluster, started by ``tools/galera-cluster.sh`` if need be, with the
  managers spread over its nodes);
- ``database`` / ``vhost``: a fresh ``climate_ft_*`` database and RabbitMQ
  vhost per test, dropped afterwards (``CLIMATE_TEST_KEEP=1`` keeps them);
- ``climate``: a factory starting ``climate-api`` and N ``climate-manager``
  subprocesses on them (``climate-db-manage upgrade`` first); stopped by
  PID at teardown, with the tail of their logs printed when the test
  failed.

The helpers live in ``procs.py``, shared with ``benchmarks/``.
"""

import os
import subprocess

import pytest

from climate.db import lease_json
from climate.tests.functional import failing_plugin
from climate.tests.functional import procs

KEEP = os.environ.get('CLIMATE_TEST_KEEP') == '1'


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, 'rep_' + report.when, report)


def _failed(request):
    return any(getattr(getattr(request.node, 'rep_' + when, None),
                       'failed', False) for when in ('setup', 'call'))


@pytest.fixture(scope='session')
def services():
    problems = procs.missing_services()
    if problems:
        pytest.fail('The functional tests need MariaDB, PostgreSQL and '
                    'RabbitMQ on 127.0.0.1 (see climate/tests/functional/'
                    'procs.py for the CLIMATE_TEST_* knobs):\n  ' +
                    '\n  '.join(problems), pytrace=False)


@pytest.fixture(params=procs.ENGINES)
def db_engine(request):
    return request.param


def pytest_configure(config):
    config.addinivalue_line(
        'markers', 'galera_exclusive: the test has the Galera cluster to '
        'itself (it kills a node)')


@pytest.fixture
def galera_cluster(services, request):
    """The 3-node Galera cluster on loopback, started (or a killed node
    brought back) if need be, held for the test: shared with the other
    test processes, or alone for a test marked ``galera_exclusive``.  The
    test FAILS (never skips) when the cluster cannot be had."""
    exclusive = request.node.get_closest_marker('galera_exclusive')
    with procs.galera_turn(exclusive=bool(exclusive)):
        try:
            procs.galera_ready()
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
            pytest.fail('The Galera tests need a 3-node cluster on '
                        'loopback (tools/galera-cluster.sh up): %s' % exc,
                        pytrace=False)
        yield


@pytest.fixture
def database(services, db_engine, request):
    if db_engine == procs.GALERA:
        request.getfixturevalue('galera_cluster')
    db = procs.Database(db_engine).create()
    yield db
    if not KEEP:
        db.drop()


@pytest.fixture
def vhost(services):
    vh = procs.Vhost().create()
    yield vh
    if not KEEP:
        vh.delete()


class Climate:
    """Starts a Climate on the test's database and vhost."""

    def __init__(self, workdir, database, vhost):
        self.workdir = str(workdir)
        self.database = database
        self.vhost = vhost
        self.cluster = None
        self.clients = []

    def start(self, managers=2, manager_opts=None, api_threads=4,
              failing_plugin_available=False, pythonpath=(), extra=None):
        """Write the config, upgrade the schema, start the processes.

        :param failing_plugin_available: put the ``failing`` test plugin
            on the managers' PYTHONPATH as an entry point (add it to
            ``manager_opts['plugins']`` to load it).
        :param pythonpath: more directories for the processes' PYTHONPATH
            (e.g. one holding a ``sitecustomize`` that changes a module).
        :param extra: more options, ``{section: {option: value}}``.
        """
        assert self.cluster is None, 'one Climate per test'
        port = procs.free_port()
        config = procs.write_config(
            os.path.join(self.workdir, 'climate.conf'), self.database.url,
            self.vhost.transport_url, port, api_threads=api_threads,
            manager=manager_opts, extra=extra)
        procs.db_upgrade(config)
        env = {}
        paths = list(pythonpath)
        if failing_plugin_available:
            paths.append(failing_plugin.install_entry_point(
                os.path.join(self.workdir, 'entry-points')))
        if paths:
            env['PYTHONPATH'] = os.pathsep.join(
                p for p in paths + [os.environ.get('PYTHONPATH')] if p)
        self.cluster = procs.Cluster(self.workdir, config, port, env=env,
                                     manager_configs=procs.node_configs(
                                         self.workdir, self.database))
        self.cluster.start_api()
        self.cluster.start_managers(managers)
        return self.cluster

    def client(self, **kwargs):
        client = procs.Client(self.cluster.url, **kwargs)
        self.clients.append(client)
        return client

    def stop(self):
        for client in self.clients:
            client.close()
        if self.cluster is not None:
            self.cluster.stop()


@pytest.fixture
def climate(tmp_path, database, vhost, request):
    env = Climate(tmp_path, database, vhost)
    yield env
    env.stop()
    if env.cluster is None:
        return
    if _failed(request):
        print('\n----- Climate processes (database %s %s, vhost %s) -----' %
              (database.engine_name, database.name, vhost.name))
        print(env.cluster.report())
    # whatever the processes did, the leases' stored listing bodies are
    # current (climate.db.lease_json)
    with database.engine.connect() as conn:
        outdated = lease_json.outdated(conn)
    assert not outdated, 'leases with outdated bodies: %s' % outdated
