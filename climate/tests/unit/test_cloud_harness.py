"""The cloud harness's pure parts (tools/cloud_harness): settings, configuration files,
PID bookkeeping, fingerprints, purge planning and what ``json``/``env`` print.

The harness itself runs against a real cloud in the integration layer; these tests need
neither its venv nor a database.
"""

import ast
import json
import os
import shlex
import subprocess
import sys

import pytest

TOOLS = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir,
                                     os.pardir, 'tools'))
sys.path.insert(0, TOOLS)
try:
    from cloud_harness import cli
    from cloud_harness import configs
    from cloud_harness import database
    from cloud_harness import install
    from cloud_harness import pidfiles
    from cloud_harness import purge_plan
    from cloud_harness import services
    from cloud_harness import settings
finally:
    sys.path.remove(TOOLS)


def resolved(env=None, saved=None, cloud_dir='/state'):
    return settings.resolve(env or {}, saved or {}, cloud_dir)


# ---- settings

def test_the_environment_beats_the_saved_settings_which_beat_the_defaults():
    s = resolved({'COMPUTE_HOSTS': 'h1'}, {'COMPUTE_HOSTS': 'h2', 'FAKE_VCPUS': '8'})
    assert s.compute_hosts == ['h1']
    assert s['FAKE_VCPUS'] == '8'
    assert s['FAKE_RAM_MB'] == '131072'


def test_an_empty_value_means_the_default_but_for_the_vhost():
    s = resolved({'SERVICES': '', 'RABBIT_VHOST': ''}, {'SERVICES': 'keystone'})
    assert s.services == list(settings.ALL_SERVICES)
    assert s['RABBIT_VHOST'] == ''
    assert s.rabbit_url() == 'rabbit://guest:guest@127.0.0.1:5672/'


def test_a_port_offset_gives_ports_databases_and_vhost_of_its_own():
    s = resolved({'PORT_OFFSET': '100'})
    assert s.ports['keystone'] == 5100 and s.ports['nova'] == 8874
    assert s.auth_url == 'http://127.0.0.1:5100/v3'
    assert s['DB_PREFIX'] == 'cc100_'
    assert s['RABBIT_VHOST'] == 'climate_cloud_100'
    assert s.climate_api_port == 1334
    assert s.climate_db == 'climate_it_100'
    first = resolved()
    assert (first['DB_PREFIX'], first['RABBIT_VHOST'], first.climate_db) == (
        'cc_', 'climate_cloud', 'climate_it')


def test_saved_settings_read_back_as_they_were():
    s = resolved({'PORT_OFFSET': '7', 'DB_PASSWORD': 'a=b', 'RABBIT_VHOST': ''})
    saved = settings.parse_saved(s.saved_text() + 'NOT_A_KNOB=1\n')
    assert 'NOT_A_KNOB' not in saved
    again = resolved({}, saved)
    assert again.knobs == s.knobs


def test_load_reads_the_settings_file_of_the_cloud_dir(tmp_path):
    (tmp_path / 'settings.env').write_text('COMPUTE_HOSTS=a b\n')
    s = settings.load({'CLIMATE_CLOUD_DIR': str(tmp_path)})
    assert s.compute_hosts == ['a', 'b']
    assert s.venv == str(tmp_path / 'venv')
    assert settings.load({'HOME': '/home/x'}).cloud_dir == '/home/x/.cache/climate-cloud'


def test_database_urls_by_tcp_and_by_socket():
    s = resolved({'DB_PASSWORD': 'pw', 'PORT_OFFSET': '3'})
    assert s.db_url('nova') == 'mysql+pymysql://root:pw@127.0.0.1:3306/cc3_nova?charset=utf8'
    sock = resolved({'DB_SOCKET': '/run/my.sock'})
    assert sock.db_url('nova') == ('mysql+pymysql://root@localhost/cc_nova'
                                   '?unix_socket=/run/my.sock&charset=utf8')
    assert cli.db_url_parts(sock) == ('mysql+pymysql://root@localhost/',
                                      'cc_?unix_socket=/run/my.sock&charset=utf8')


def test_databases_follow_the_services():
    assert resolved({'SERVICES': 'keystone nova'}).databases() == [
        'keystone', 'nova_api', 'nova', 'nova_cell0']


# ---- configuration files

def test_extra_nova_filters_are_made_available_and_enabled():
    s = resolved({'NOVA_EXTRA_FILTERS': 'climate_filter.ClimateFilter,a.b.C',
                  'NOVA_ENABLED_FILTERS': 'ComputeFilter'})
    files, _, _ = configs.render(s)
    assert files['/state/etc/nova/scheduler.conf'] == (
        '[filter_scheduler]\n'
        'available_filters = nova.scheduler.filters.all_filters\n'
        'available_filters = climate_filter.ClimateFilter\n'
        'available_filters = a.b.C\n'
        'enabled_filters = ComputeFilter,ClimateFilter,C\n')


def test_one_cinder_back_end_per_pool_size():
    s = resolved({'CINDER_BACKENDS_GB': '100 infinite',
                  'CINDER_EXTRA_FILTERS': 'ClimateCinderFilter'})
    conf = configs.render(s)[0]['/state/etc/cinder/cinder.conf']
    assert 'enabled_backends = fake1,fake2\n' in conf
    assert ('[fake2]\nvolume_driver = cinder.volume.drivers.climate_cloud_fake.Driver\n'
            'volume_backend_name = fake2\nfake_total_capacity_gb = infinite\n') in conf
    assert ('scheduler_default_filters = AvailabilityZoneFilter,CapacityFilter,'
            'CapabilitiesFilter,ClimateCinderFilter\n') in conf


def test_settings_no_configuration_can_be_made_from_are_refused():
    with pytest.raises(configs.ConfigError, match='CINDER_BACKENDS_GB'):
        configs.render(resolved({'CINDER_BACKENDS_GB': ' '}))
    with pytest.raises(configs.ConfigError, match="unknown service 'swift'"):
        configs.render(resolved({'SERVICES': 'keystone swift'}))


def test_heat_loads_plugin_dirs_only_when_given():
    def heat_conf(env):
        return configs.render(resolved(env))[0]['/state/etc/heat/heat.conf']
    assert 'plugin_dirs' not in heat_conf({})
    assert 'deferred_auth_method = trusts\nplugin_dirs = /p\n[heat_api]\n' in heat_conf(
        {'HEAT_PLUGIN_DIRS': '/p'})


def test_each_compute_host_has_its_own_file_and_state():
    files, _, directories = configs.render(resolved({'COMPUTE_HOSTS': 'c1 c2'}))
    assert files['/state/etc/nova/compute-c2.conf'] == (
        '[DEFAULT]\nhost = c2\nstate_path = /state/data/nova/c2\n')
    assert '/state/data/nova/c1' in directories


def test_the_wsgi_modules_keep_gunicorns_arguments_from_the_app():
    text = configs.wsgi_module('cinder', 'cinder.wsgi.api', '--config-file', '/e/c.conf')
    tree = ast.parse(text)
    argv = next(node.value for node in tree.body if isinstance(node, ast.Assign)
                and ast.unparse(node.targets[0]) == 'sys.argv')
    assert ast.literal_eval(argv) == ['cinder', '--config-file', '/e/c.conf']
    assert ast.unparse(tree.body[-1]) == 'from cinder.wsgi.api import application'


# ---- processes

def test_a_stat_line_is_read_past_a_command_name_with_blanks_and_parentheses():
    fields = ' '.join(str(n) for n in range(4, 53))
    state, session, start, rss = pidfiles.parse_stat(f'42 (a ) b) S {fields}')
    # field 6 is the session, 22 the start time, 24 the RSS (3 is the state)
    assert (session, start, rss) == (6, '22', 24)


def test_a_recorded_pid_is_ours_only_with_its_start_time(tmp_path):
    run = str(tmp_path)
    me = os.getpid()
    pidfiles.write_record(run, 'svc', me, pidfiles.starttime(me))
    assert pidfiles.pid_of(run, 'svc') == me
    pidfiles.write_record(run, 'svc', me, '1')  # a recycled PID: another process
    assert pidfiles.pid_of(run, 'svc') is None
    assert pidfiles.pid_of(run, 'missing') is None
    (tmp_path / 'junk.pid').write_text('not a record')
    assert pidfiles.pid_of(run, 'junk') is None
    assert pidfiles.recorded_names(run) == ['junk', 'svc']


def test_a_zombie_is_not_alive():
    assert pidfiles.matches((1, '99'), ('S', 1, '99', 0))
    assert not pidfiles.matches((1, '99'), ('Z', 1, '99', 0))


def test_stop_ends_the_recorded_process_group_and_forgets_it(tmp_path):
    s = resolved(cloud_dir=str(tmp_path))
    os.makedirs(s.run)
    child = subprocess.Popen(['sleep', '30'], start_new_session=True)
    try:
        pidfiles.write_record(s.run, 'sleeper', child.pid, pidfiles.starttime(child.pid))
        cli.processes.stop(s, ['sleeper'])
        # ended and reaped (stop collects its own children: no zombie left)
        assert pidfiles.read_stat(child.pid) is None
        assert pidfiles.recorded_names(s.run) == []
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_a_failure_shows_the_log_of_the_latest_start_only(tmp_path):
    lines = [pidfiles.start_line('d1', 'cmd'), 'old\n', pidfiles.start_line('d2', 'cmd'),
             'new 1\n', 'new 2\n']
    assert pidfiles.this_start(lines) == lines[2:]
    assert pidfiles.this_start(lines, 1) == ['new 2\n']
    (tmp_path / 'svc.log').write_text(''.join(lines))
    tail = pidfiles.log_tail(str(tmp_path), 'svc')
    assert 'new 2\n---\n' in tail and 'old' not in tail
    assert pidfiles.log_tail(str(tmp_path), 'none') == ''


def test_the_processes_of_a_configuration(tmp_path):
    s = resolved({'SERVICES': 'keystone nova', 'COMPUTE_HOSTS': 'c1',
                  'NOVA_FILTER_PATH': f'{tmp_path}:/does/not/exist'})
    by_name = {svc.name: svc for svc in services.define(s)}
    assert list(by_name) == ['keystone', 'nova-api', 'nova-conductor', 'nova-scheduler',
                             'nova-compute-c1']
    assert by_name['keystone'].port == 5000 and by_name['nova-conductor'].port is None
    assert by_name['nova-api'].command[-1] == 'nova_wsgi:application'
    assert by_name['nova-scheduler'].files[-1] == str(tmp_path)
    assert f'PYTHONPATH={tmp_path}:/does/not/exist' in by_name['nova-scheduler'].command


def test_a_fingerprint_covers_the_command_and_the_configuration(tmp_path):
    conf = tmp_path / 'a.conf'
    conf.write_text('x = 1\n')
    (tmp_path / 'notes.txt').write_text('not configuration')
    svc = services.Service('svc', None, [str(tmp_path)], ['prog', '--opt'])
    # the command's words one a line, then the files' bytes (the digest "up" always used)
    assert services.fingerprint_input(svc.files, svc.command) == b'prog\n--opt\nx = 1\n'
    first = services.fingerprint(svc)
    (tmp_path / 'notes.txt').write_text('changed')
    assert services.fingerprint(svc) == first
    conf.write_text('x = 2\n')
    assert services.fingerprint(svc) != first
    svc.command.append('--more')
    assert services.fingerprint(svc) != first


# ---- install and schemas

def test_the_venv_stamp_changes_with_the_constraints():
    with open(install.CONSTRAINTS) as f:
        text = f.read()
    assert 'nova==' in text and install.stamp_of(text) != install.stamp_of(text + 'x==1\n')


def test_oslo_messaging_polls_replies_every_10_ms():
    text = 'a\n                time.sleep(0.5)\nb\n    time.sleep(0.5)\n'
    patched = install.patched_amqpdriver(text)
    assert patched == ('a\n                time.sleep(0.01)  # cloud-harness (was 0.5)\n'
                       'b\n    time.sleep(0.5)\n')
    assert install.patched_amqpdriver(patched) == patched


def test_the_schemas_depend_on_the_services_versions_only():
    s = resolved()
    freeze = 'nova==33.0.2\nrequests==2.32.5\n'
    same = database.schema_fingerprint(s, freeze)
    assert database.schema_fingerprint(s, freeze.replace('requests==2.32.5', 'requests==3')) \
        == same
    assert database.schema_fingerprint(s, freeze.replace('33.0.2', '33.0.3')) != same
    assert database.schema_fingerprint(resolved({'SERVICES': 'keystone'}), freeze) != same


def test_sql_quoting():
    assert database.quote_name('a`b') == '`a``b`'
    assert database.quote_string("/tmp/it's") == "'/tmp/it''s'"


# ---- purge planning

def test_purge_keeps_what_up_made():
    assert purge_plan.extra_flavors([{'name': 'm1.tiny'}, {'name': 'big'}]) == [{'name': 'big'}]
    assert purge_plan.missing_flavors([{'name': 'm1.tiny'}]) == [
        ('m1.small', (2048, 1, 20)), ('m1.medium', (4096, 2, 40))]
    assert purge_plan.extra_images([{'name': 'fake-image'}, {'name': 'snap'}]) == [
        {'name': 'snap'}]
    assert purge_plan.extra_volume_types([{'name': '__DEFAULT__'}, {'name': 'gold'}]) == [
        {'name': 'gold'}]
    assert purge_plan.extra_networks([{'name': 'public'}, {'name': 'net1'}]) == [
        {'name': 'net1'}]


def test_purge_summary_names_in_one_order():
    # the purge's branches finish in any order; what it prints does not
    assert purge_plan.summary({'trusts': 1, 'servers': 2, 'stacks': 0, 'later': 3}) == \
        'purged stacks=0 servers=2 trusts=1 later=3'


def test_purge_empties_climates_children_only():
    providers = [{'name': 'climate-c1', 'parent_provider_uuid': 'p'},
                 {'name': 'climate-top', 'parent_provider_uuid': None},
                 {'name': 'c1', 'parent_provider_uuid': None}]
    assert purge_plan.climate_children(providers) == providers[:1]
    assert purge_plan.emptying({'VCPU': {}}, []) == (True, False)
    assert purge_plan.reservation_classes(
        [{'name': 'VCPU'}, {'name': 'CUSTOM_RESERVATION_AB'}]) == ['CUSTOM_RESERVATION_AB']
    assert purge_plan.router_interfaces(
        [{'device_owner': 'network:router_gateway'},
         {'device_owner': 'network:router_interface', 'id': 'i'}]) == [
        {'device_owner': 'network:router_interface', 'id': 'i'}]


def test_the_public_pool_is_the_first_half_of_the_cidr():
    assert purge_plan.public_subnet('203.0.113.0/24') == (
        '203.0.113.1', '203.0.113.2', '203.0.113.127')


def test_a_service_is_fresh_by_a_heartbeat_after_its_start():
    service = {'state': 'up', 'updated_at': '2026-01-01T00:00:10.000000'}
    epoch = 1767225600  # 2026-01-01T00:00:00Z
    assert purge_plan.fresh(service, epoch)
    assert purge_plan.fresh(service, epoch + 11)
    assert not purge_plan.fresh(service, epoch + 12)
    assert not purge_plan.fresh(service, None)
    assert not purge_plan.fresh(dict(service, state='down'), epoch)


# ---- what callers read

def test_json_describes_the_cloud_for_the_test_fixtures():
    info = json.loads(json.dumps(cli.description(resolved({'PORT_OFFSET': '100'}))))
    assert info['urls']['nova'] == 'http://127.0.0.1:8874/v2.1'
    assert info['ports']['heat'] == 8104
    assert info['db_url_prefix'] == 'mysql+pymysql://root@127.0.0.1:3306/'
    assert info['db_url_query'] == 'cc100_?charset=utf8'
    assert info['climate'] == {'port': 1334, 'database': 'climate_it_100',
                               'url': 'http://127.0.0.1:1334/v1',
                               'service_type': 'reservation'}
    assert info['users']['reader'] == {
        'username': 'reader', 'password': 'reader', 'project_name': 'demo',
        'user_domain_name': 'Default', 'project_domain_name': 'Default'}
    assert set(info) == {'cloud_dir', 'bin', 'auth_url', 'region', 'rabbit_url',
                         'db_url_prefix', 'db_url_query', 'db_prefix', 'services',
                         'compute_hosts', 'image', 'flavors', 'ports', 'urls', 'climate',
                         'users'}


def test_env_lines_read_back_in_a_shell():
    s = resolved({'ADMIN_PASSWORD': "it's $x"})
    values = dict(shlex.split(line)[0].split('=', 1) for line in cli.env_text(s).splitlines())
    assert values['CLOUD_ADMIN_PASSWORD'] == "it's $x"
    assert values['CLOUD_COMPUTE_HOSTS'] == 'compute1 compute2 compute3'
    assert values['CLOUD_KEYSTONE_PORT'] == '5000'


def test_the_cloud_api_environment_keeps_its_names():
    env = cli.api_environment(resolved({'CINDER_BACKENDS_GB': '1 2'}))
    assert env['CC_CINDER_BACKENDS'] == 'fake1 fake2 '
    assert env['CC_NOVA_MANAGE'].split('\t')[1:] == ['--config-file',
                                                     '/state/etc/nova/nova.conf']
    assert env['CC_HEAT_URL'] == 'http://127.0.0.1:8004/v1/%(project_id)s'


def test_openrc_of_an_unknown_user_fails():
    assert 'export OS_USERNAME=alt\n' in cli.openrc_text(resolved(), 'alt')
    with pytest.raises(SystemExit):
        cli.openrc_text(resolved(), 'nobody')


class _Answer:
    def __init__(self, status, body):
        self.status_code, self._body = status, body
        self.headers, self.text = {}, json.dumps(body)

    def json(self):
        return self._body


class _NetworkAPI:
    """Neutron as ``public_network`` sees it: answers in order."""

    def __init__(self, answers):
        self.answers, self.calls = list(answers), []

    def _next(self, method, path, **kw):
        self.calls.append((method, path))
        answer = self.answers.pop(0)
        assert answer[0] == (method, path), (answer[0], method, path)
        return _Answer(*answer[1])

    def get(self, path, **kw):
        return self._next('GET', path, **kw)

    def post(self, path, **kw):
        return self._next('POST', path, **kw)


@pytest.fixture
def cloud_api(monkeypatch, tmp_path):
    for name, value in (('CC_AUTH_URL', 'http://127.0.0.1:5000/v3'), ('CC_REGION', 'R'),
                        ('CC_SERVICES', 'neutron'), ('CC_COMPUTE_HOSTS', ''),
                        ('CC_RUN', str(tmp_path)), ('CC_LOGS', str(tmp_path))):
        monkeypatch.setenv(name, value)
    sys.path.insert(0, TOOLS)
    try:
        from cloud_harness import cloud_api as module
    finally:
        sys.path.remove(TOOLS)
    monkeypatch.setattr(module.time, 'sleep', lambda s: None)
    monkeypatch.setattr(module.pidfiles, 'alive', lambda run, name: True)
    return module


def test_a_public_network_a_listing_missed_is_read_again(cloud_api, monkeypatch):
    net = {'id': 'n1', 'name': 'public'}
    fake = _NetworkAPI([
        (('GET', '/v2.0/networks'), (200, {'networks': []})),
        # the flat physical network is in use: the network exists
        (('POST', '/v2.0/networks'), (409, {'NeutronError': {'type': 'FlatNetworkInUse'}})),
        (('GET', '/v2.0/networks'), (200, {'networks': []})),
        (('GET', '/v2.0/networks'), (200, {'networks': [net]})),
        (('GET', '/v2.0/subnets'), (200, {'subnets': [{'id': 's1'}]}))])
    monkeypatch.setattr(cloud_api, 'api', lambda sess, kind: fake)
    cloud_api.public_network(None)
    assert fake.answers == []
    assert fake.calls.count(('POST', '/v2.0/networks')) == 1


def test_another_refused_public_network_fails(cloud_api, monkeypatch):
    fake = _NetworkAPI([
        (('GET', '/v2.0/networks'), (200, {'networks': []})),
        (('POST', '/v2.0/networks'), (400, {'NeutronError': {'message': 'bad'}}))])
    monkeypatch.setattr(cloud_api, 'api', lambda sess, kind: fake)
    with pytest.raises(cloud_api.ks_exc.BadRequest):
        cloud_api.public_network(None)
