"""devstack/plugin.sh, run phase by phase under stand-ins for devstack.

devstack itself cannot run here (it takes over a whole machine), so its
functions are replaced by small shell functions that record each call and
write ini files for real.  What the plugin runs of Climate's own runs for
real: ``climate-db-manage upgrade`` builds the schema in SQLite and
``climate-status upgrade check`` reads it.  The climate.conf it writes is
then loaded with every option the config generator knows, so a misspelt
section, option or value fails here.
"""

import configparser
import importlib.metadata
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg
import pytest

ROOT = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent

# Stand-ins for devstack's functions, each recording its call in $CALLS
# (one line per call, tab-separated).
STUBS = r'''
record() { local IFS=$'\t'; echo "$*" >> "$CALLS"; }
define_plugin() { record define_plugin "$@"; }
enable_service() { local s; for s in "$@"; do ENABLED_SERVICES+=",$s"; done; }
is_service_enabled() {
    local s
    for s in "$@"; do [[ ",$ENABLED_SERVICES," == *",$s,"* ]] && return 0; done
    return 1
}
get_python_exec_prefix() { echo "$VENV_BIN"; }
setup_develop() { record setup_develop "$@"; }
sudo() { record sudo "$@"; "$@"; }
iniset() { record iniset "$@"; "$VENV_BIN/python" "$INI_TOOL" set "$@"; }
iniget() { "$VENV_BIN/python" "$INI_TOOL" get "$@"; }
iniget_multiline() { "$VENV_BIN/python" "$INI_TOOL" getmulti "$@"; }
iniset_multiline() { record iniset_multiline "$@"; "$VENV_BIN/python" "$INI_TOOL" setmulti "$@"; }
ipv6_unquote() { local a=${1#[}; echo "${a%]}"; }
setup_logging() { record setup_logging "$@"; }
database_connection_url() { echo "sqlite:///$DB_FILE"; }
recreate_database() { record recreate_database "$@"; rm -f "$DB_FILE"; }
iniset_rpc_backend() {
    record iniset_rpc_backend "$@"
    iniset "$2" "${3:-DEFAULT}" transport_url "rabbit://stackrabbit:secret@127.0.0.1:5672/"
}
configure_keystone_authtoken_middleware() {
    local f=$1 user=$2 section=${3:-keystone_authtoken}
    record configure_keystone_authtoken_middleware "$@"
    iniset "$f" "$section" auth_type password
    iniset "$f" "$section" interface public
    iniset "$f" "$section" auth_url "$KEYSTONE_SERVICE_URI"
    iniset "$f" "$section" www_authenticate_uri "$KEYSTONE_SERVICE_URI"
    iniset "$f" "$section" username "$user"
    iniset "$f" "$section" password "$SERVICE_PASSWORD"
    iniset "$f" "$section" user_domain_name "$SERVICE_DOMAIN_NAME"
    iniset "$f" "$section" project_name "$SERVICE_PROJECT_NAME"
    iniset "$f" "$section" project_domain_name "$SERVICE_DOMAIN_NAME"
    iniset "$f" "$section" memcached_servers localhost:11211
    iniset "$f" "$section" region_name "$REGION_NAME"
}
create_service_user() { record create_service_user "$@"; }
get_or_add_user_project_role() { record get_or_add_user_project_role "$@"; }
get_or_create_service() { record get_or_create_service "$@"; }
get_or_create_endpoint() { record get_or_create_endpoint "$@"; }
run_process() { record run_process "$@"; }
stop_process() { record stop_process "$@"; }
wait_for_service() { record wait_for_service "$@"; return "${API_DOWN:-0}"; }
echo_summary() { :; }
die() { echo "die: $*" >&2; exit 1; }
which() { echo "/usr/local/bin/$1"; }
# devstack's write_uwsgi_config: a module path becomes "module", and Apache
# proxies the URL path to the socket (recorded, not run)
write_uwsgi_config() {
    record write_uwsgi_config "$@"
    rm -f "$1"
    iniset "$1" uwsgi module "$2"
    iniset "$1" uwsgi socket "/var/run/uwsgi/$5.socket"
    iniset "$1" uwsgi lazy-apps true
}
remove_uwsgi_config() { record remove_uwsgi_config "$@"; rm -f "$1"; }
'''

# devstack's ini functions for the stand-ins: DEFAULT is an ordinary
# section here, as in oslo.config; the values of a multi-valued option are
# the lines of one value (devstack writes one "option = value" line each)
# and are read back space-separated, as devstack's iniget_multiline does.
INI_TOOL = r'''
import configparser, sys
cmd, path, section, option = sys.argv[1:5]
p = configparser.RawConfigParser(interpolation=None, strict=False,
                                 default_section='\0')
p.optionxform = str
p.read(path)
if cmd == 'get':
    print(p.get(section, option, fallback=''))
elif cmd == 'getmulti':
    print(' '.join(p.get(section, option, fallback='').split()))
else:
    if not p.has_section(section):
        p.add_section(section)
    values = sys.argv[5:] if cmd == 'setmulti' else sys.argv[5:6]
    p.set(section, option, '\n'.join(values))
    with open(path, 'w') as f:
        p.write(f)
'''

# stack.sh's globals the plugin reads, then the phases given as arguments
DRIVER = r'''
set -o errexit -o nounset -o pipefail
source "$STUBS"
DEST=$WORK/opt; DATA_DIR=$WORK/data; STACK_USER=$(id -un)
SERVICE_HOST=127.0.0.1; SERVICE_PROTOCOL=http; SERVICE_LISTEN_ADDRESS=0.0.0.0
ENABLE_DEBUG_LOG_LEVEL=True; SERVICE_TIMEOUT=60
KEYSTONE_SERVICE_URI=http://127.0.0.1/identity; REGION_NAME=RegionOne
SERVICE_PASSWORD=secret; SERVICE_PROJECT_NAME=service; SERVICE_DOMAIN_NAME=Default
NOVA_CONF=$WORK/nova.conf; PYTHON=$WORK/python-of-nova
CLIMATE_CONF_DIR=$WORK/etc/climate
source "$CLIMATE_DIR/devstack/settings"
for phase in "$@"; do
    source "$CLIMATE_DIR/devstack/plugin.sh" $phase
done
'''

STACK = ['stack install', 'stack post-config', 'stack extra']


class Devstack:
    """A work directory where the plugin runs with the stand-ins."""

    def __init__(self, work, services):
        self.work = work
        self.services = services
        self.calls_file = work / 'calls'
        self.site_packages = work / 'site-packages'
        self.site_packages.mkdir()
        python_of_nova = work / 'python-of-nova'
        # only asked where its site-packages are
        python_of_nova.write_text('#!/bin/sh\necho "%s"\n' % self.site_packages)
        python_of_nova.chmod(0o755)
        for name, text in (('stubs.sh', STUBS), ('ini.py', INI_TOOL),
                           ('driver.sh', DRIVER)):
            (work / name).write_text(text)

    @property
    def conf_file(self):
        return self.work / 'etc' / 'climate' / 'climate.conf'

    @property
    def db_file(self):
        return self.work / 'climate.sqlite'

    def run(self, *phases, env_extra=None, ok=True):
        env = dict(os.environ, **(env_extra or {}), WORK=str(self.work), STUBS=str(self.work / 'stubs.sh'),
                   INI_TOOL=str(self.work / 'ini.py'), CALLS=str(self.calls_file),
                   VENV_BIN=str(BIN), DB_FILE=str(self.db_file),
                   CLIMATE_DIR=str(ROOT), ENABLED_SERVICES=self.services)
        self.calls_file.write_text('')
        proc = subprocess.run(['bash', str(self.work / 'driver.sh'), *phases],
                              env=env, capture_output=True, text=True, timeout=120)
        assert (proc.returncode == 0) == ok, proc.stdout[-3000:] + proc.stderr[-3000:]
        if not ok:
            return proc.stderr
        return [line.split('\t') for line in self.calls_file.read_text().splitlines()]


def _ini(path):
    parser = configparser.RawConfigParser(interpolation=None, strict=False,
                                          default_section='\0')
    parser.optionxform = str
    parser.read(path)
    return parser


def _known_options():
    """A ConfigOpts holding every option of the generator's namespaces,
    plus keystoneauth's password plugin in the two auth sections."""
    conf = cfg.ConfigOpts()
    generator = (ROOT / 'etc' / 'climate' / 'climate-config-generator.conf').read_text()
    namespaces = [line.split('=', 1)[1].strip() for line in generator.splitlines()
                  if line.startswith('namespace')]
    for namespace in namespaces:
        (entry_point,) = importlib.metadata.entry_points(group='oslo.config.opts',
                                                          name=namespace)
        for group, opts in entry_point.load()():
            group = None if group in (None, 'DEFAULT') else group
            for opt in opts:
                try:
                    conf.register_opt(opt, group=group)
                except cfg.DuplicateOptError:
                    pass  # another namespace's option of the same name
    for group in ('keystone_authtoken', 'service_auth'):
        for opt in ks_loading.get_auth_plugin_conf_options('password'):
            try:
                conf.register_opt(opt, group=group)
            except cfg.DuplicateOptError:
                pass
    return conf


@pytest.fixture
def devstack(tmp_path):
    return Devstack(tmp_path, 'key,mysql,rabbit,n-api,n-sch,n-cpu,placement-api')


def test_stack_writes_a_valid_climate_conf(devstack):
    devstack.run(*STACK)
    written = _ini(devstack.conf_file)
    conf = _known_options()
    conf(args=[], project='climate', default_config_files=[str(devstack.conf_file)])
    for section in written.sections():
        group = None if section == 'DEFAULT' else section
        for option in written[section]:
            where = conf if group is None else conf[group]
            assert option in where, '[%s] %s is not an option' % (section, option)
            getattr(where, option)  # parses the value with the option's type
    assert conf.auth_strategy == 'keystone'
    assert conf.port == 1234
    assert conf.database.connection == 'sqlite:///%s' % devstack.db_file
    assert conf.manager.plugins == ['noop', 'physical.host.plugin',
                                    'virtual.instance.plugin']
    assert conf.hosts.inventory == 'nova'
    assert conf.keystone_authtoken.service_token_roles_required is True
    assert conf.service_auth.username == conf.keystone_authtoken.username == 'climate'
    assert conf.oslo_messaging_notifications.driver == ['messagingv2']


def test_stack_builds_the_schema_and_registers_climate(devstack):
    calls = devstack.run(*STACK)
    # climate-db-manage really ran: Climate's tables are in the database
    with sqlite3.connect(devstack.db_file) as db:
        tables = {row[0] for row in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        (version,) = db.execute('SELECT version_num FROM alembic_version').fetchone()
    assert {'leases', 'reservations', 'events'} <= tables
    assert version

    assert ['setup_develop', str(ROOT)] in calls
    assert ['create_service_user', 'climate', 'admin'] in calls
    assert ['get_or_add_user_project_role', 'service', 'climate', 'service',
            'Default', 'Default'] in calls
    assert ['get_or_create_service', 'climate', 'reservation',
            'Resource reservation'] in calls
    # under uwsgi behind Apache at /reservation, as devstack runs every API
    # and as Blazar's API tests expect
    assert ['get_or_create_endpoint', 'reservation', 'RegionOne',
            'http://127.0.0.1/reservation/v1'] in calls
    assert ['wait_for_service', '60',
            'http://127.0.0.1/reservation/healthcheck'] in calls
    uwsgi_conf = devstack.conf_file.parent / 'climate-api-uwsgi.ini'
    assert ['write_uwsgi_config', str(uwsgi_conf), 'climate.wsgi.api:application',
            '/reservation', '', 'climate-api'] in calls

    scripts = _console_scripts()
    processes = {call[1]: call[2] for call in calls if call[0] == 'run_process'}
    assert set(processes) == {'climate-api', 'climate-manager'}
    assert processes['climate-api'].split() == [
        '/usr/local/bin/uwsgi', '--procname-prefix', 'climate-api', '--ini',
        str(uwsgi_conf)]
    program, *args = processes['climate-manager'].split()
    assert program == str(BIN / 'climate-manager') and 'climate-manager' in scripts
    assert args == ['--config-file', str(devstack.conf_file)]


def test_without_uwsgi_the_api_serves_on_its_port(devstack):
    calls = devstack.run(*STACK, env_extra={'CLIMATE_USE_UWSGI': 'False'})
    assert ['get_or_create_endpoint', 'reservation', 'RegionOne',
            'http://127.0.0.1:1234/v1'] in calls
    assert ['wait_for_service', '60', 'http://127.0.0.1:1234/healthcheck'] in calls
    assert not [c for c in calls if c[0] == 'write_uwsgi_config']
    processes = {call[1]: call[2] for call in calls if call[0] == 'run_process'}
    assert processes['climate-api'].split() == [
        str(BIN / 'climate-api'), '--config-file', str(devstack.conf_file)]
    assert 'climate-api' in _console_scripts()


# What uwsgi does with the ini the plugin wrote: import the module it names
# with the environment it sets, then hand it requests as Apache's
# mod_proxy_uwsgi passes them (the proxied path as SCRIPT_NAME).
UWSGI_WORKER = r'''
import configparser, importlib, io, json, os, sys
ini = configparser.RawConfigParser(strict=False)
ini.read(sys.argv[1])
key, value = ini['uwsgi']['env'].split('=', 1)
os.environ[key] = value
module, name = ini['uwsgi']['module'].split(':')
application = getattr(importlib.import_module(module), name)
out = {}
for path in ('/healthcheck', '/', '/v1/leases'):
    environ = {'REQUEST_METHOD': 'GET', 'SCRIPT_NAME': '/reservation',
               'PATH_INFO': path, 'QUERY_STRING': '', 'SERVER_NAME': '127.0.0.1',
               'SERVER_PORT': '80', 'HTTP_HOST': '127.0.0.1',
               'SERVER_PROTOCOL': 'HTTP/1.1', 'wsgi.url_scheme': 'http',
               'wsgi.input': io.BytesIO(), 'wsgi.errors': sys.stderr,
               'wsgi.version': (1, 0), 'wsgi.multithread': True,
               'wsgi.multiprocess': True, 'wsgi.run_once': False}
    status = []
    body = b''.join(application(environ, lambda s, h, e=None: status.append(s)))
    out[path] = [status[0], body.decode()]
print(json.dumps(out))
'''


def test_the_uwsgi_app_serves_under_the_url_path(devstack):
    devstack.run(*STACK)
    uwsgi_conf = devstack.conf_file.parent / 'climate-api-uwsgi.ini'
    ini = _ini(uwsgi_conf)
    assert ini['uwsgi']['env'] == 'OS_CLIMATE_CONFIG_FILES=%s' % devstack.conf_file
    assert _ini(devstack.conf_file)['oslo_middleware'][
        'enable_proxy_headers_parsing'] == 'True'
    proc = subprocess.run([sys.executable, '-c', UWSGI_WORKER, str(uwsgi_conf)],
                          capture_output=True, text=True, timeout=120,
                          cwd=devstack.work)
    assert proc.returncode == 0, proc.stderr[-6000:]
    answers = json.loads(proc.stdout.splitlines()[-1])
    assert answers['/healthcheck'][0].startswith('200')
    # the version document links under the path Apache serves Climate at
    status, body = answers['/']
    assert status.startswith('300')
    (version,) = json.loads(body)['versions']
    assert version['links'][0]['href'] == 'http://127.0.0.1/reservation/v1/'
    # the API itself wants a Keystone token: the written [keystone_authtoken]
    # is in force
    assert answers['/v1/leases'][0].startswith(('401', '503'))


@pytest.mark.parametrize('before,available', [
    # nova.conf without the options: Nova's defaults, then ours
    ({}, ['nova.scheduler.filters.all_filters', 'climate_filter.ClimateFilter']),
    # another plugin's filter already there stays
    ({'available_filters': 'nova.scheduler.filters.all_filters\nother.OtherFilter',
      'enabled_filters': 'ComputeFilter,OtherFilter'},
     ['nova.scheduler.filters.all_filters', 'other.OtherFilter',
      'climate_filter.ClimateFilter']),
])
def test_nova_scheduler_gets_the_filter_once(devstack, before, available):
    nova_conf = devstack.work / 'nova.conf'
    seeded = configparser.RawConfigParser()
    seeded['filter_scheduler'] = before
    with open(nova_conf, 'w') as f:
        seeded.write(f)
    devstack.run(*STACK)
    devstack.run('stack post-config')  # a second stack.sh on the same machine
    nova = _ini(nova_conf)
    assert nova['filter_scheduler']['available_filters'].split() == available
    enabled = nova['filter_scheduler']['enabled_filters'].split(',')
    assert enabled.count('ClimateFilter') == 1
    assert 'ComputeFilter' in enabled  # Nova's own list is kept
    assert ('OtherFilter' in enabled) == bool(before)
    assert nova['climate']['aggregate_freepool_name'] == 'freepool'
    assert nova['climate']['freepool_accepts_unreserved'] == 'True'
    # nova-scheduler imports climate_filter from the directory the .pth names
    (path,) = (devstack.site_packages / 'climate_filter.pth').read_text().split()
    assert (Path(path) / 'climate_filter.py').is_file()


def test_without_nova_the_inventory_is_static(tmp_path):
    devstack = Devstack(tmp_path, 'key,mysql,rabbit')
    devstack.run(*STACK)
    assert _ini(devstack.conf_file)['hosts']['inventory'] == 'static'
    assert not (devstack.work / 'nova.conf').exists()
    assert not (devstack.site_packages / 'climate_filter.pth').exists()


def test_an_api_that_never_answers_stops_stack(devstack):
    stderr = devstack.run(*STACK, env_extra={'API_DOWN': '1'}, ok=False)
    assert ('climate-api did not answer at '
            'http://127.0.0.1/reservation/healthcheck') in stderr


def test_unstack_and_clean(devstack):
    devstack.run(*STACK)
    uwsgi_conf = devstack.conf_file.parent / 'climate-api-uwsgi.ini'
    assert uwsgi_conf.exists()
    calls = devstack.run('unstack', 'clean')
    assert ['stop_process', 'climate-api'] in calls
    assert ['stop_process', 'climate-manager'] in calls
    assert ['remove_uwsgi_config', str(uwsgi_conf), 'climate-api'] in calls
    assert not devstack.conf_file.parent.exists()
    assert not (devstack.site_packages / 'climate_filter.pth').exists()


def test_nothing_runs_when_climate_is_disabled(tmp_path):
    devstack = Devstack(tmp_path, 'key,mysql,rabbit,n-api')
    # settings enables both services; a local.conf may disable them again
    (tmp_path / 'driver.sh').write_text(DRIVER.replace(
        '\nfor phase', '\nENABLED_SERVICES=${ENABLED_SERVICES//,climate-*/}\nfor phase'))
    calls = devstack.run(*STACK)
    assert [c for c in calls if c[0] != 'define_plugin'] == []
    assert not devstack.conf_file.exists()


def _console_scripts():
    return {ep.name for ep in importlib.metadata.entry_points(group='console_scripts')
            if ep.value.startswith('climate.')}


def test_with_horizon_the_dashboard_is_installed_and_enabled(tmp_path):
    devstack = Devstack(tmp_path, 'key,mysql,rabbit,horizon')
    calls = devstack.run('stack install')
    assert ['setup_develop', str(ROOT), 'dashboard'] in calls
    enabled = tmp_path / 'opt' / 'horizon' / 'openstack_dashboard' / 'local' / 'enabled'
    ours = sorted(p.name for p in (ROOT / 'climate' / 'dashboard' / 'enabled').glob('_6*.py'))
    assert ours and sorted(p.name for p in enabled.iterdir()) == ours
    for name in ours:
        assert (enabled / name).resolve() == ROOT / 'climate' / 'dashboard' / 'enabled' / name
    devstack.run('clean')
    assert list(enabled.iterdir()) == []


def test_without_horizon_no_dashboard(tmp_path):
    devstack = Devstack(tmp_path, 'key,mysql,rabbit')
    calls = devstack.run('stack install')
    assert ['setup_develop', str(ROOT)] in calls
    assert not any(call[:1] == ['setup_develop'] and 'dashboard' in call for call in calls)
    assert not (tmp_path / 'opt' / 'horizon').exists()
