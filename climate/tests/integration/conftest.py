"""Fixtures of the integration layer: Climate against a real OpenStack on 127.0.0.1.

The cloud comes from ``tools/cloud-harness.sh`` (Keystone, Placement, Nova with fake
hypervisors, Glance, Neutron API, Cinder, Heat, on the machine's MariaDB and RabbitMQ):

- ``cloud`` (session): ``cloud-harness.sh up`` once per run, then its ``json`` description.
  When the cloud cannot come up, every test fails with the harness's own message.
- ``clean_cloud`` (autouse): ``cloud-harness.sh purge`` before each test (servers,
  aggregates, extra flavors, volumes and their snapshots, volume types, images, stacks,
  trusts) and empties Climate's tables.
- ``climate_config`` / ``climate_conf``: a Climate config file against that cloud
  (``auth_strategy = keystone``, the ``climate`` service user, hosts from Nova, volume pools
  from Cinder, floating IPs and networks in Neutron) and its parsed options.
- ``climate_services`` (session): database migrated, ``climate-api`` and
  ``climate-manager`` running as subprocesses of their own, stopped by PID at the end.
- ``api``: Climate's API at ``climate_services``'s URL (``identity.Api``), called with a
  user's token.
- ``tokens``: Keystone tokens of the harness's users by name (``tokens['demo']``): admin's
  and demo's fetched when the test starts, another user's (alt, reader, climate) on first use.
- ``compute``: Nova as the harness's admin and users see it (``compute.Compute``).
- ``neutron``: Neutron's networking API as they see it
  (``test_floatingip_reservations.Neutron``).

These tests only run when asked: ``CLIMATE_INTEGRATION=1`` (``tox -e integration``) or a
path under ``climate/tests/integration`` on the pytest command line. Knobs: see
``doc/source/testing-cloud.rst``.
"""

import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import pytest

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[2]
HARNESS = REPO / 'tools' / 'cloud-harness.sh'

UP_TIMEOUT = int(os.environ.get('CLIMATE_CLOUD_UP_TIMEOUT', '1200'))
PURGE_TIMEOUT = int(os.environ.get('CLIMATE_CLOUD_PURGE_TIMEOUT', '300'))
SERVICE_START_TIMEOUT = int(os.environ.get('CLIMATE_IT_START_TIMEOUT', '60'))


# ---------------------------------------------------------------------------------------------
# opt-in
# ---------------------------------------------------------------------------------------------

def _asked_for(config):
    if os.environ.get('CLIMATE_INTEGRATION') == '1':
        return True
    for arg in config.args:
        path = pathlib.Path(arg.split('::')[0]).resolve()
        if path == HERE or HERE in path.parents:
            return True
    return False


def pytest_collection_modifyitems(config, items):
    if _asked_for(config):
        return
    skip = pytest.mark.skip(reason='integration test: set CLIMATE_INTEGRATION=1 '
                                   '(tox -e integration) or name its path')
    for item in items:
        if HERE in pathlib.Path(str(item.fspath)).parents:
            item.add_marker(skip)


# ---------------------------------------------------------------------------------------------
# processes
# ---------------------------------------------------------------------------------------------

def _tail(text, lines=80):
    return '\n'.join(text.rstrip().splitlines()[-lines:])


def harness(*args, timeout):
    """Run the harness; return (exit status or None on timeout, combined output).

    It runs in a process group of its own, killed whole on timeout (the cloud's services
    live in groups of their own and survive: ``cloud-harness.sh stop`` ends them).
    """
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(['bash', str(HARNESS), *args], stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            status = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            status = None
        out.seek(0)
        return status, out.read().decode(errors='replace')


def _harness_or_fail(*args, timeout):
    status, output = harness(*args, timeout=timeout)
    if status != 0:
        what = (f'timed out after {timeout} s' if status is None
                else f'failed (exit {status})')
        pytest.fail(f'tools/cloud-harness.sh {" ".join(args)} {what}:\n{_tail(output)}',
                    pytrace=False)
    return output


def _stop_groups(procs, grace=10):
    """TERM the process groups of ``procs`` (session leaders we started), wait up to
    ``grace`` seconds, then KILL what is left of them."""
    for proc in procs:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + grace
    for proc in procs:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # stragglers of the group, if any
        except ProcessLookupError:
            pass
        proc.wait()


def _port_open(port, host='127.0.0.1'):
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


def _executable(name):
    """A console script of Climate, preferably from this interpreter's environment."""
    local = pathlib.Path(sys.executable).parent / name
    if local.exists():
        return str(local)
    found = shutil.which(name)
    if not found:
        pytest.fail(f'{name} not found: install Climate in this environment '
                    f'(pip install -e .)', pytrace=False)
    return found


# ---------------------------------------------------------------------------------------------
# the cloud
# ---------------------------------------------------------------------------------------------

class Cloud:
    """What ``cloud-harness.sh json`` says, plus sessions for its users."""

    def __init__(self, info):
        self.info = info
        self.auth_url = info['auth_url']
        self.region = info['region']
        self.users = info['users']
        # Climate's own database: climate_it (climate_it_OFFSET for a cloud with PORT_OFFSET)
        self.climate_db = os.environ.get('CLIMATE_IT_DB') or info['climate']['database']

    def session(self, who='admin'):
        """A keystoneauth session of one of the harness's users (admin, demo, alt,
        reader, climate), scoped to that user's project."""
        from keystoneauth1 import session as ks_session
        from keystoneauth1.identity import v3
        user = self.users[who]
        return ks_session.Session(auth=v3.Password(auth_url=self.auth_url, **user))

    def db_url(self, name):
        return f"{self.info['db_url_prefix']}{name}?charset=utf8mb4"


@pytest.fixture(scope='session')
def cloud():
    """The running cloud (``up`` once per test run); fails the tests if it cannot start."""
    if not HARNESS.exists():
        pytest.fail(f'{HARNESS} is missing', pytrace=False)
    started = time.monotonic()
    # nova-scheduler runs Climate's filter unless the caller says otherwise
    # (NOVA_EXTRA_FILTERS= without a value removes it)
    os.environ.setdefault('NOVA_FILTER_PATH', str(REPO / 'climate' / 'nova_filter'))
    os.environ.setdefault('NOVA_EXTRA_FILTERS', 'climate_filter.ClimateFilter')
    # and cinder-scheduler Climate's, over two fake back ends of finite pools
    os.environ.setdefault('CINDER_FILTER_PATH', str(REPO / 'climate' / 'cinder_filter'))
    os.environ.setdefault('CINDER_EXTRA_FILTERS', 'ClimateCinderFilter')
    os.environ.setdefault('CINDER_BACKENDS_GB', '100 200')
    # and heat-engine Climate's resource plugin (OS::Climate::Lease)
    os.environ.setdefault('HEAT_PLUGIN_DIRS', str(REPO / 'climate' / 'heat_plugin'))
    _harness_or_fail('up', timeout=UP_TIMEOUT)
    elapsed = time.monotonic() - started
    info = json.loads(_harness_or_fail('json', timeout=60))
    info['up_seconds'] = round(elapsed, 1)
    sys.stderr.write(f'\ncloud-harness up: {elapsed:.0f} s\n')
    _CLOUD_DIR[:] = [pathlib.Path(info['cloud_dir'])]
    yield Cloud(info)
    if os.environ.get('CLIMATE_CLOUD_STOP') == '1':
        harness('stop', timeout=120)


_climate_db_in_use = []
#: The running cloud's directory (its logs), once it is up.
_CLOUD_DIR = []


@pytest.fixture(autouse=True)
def clean_cloud(cloud):
    """Each integration test starts from a clean cloud and empty Climate tables."""
    _harness_or_fail('purge', timeout=PURGE_TIMEOUT)
    for url in _climate_db_in_use:
        _empty_tables(url)
    yield


# ---------------------------------------------------------------------------------------------
# Climate against the cloud
# ---------------------------------------------------------------------------------------------

def _mysql(url, database=None):
    import pymysql
    from sqlalchemy.engine import make_url
    u = make_url(url)
    kw = dict(user=u.username, password=u.password or '', autocommit=True,
              charset='utf8mb4', database=database)
    if u.query.get('unix_socket'):
        kw['unix_socket'] = u.query['unix_socket']
    else:
        kw.update(host=u.host or '127.0.0.1', port=u.port or 3306)
    return pymysql.connect(**kw)


# rows a migration seeded, which the code expects to find; the running
# managers' own rows (their heartbeats)
_KEPT_TABLES = {'alembic_version', 'computehost_inventory_version',
                'managers'}


def _empty_tables(url):
    from sqlalchemy.engine import make_url
    conn = _mysql(url, make_url(url).database)
    try:
        with conn.cursor() as cur:
            cur.execute('SHOW TABLES')
            tables = [row[0] for row in cur.fetchall() if row[0] not in _KEPT_TABLES]
            cur.execute('SET FOREIGN_KEY_CHECKS = 0')
            for table in tables:
                cur.execute(f'DELETE FROM `{table}`')
            cur.execute('SET FOREIGN_KEY_CHECKS = 1')
            # the host inventory changed under the managers' feet: its counter
            # tells them to forget what they cached
            cur.execute("SHOW TABLES LIKE 'computehost_inventory_version'")
            if cur.fetchall():
                cur.execute('UPDATE computehost_inventory_version '
                            'SET version = version + 1 WHERE id = 1')
    finally:
        conn.close()


def api_port(cloud):
    """Port of the climate-api under test: the catalog's, unless
    ``CLIMATE_IT_API_PORT`` moves it (a second run beside a first one; tests
    that go through the catalog then reach the first one)."""
    return int(os.environ.get('CLIMATE_IT_API_PORT') or cloud.info['climate']['port'])


@pytest.fixture(scope='session')
def climate_config(cloud, tmp_path_factory):
    """Path of a Climate config file for this cloud (keystone auth, real service user)."""
    climate = cloud.users['climate']
    port = api_port(cloud)
    creds = '\n'.join([
        'auth_type = password',
        f'auth_url = {cloud.auth_url}',
        f"username = {climate['username']}",
        f"password = {climate['password']}",
        f"project_name = {climate['project_name']}",
        'user_domain_name = Default',
        'project_domain_name = Default',
    ])
    text = f"""[DEFAULT]
host = 127.0.0.1
port = {port}
auth_strategy = keystone
transport_url = {cloud.info['rabbit_url']}
debug = true

[database]
connection = {cloud.db_url(cloud.climate_db)}

[keystone_authtoken]
www_authenticate_uri = {cloud.auth_url}
region_name = {cloud.region}
service_token_roles_required = true
{creds}

[service_auth]
{creds}

[nova]
region_name = {cloud.region}

[cinder]
region_name = {cloud.region}

[neutron]
region_name = {cloud.region}

[hosts]
inventory = nova
# the healing tests wait for a pass
healing_interval = 2

[volumes]
inventory = cinder
# tests wait for Cinder's pools after emptying Climate's tables
sync_interval = 2

[floatingips]
# registrations checked with Neutron, floating IPs made and deleted there
inventory = neutron

[networks]
# network reservations make and delete real Neutron networks
inventory = neutron

[heat]
region_name = {cloud.region}

[stacks]
# stack reservations: templates validated and stacks made by Heat
inventory = heat
# a stack Heat cannot make fails its attempt within the test's patience
stack_timeout = 3

[leases]
# best_effort hunts (test_best_effort.py): a failing hunt gives up within
# a minute (two fake live migrations took 16 s and more on a loaded CI),
# a retry of a failed migration comes a second later
best_effort_timeout = 45
hunt_poll_interval = 1

[manager]
# room for a Nova service restart between two attempts (2 s backoff
# doubling: 8 attempts span about 4 minutes)
event_max_attempts = 8
"""
    path = tmp_path_factory.mktemp('climate') / 'climate.conf'
    path.write_text(text)
    return path


@pytest.fixture(scope='session')
def climate_conf(climate_config):
    """The client options (``[service_auth]``, ``[nova]``) parsed from ``climate_config``,
    in a ConfigOpts of their own."""
    from oslo_config import cfg

    from climate.conf import clients as clients_conf
    conf = cfg.ConfigOpts()
    clients_conf.register_opts(conf)
    conf(['--config-file', str(climate_config)], project='climate', default_config_files=[])
    return conf


@pytest.fixture(scope='session')
def climate_db(cloud, climate_config):
    """Climate's integration database, created afresh and migrated once per run."""
    url = cloud.db_url(cloud.climate_db)
    conn = _mysql(url)
    try:
        with conn.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS `{cloud.climate_db}`')
            cur.execute(f'CREATE DATABASE `{cloud.climate_db}` CHARACTER SET utf8mb4')
    finally:
        conn.close()
    cmd = [_executable('climate-db-manage'), '--config-file', str(climate_config), 'upgrade']
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=180,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f'{" ".join(cmd)} timed out after 180 s', pytrace=False)
    if done.returncode != 0:
        pytest.fail(f'{" ".join(cmd)} failed (exit {done.returncode}):\n'
                    f'{_tail(done.stdout + done.stderr)}', pytrace=False)
    _climate_db_in_use.append(url)
    return url


class ClimateServices:
    """climate-api and climate-manager subprocesses; ``url`` is the API's root."""

    def __init__(self, config, port, logdir):
        self.config = config
        self.port = port
        self.url = f'http://127.0.0.1:{port}'
        self.logdir = logdir
        self.procs = {}

    def log(self, name):
        return self.logdir / f'{name}.log'

    def start(self, name, config=None):
        """Start ``name`` with ``config`` (a path; default: the session's
        config file).  A manager is waited for until it serves RPC: a call
        sent before that sits in its queue with no heartbeat, and the API
        gives up on it after ``message_bus_timeout`` (a 503) while the
        manager still runs it once it is up."""
        log_path = self.log(name)
        offset = log_path.stat().st_size if log_path.exists() else 0
        with open(log_path, 'ab') as log:
            self.procs[name] = subprocess.Popen(
                [_executable(name), '--config-file', str(config or self.config)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)
        if name == 'climate-manager':
            self.wait_logged(name, offset, ' started (plugins: ',
                             SERVICE_START_TIMEOUT)

    def _wait(self, name, ready, timeout, what):
        """Poll ``ready()`` until true while the services live; fail
        saying ``name`` did not ``what`` within ``timeout`` s, with the
        tail of its log."""
        deadline = time.monotonic() + timeout
        while True:
            self.check_alive()
            if ready():
                return
            if time.monotonic() > deadline:
                pytest.fail(f'{name} did not {what} within {timeout} s; '
                            f'last lines of {self.log(name)}:\n'
                            f'{_tail(self.log(name).read_text(errors="replace"))}',
                            pytrace=False)
            time.sleep(0.2)

    def wait_logged(self, name, offset, text, timeout):
        """Wait until ``name``'s log says ``text`` past ``offset``."""
        def logged():
            with open(self.log(name), 'rb') as log:
                log.seek(offset)
                return text.encode() in log.read()
        self._wait(name, logged, timeout, f'log {text!r}')

    def check_alive(self):
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                pytest.fail(f'{name} exited (status {proc.returncode}); '
                            f'last lines of {self.log(name)}:\n'
                            f'{_tail(self.log(name).read_text(errors="replace"))}',
                            pytrace=False)

    def wait_api(self, timeout):
        def answers():
            try:
                urllib.request.urlopen(self.url + '/', timeout=2).close()
            except urllib.error.HTTPError:
                pass  # it answers: good enough
            except OSError:
                return False
            return True
        self._wait('climate-api', answers, timeout, f'answer on {self.url}')

    def stop(self, *names):
        """Stop ``names`` (default: every one of them) by their process groups."""
        t0 = time.monotonic()
        _stop_groups([self.procs.pop(name) for name in names or list(self.procs)
                      if name in self.procs])
        sys.stderr.write(f'climate services {" ".join(names) or "all"} stopped in '
                         f'{time.monotonic() - t0:.1f} s\n')


@pytest.fixture(scope='session')
def climate_services(cloud, climate_config, climate_db, tmp_path_factory):
    """climate-api and climate-manager running against the cloud (stopped at the end)."""
    port = api_port(cloud)
    if _port_open(port):
        pytest.fail(f'port {port} (Climate API in the catalog) is already taken: stop what '
                    f'listens there or set CLIMATE_API_PORT for the harness', pytrace=False)
    services = ClimateServices(climate_config, port, tmp_path_factory.mktemp('climate-logs'))
    try:
        _RUNNING.append(services)
        services.start('climate-manager')
        services.start('climate-api')
        services.wait_api(SERVICE_START_TIMEOUT)
        time.sleep(0.5)
        services.check_alive()
        yield services
    finally:
        _RUNNING.remove(services)
        services.stop()


#: The climate services of the session, while they run.
_RUNNING = []


# ---------------------------------------------------------------------------------------------
# what the test modules share
# ---------------------------------------------------------------------------------------------

@pytest.fixture
def api(climate_services):
    """Climate's API under test, called with a user's token."""
    from climate.tests.integration.identity import Api
    return Api(climate_services.url)


class Tokens(dict):
    """Keystone tokens of the cloud's users by name, each fetched once, when first asked
    for (``KeyError`` for a user the harness does not have)."""

    def __init__(self, cloud, *now):
        super().__init__()
        self.cloud = cloud
        for who in now:
            self[who] = cloud.session(who).get_token()

    def __missing__(self, who):
        token = self[who] = self.cloud.session(who).get_token()
        return token


@pytest.fixture
def tokens(cloud):
    """Tokens of the harness's users: admin's and demo's at once, the others' on first use."""
    return Tokens(cloud, 'admin', 'demo')


@pytest.fixture
def compute(cloud):
    """Nova as the harness's admin and users see it."""
    from climate.tests.integration import compute as compute_mod
    return compute_mod.Compute(cloud)


@pytest.fixture
def neutron(cloud):
    """Neutron's networking API as the harness's admin and users see it."""
    from climate.tests.integration.test_floatingip_reservations import Neutron
    return Neutron(cloud)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test's report carries the last lines of the Climate
    services' logs: the logs live in a temporary directory that CI does
    not keep."""
    report = yield
    if report.failed and _RUNNING:
        for name in ('climate-manager', 'climate-api'):
            path = _RUNNING[0].log(name)
            if path.exists():
                report.sections.append((
                    f'last lines of {name}.log',
                    _tail(path.read_text(errors='replace'), 150)))
    if report.failed and _CLOUD_DIR:
        _report_cloud(report, _CLOUD_DIR[0])
    return report


def _report_cloud(report, cloud_dir):
    """The cloud's own processes in a failed test's report: which are
    down, and the last lines of their logs (a service of the cloud that
    died is not Climate's failure, and its log says why)."""
    status, out = harness('status', timeout=60)
    report.sections.append(('cloud-harness.sh status', out))
    if status == 0:
        return
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[2] == 'DOWN':
            path = cloud_dir / 'log' / f'{fields[0]}.log'
            if path.exists():
                report.sections.append((
                    f'last lines of the cloud\'s {fields[0]}.log',
                    _tail(path.read_text(errors='replace'), 60)))
