"""The ``heat`` stack backend against a scripted Heat (and scripted Nova
and Neutron service clients): flavors, validation, an idempotent start
and each end action."""

import contextlib
import datetime
import json
import types

from heatclient import exc as heat_exc
from keystoneauth1 import exceptions as ks_exc
from novaclient import exceptions as nova_exc
from oslo_config import cfg
import pytest

from climate.clients import heat as heat_clients
from climate.clients import keystone
from climate.clients import neutron as neutron_clients
from climate.clients import nova as nova_clients
from climate.conf import clients as clients_conf
from climate import exceptions
from climate.plugins.virtual_stack.backends import heat as heat_backend
from climate.plugins.virtual_stack import plugin as stack_plugin
from climate.plugins import values

TEMPLATE = {
    'heat_template_version': '2018-08-31',
    'resources': {
        'app': {'type': 'OS::Nova::Server',
                'properties': {'flavor': 'm1.small', 'image': 'cirros'}},
        'ip': {'type': 'OS::Neutron::FloatingIP',
               'properties': {'floating_network': 'public'}},
    },
}
NEEDS = [
    {'resource_type': 'virtual:floatingip', 'network_id': 'public',
     'amount': 1, 'resources': ['ip'], 'reservation_id': 'r-fip'},
    {'resource_type': 'virtual:instance', 'amount': 1, 'vcpus': 1,
     'memory_mb': 2048, 'disk_gb': 20, 'affinity': None,
     'resources': ['app'], 'reservation_id': 'r-app'},
]
PARTS = [
    {'id': 'r-app', 'resource_type': 'virtual:instance', 'status': 'active',
     'flavor_id': 'r-app', 'server_group_id': None, 'affinity': None},
    {'id': 'r-fip', 'resource_type': 'virtual:floatingip',
     'status': 'active', 'network_id': 'public',
     'floatingips': ['172.24.4.10']},
]
PINNED = {
    'heat_template_version': '2018-08-31',
    'resources': {
        'app': {'type': 'OS::Nova::Server',
                'properties': {'flavor': 'r-app', 'image': 'cirros'}},
        'ip': {'type': 'OS::Neutron::FloatingIP',
               'external_id': 'fip-uuid'},
    },
}
OUTPUTS = [{'output_key': 'ip', 'output_value': '172.24.4.10',
            'description': 'the address'}]
TAGS = ['climate', 'reservation:r1']
HELD = TAGS + ['climate:held']
#: The group ``web`` of two servers of the need ``r-web``.
WEB_NEED = {'resource_type': 'virtual:instance', 'amount': 2, 'vcpus': 1,
            'memory_mb': 512, 'disk_gb': 1, 'affinity': None,
            'resources': ['web/resource_def'], 'reservation_id': 'r-web'}
HOST1 = {'hypervisor_hostname': 'compute1', 'service_name': 'compute1'}
HOST2 = {'hypervisor_hostname': 'compute2', 'service_name': 'compute2'}


def _links(stack_id):
    return [{'rel': 'self', 'href': 'http://heat/v1/p1/stacks/x/%s/r' %
             stack_id},
            {'rel': 'stack', 'href': 'http://heat/v1/p1/stacks/x/%s' %
             stack_id}]


#: Heat's resource list of stack s-1 (nested_depth): the server ``app``,
#: the group ``web`` (nested stack n-1) of two servers, a floating IP.
LISTED = [
    {'resource_name': 'web', 'resource_type': 'OS::Heat::ResourceGroup',
     'physical_resource_id': 'n-1', 'links': _links('s-1')},
    {'resource_name': 'app', 'resource_type': 'OS::Nova::Server',
     'physical_resource_id': 'srv-a', 'links': _links('s-1')},
    {'resource_name': 'ip', 'resource_type': 'OS::Neutron::FloatingIP',
     'physical_resource_id': 'fip-1', 'links': _links('s-1')},
    {'resource_name': '1', 'resource_type': 'OS::Nova::Server',
     'physical_resource_id': 'srv-c', 'parent_resource': 'web',
     'links': _links('n-1')},
    {'resource_name': '0', 'resource_type': 'OS::Nova::Server',
     'physical_resource_id': 'srv-b', 'parent_resource': 'web',
     'links': _links('n-1')},
]


class FakeInstances:
    """The instance backend's steps on servers, recorded."""

    def __init__(self):
        self.calls = []
        self.fail = None
        self.servers = self

    def hold(self, res):
        self.calls.append(('hold', res['id'], res['server_id']))
        return {'server_status': 'SHELVING', 'server_error': None}

    def wake(self, res, project_id, host, user_session, move_running=False):
        assert move_running and project_id == 'p1'
        self.calls.append(('wake', res['id'], res['server_id'],
                           host['hypervisor_hostname']))
        return {'server_status': 'ACTIVE', 'server_error': None,
                'aggregate_id': 7}

    def release(self, res):
        self.calls.append(('release', res['id'], res['on_end']))
        return {'server_status': 'ACTIVE', 'snapshot_id': None}

    def snapshot(self, res, owner=None):
        if self.fail is not None:
            raise self.fail
        assert owner == 'p1'    # the lease's project's
        self.calls.append(('snapshot', res['id'], res['server_id']))
        return 'img-' + res['server_id']


def reservation(**extra):
    return dict({'id': 'r1', 'stack_name': 'web', 'template': TEMPLATE,
                 'parameters': {'key': 'k'}, 'environment': {},
                 'needs': NEEDS, 'on_end': 'delete',
                 'project_id': 'p1'}, **extra)


def stack(status, reason='', tags=TAGS, name='web', sid='s-1'):
    return {'id': sid, 'stack_name': name, 'stack_status': status,
            'stack_status_reason': reason, 'tags': list(tags),
            'outputs': OUTPUTS}


def not_found():
    return heat_exc.HTTPNotFound(json.dumps(
        {'error': {'message': 'The Stack could not be found.'}}).encode())


class Resource:
    """A client resource: its answer behind ``to_dict``."""

    def __init__(self, info):
        self.info = dict(info)

    def to_dict(self):
        return dict(self.info)


class ScriptedHeat:
    """Heat with one stack (or none).  Every ``stacks.get`` first takes
    the next step of ``script`` (a status, ``(status, reason)``, or None:
    the stack is gone), then answers; an action sets the script to what
    ``after[action]`` says."""

    def __init__(self, current=None, script=(), **after):
        self.current = current
        self.script = list(script)
        self.after = {'create': ['CREATE_IN_PROGRESS', 'CREATE_COMPLETE'],
                      'delete': ['DELETE_IN_PROGRESS', 'DELETE_COMPLETE'],
                      'suspend': ['SUSPEND_IN_PROGRESS', 'SUSPEND_COMPLETE'],
                      'update': ['UPDATE_IN_PROGRESS', 'UPDATE_COMPLETE']}
        self.after.update(after)
        self.calls = []
        self.validate_error = None
        self.update_error = None
        #: what ``events.list`` answers (Heat's event dicts)
        self.events_listed = []
        self.events = types.SimpleNamespace(list=self.event_list)
        #: what ``resources.list`` answers (Heat's resource dicts)
        self.listed = []
        self.stacks = self
        self.actions = types.SimpleNamespace(suspend=self.suspend)
        self.resources = types.SimpleNamespace(list=self.resource_list)

    def _step(self):
        if not self.script:
            return
        step = self.script.pop(0)
        if step is None:
            self.current = None
            return
        status, reason = step if isinstance(step, tuple) else (step, '')
        self.current = dict(self.current, stack_status=status,
                            stack_status_reason=reason)

    def _known(self, ident):
        cur = self.current
        return cur is not None and ident in (
            cur['stack_name'], cur['id'],
            '%s/%s' % (cur['stack_name'], cur['id']))

    # -- stacks ------------------------------------------------------------

    def get(self, ident, resolve_outputs=True):
        self.calls.append(('get', ident))
        self._step()
        if not self._known(ident):
            raise not_found()
        info = dict(self.current)
        if not resolve_outputs:
            info.pop('outputs')
        return Resource(info)

    def create(self, **fields):
        self.calls.append(('create', fields))
        self.current = stack('CREATE_IN_PROGRESS', sid='s-2',
                             name=fields['stack_name'],
                             tags=fields['tags'].split(','))
        self.script = list(self.after['create'])
        return {'stack': {'id': 's-2', 'links': []}}

    def delete(self, ident):
        self.calls.append(('delete', ident))
        if not self._known(ident):
            raise not_found()
        self.script = list(self.after['delete'])

    def suspend(self, ident):
        self.calls.append(('suspend', ident))
        self.script = list(self.after['suspend'])

    def update(self, ident, **fields):
        self.calls.append(('update', ident, fields))
        if self.update_error is not None:
            raise self.update_error
        self.script = list(self.after['update'])

    def event_list(self, ident, **query):
        self.calls.append(('events', ident, query))
        return [Resource(e) for e in self.events_listed]

    def validate(self, **fields):
        self.calls.append(('validate', fields))
        if self.validate_error is not None:
            raise self.validate_error
        return {'Parameters': {}}

    def resource_list(self, ident, nested_depth=0):
        self.calls.append(('resources', ident, nested_depth))
        return [Resource(r) for r in self.listed]

    def made(self, kind):
        return [call for call in self.calls if call[0] == kind]


class FakeNeutron:
    def __init__(self):
        self.queries = []

    def floatingips(self, **filters):
        self.queries.append(filters)
        if filters.get('floating_ip_address') != '172.24.4.10':
            return []
        return [{'id': 'fip-other', 'project_id': 'p9', 'tags': []},
                {'id': 'fip-uuid', 'project_id': 'p1',
                 'tags': ['climate', 'reservation:r-fip']}]


@pytest.fixture
def cloud(monkeypatch):
    """``make(heat)``: the backend talking to ``heat``; the test reads
    what it was asked through the returned namespace."""
    monkeypatch.setattr(heat_backend, 'POLL_INTERVAL', 0)
    seen = types.SimpleNamespace(sessions=[], service_projects=[],
                                 neutron=FakeNeutron())

    def make(heat):
        def client(sess, conf=None, endpoint_override=None):
            seen.sessions.append(sess)
            return heat

        def service_client(conf=None, project_id=None):
            seen.service_projects.append(project_id)
            return heat

        monkeypatch.setattr(heat_clients, 'client', client)
        monkeypatch.setattr(heat_clients, 'service_client', service_client)
        monkeypatch.setattr(neutron_clients, 'service_client',
                            lambda conf=None: seen.neutron)
        conf = types.SimpleNamespace(
            stacks=types.SimpleNamespace(stack_timeout=1))
        seen.backend = heat_backend.HeatStackBackend(conf)
        seen.instances = seen.backend._instances = FakeInstances()
        seen.heat = heat
        return seen
    return make


def start(seen, **extra):
    return seen.backend.start(reservation(**extra), 'p1', PARTS,
                              lambda: 'user-session')


# -- flavors --------------------------------------------------------------

def test_flavors_are_every_nova_flavor_with_ephemeral_disk(monkeypatch):
    asked = []

    class Flavors:
        def list(self, **kwargs):
            asked.append(kwargs)
            return [Resource({'id': '1', 'name': 'm1.tiny', 'vcpus': 1,
                              'ram': 512, 'disk': 1,
                              'OS-FLV-EXT-DATA:ephemeral': 0,
                              'os-flavor-access:is_public': True}),
                    Resource({'id': 'e', 'name': 'm1.eph', 'vcpus': 2,
                              'ram': 1024, 'disk': 10,
                              'OS-FLV-EXT-DATA:ephemeral': 5,
                              'os-flavor-access:is_public': False}),
                    Resource({'id': 'x', 'name': 'm1.tiny', 'vcpus': 8,
                              'ram': 1, 'disk': 1,
                              'os-flavor-access:is_public': False})]

    monkeypatch.setattr(nova_clients, 'service_client', lambda conf=None:
                        types.SimpleNamespace(flavors=Flavors()))
    backend = heat_backend.HeatStackBackend(None)
    assert backend.flavors() == {
        'm1.tiny': {'id': '1', 'vcpus': 1, 'ram': 512, 'disk': 1},
        'm1.eph': {'id': 'e', 'vcpus': 2, 'ram': 1024, 'disk': 15}}
    assert asked == [{'is_public': None}]


def test_a_nova_failure_listing_flavors_names_nova(monkeypatch):
    class Flavors:
        def list(self, **kwargs):
            raise nova_exc.ClientException(500, 'boom')

    monkeypatch.setattr(nova_clients, 'service_client', lambda conf=None:
                        types.SimpleNamespace(flavors=Flavors()))
    with pytest.raises(exceptions.CloudUnavailable, match='^Nova is '
                       'unavailable: listing flavors'):
        heat_backend.HeatStackBackend(None).flavors()


# -- validate -------------------------------------------------------------

def validate(seen):
    seen.backend.validate(TEMPLATE, {'key': 'k'}, {'parameters': {}},
                          lambda: 'user-session')


def test_validate_asks_heat_as_the_user(cloud):
    seen = cloud(ScriptedHeat())
    validate(seen)
    assert seen.sessions == ['user-session']
    assert seen.heat.calls == [('validate', {
        'template': TEMPLATE, 'parameters': {'key': 'k'},
        'environment': {'parameters': {}}})]


def test_heat_refusing_the_template_is_the_callers_400(cloud):
    seen = cloud(ScriptedHeat())
    seen.heat.validate_error = heat_exc.HTTPBadRequest(json.dumps({
        'code': 400, 'title': 'Bad Request',
        'error': {'type': 'StackValidationFailed',
                  'message': 'Property error: app.properties.image: '
                             'Error validating value \'nope\''}}).encode())
    with pytest.raises(exceptions.InvalidInput) as caught:
        validate(seen)
    assert caught.value.kwargs['reason'] == (
        'Heat refused the template: Property error: '
        'app.properties.image: Error validating value \'nope\'')
    assert caught.value.code == 400


def test_a_400_whose_body_is_not_json_keeps_its_text(cloud):
    seen = cloud(ScriptedHeat())
    seen.heat.validate_error = heat_exc.HTTPBadRequest(b'bad template')
    with pytest.raises(exceptions.InvalidInput,
                       match='Heat refused the template: bad template'):
        validate(seen)


@pytest.mark.parametrize('error', [
    heat_exc.HTTPInternalServerError(b'{"error": {"message": "db"}}'),
    heat_exc.HTTPForbidden(b'{"error": {"message": "policy"}}'),
    ks_exc.ConnectFailure('no route to host'),
])
def test_other_heat_errors_are_heat_unavailable(cloud, error):
    seen = cloud(ScriptedHeat())
    seen.heat.validate_error = error
    with pytest.raises(exceptions.CloudUnavailable,
                       match='^Heat is unavailable: validating the '
                             'template: '):
        validate(seen)


# -- start ----------------------------------------------------------------

def test_start_creates_the_pinned_stack_once_as_the_user(cloud):
    seen = cloud(ScriptedHeat())
    answer = start(seen)
    [(_kind, fields)] = seen.heat.made('create')
    assert fields == {'stack_name': 'web', 'template': PINNED,
                      'parameters': {'key': 'k'}, 'environment': {},
                      'timeout_mins': 1, 'tags': 'climate,reservation:r1',
                      'disable_rollback': True}
    assert seen.sessions == ['user-session']
    assert seen.neutron.queries == [
        {'floating_ip_address': '172.24.4.10'}]
    assert answer == {'stack_id': 's-2', 'stack_status': 'CREATE_COMPLETE',
                      'stack_status_reason': '', 'outputs': OUTPUTS}
    # the reservation's own template is left as it was stored
    assert reservation()['template'] is TEMPLATE
    assert TEMPLATE['resources']['app']['properties']['flavor'] == \
        'm1.small'


def test_start_finds_a_complete_stack_and_makes_nothing(cloud):
    seen = cloud(ScriptedHeat(stack('CREATE_COMPLETE')))
    answer = start(seen)
    assert seen.heat.made('create') == []
    assert seen.heat.made('delete') == []
    assert answer['stack_id'] == 's-1'
    assert answer['stack_status'] == 'CREATE_COMPLETE'
    assert answer['outputs'] == OUTPUTS


def test_start_waits_for_a_create_in_progress(cloud):
    seen = cloud(ScriptedHeat(stack('CREATE_IN_PROGRESS'), script=[
        'CREATE_IN_PROGRESS', 'CREATE_IN_PROGRESS', 'CREATE_COMPLETE']))
    assert start(seen)['stack_status'] == 'CREATE_COMPLETE'
    assert seen.heat.made('create') == []


def test_start_replaces_a_failed_stack(cloud):
    seen = cloud(ScriptedHeat(stack('CREATE_FAILED', 'quota')))
    answer = start(seen)
    kinds = [call[0] for call in seen.heat.calls
             if call[0] in ('delete', 'create')]
    assert kinds == ['delete', 'create']
    assert seen.heat.made('delete') == [('delete', 'web/s-1')]
    assert answer['stack_id'] == 's-2'
    assert answer['stack_status'] == 'CREATE_COMPLETE'


def test_a_failing_create_is_heat_unavailable_with_heats_reason(cloud):
    seen = cloud(ScriptedHeat(create=[
        'CREATE_IN_PROGRESS',
        ('CREATE_FAILED', 'Resource CREATE failed: No valid host')]))
    with pytest.raises(exceptions.CloudUnavailable) as caught:
        start(seen)
    assert str(caught.value) == (
        'Heat is unavailable: stack web CREATE_FAILED: Resource CREATE '
        'failed: No valid host')
    # the retry finds it failed and replaces it
    seen.heat.after['create'] = ['CREATE_COMPLETE']
    assert start(seen)['stack_status'] == 'CREATE_COMPLETE'
    assert len(seen.heat.made('create')) == 2
    assert len(seen.heat.made('delete')) == 1


def test_a_stack_of_that_name_not_made_for_the_reservation_is_not_touched(
        cloud):
    seen = cloud(ScriptedHeat(stack('CREATE_COMPLETE', tags=['mine'])))
    with pytest.raises(exceptions.CloudUnavailable,
                       match='did not make for reservation r1'):
        start(seen)
    assert seen.heat.made('delete') == seen.heat.made('create') == []


def test_a_create_that_never_ends_times_out(cloud, monkeypatch):
    seen = cloud(ScriptedHeat(create=['CREATE_IN_PROGRESS']))
    clock = iter(range(0, 10 ** 6, 7))
    monkeypatch.setattr(heat_backend, 'time', types.SimpleNamespace(
        monotonic=lambda: next(clock), sleep=lambda seconds: None))
    with pytest.raises(exceptions.CloudUnavailable,
                       match='creating stack web: still CREATE_IN_PROGRESS '
                             'after 1 minute'):
        start(seen)


# -- a started stack's update ---------------------------------------------

def update(seen, **extra):
    return seen.backend.update(
        reservation(**dict({'stack_id': 's-1'}, **extra)), 'p1', PARTS,
        lambda: 'user-session')


def test_an_asked_update_is_sent_pinned_as_the_user_then_followed(cloud):
    seen = cloud(ScriptedHeat(stack('CREATE_COMPLETE')))
    answer = update(seen, stack_status=stack_plugin.UPDATE_ASKED)
    [(_kind, ident, fields)] = seen.heat.made('update')
    assert ident == 'web/s-1'
    assert fields == {'template': PINNED, 'parameters': {'key': 'k'},
                      'environment': {}, 'timeout_mins': 1,
                      'tags': 'climate,reservation:r1',
                      'disable_rollback': False}
    assert seen.sessions == ['user-session']
    # sent once Heat has begun it: the next read is the update's
    assert answer == {'stack_status': 'UPDATE_IN_PROGRESS',
                      'stack_status_reason': None}
    assert update(seen, stack_status='UPDATE_IN_PROGRESS') == {
        'stack_id': 's-1', 'stack_status': 'UPDATE_COMPLETE',
        'stack_status_reason': None, 'outputs': OUTPUTS}
    assert len(seen.heat.made('update')) == 1


def test_an_update_heat_rolled_back_says_why_it_failed(cloud):
    seen = cloud(ScriptedHeat(stack('UPDATE_IN_PROGRESS'), script=[
        ('ROLLBACK_COMPLETE', 'Stack ROLLBACK completed successfully')]))
    seen.heat.events_listed = [
        {'resource_name': 'web', 'resource_status': 'UPDATE_FAILED',
         'resource_status_reason': 'ResourceInError: resources.web: Went '
                                   'to status ERROR due to "No valid host"'},
    ]
    answer = update(seen, stack_status='UPDATE_IN_PROGRESS')
    assert answer['stack_status'] == 'ROLLBACK_COMPLETE'
    assert answer['stack_status_reason'] == (
        'the update failed (web: ResourceInError: resources.web: Went to '
        'status ERROR due to "No valid host"); Heat rolled the stack back '
        'to the template before it: Stack ROLLBACK completed successfully')
    [(_kind, _ident, query)] = seen.heat.made('events')
    assert query['filters'] == {'resource_action': 'UPDATE',
                                'resource_status': 'FAILED'}
    assert 'outputs' not in answer and seen.heat.made('update') == []


def test_a_rollback_that_failed_too_says_so(cloud):
    seen = cloud(ScriptedHeat(stack('ROLLBACK_FAILED', 'IntegrityError')))
    seen.heat.events_listed = [
        {'resource_name': 'web', 'resource_status': 'UPDATE_FAILED',
         'resource_status_reason': 'boom'}]
    answer = update(seen, stack_status='ROLLBACK_IN_PROGRESS')
    assert answer['stack_status_reason'] == (
        'the update failed (web: boom); Heat\'s rollback to the template '
        'before it is ROLLBACK_FAILED: IntegrityError')


def test_the_cause_named_is_not_a_cancellation_heat_made_after_it(cloud):
    """Once ``boom`` failed, Heat cancelled the group's update still in
    progress; on a busy engine that cancellation, and the stack's event
    naming it, came last."""
    seen = cloud(ScriptedHeat(stack(
        'ROLLBACK_FAILED',
        'Resource UPDATE failed: resources.web: Stack UPDATE cancelled')))
    seen.heat.events_listed = [
        {'resource_name': 'web', 'resource_status': 'UPDATE_FAILED',
         'resource_status_reason': 'resources.web: Stack UPDATE cancelled'},
        {'resource_name': 'stack-web', 'resource_status': 'UPDATE_FAILED',
         'resource_status_reason': 'Resource UPDATE failed: resources.web: '
                                   'Stack UPDATE cancelled'},
        {'resource_name': 'boom', 'resource_status': 'UPDATE_FAILED',
         'resource_status_reason': 'ValueError: resources.boom: Test '
                                   'Resource failed boom'}]
    answer = update(seen, stack_status='ROLLBACK_IN_PROGRESS')
    assert answer['stack_status_reason'].startswith(
        'the update failed (boom: ValueError: resources.boom: Test Resource '
        'failed boom); Heat\'s rollback to the template before it is '
        'ROLLBACK_FAILED: '), answer
    # only cancellations: the latest is said
    seen.heat.events_listed = seen.heat.events_listed[:1]
    answer = update(seen, stack_status='ROLLBACK_IN_PROGRESS')
    assert answer['stack_status_reason'].startswith(
        'the update failed (web: resources.web: Stack UPDATE cancelled)')


def test_an_update_failed_without_rollback_keeps_heats_reason(cloud):
    seen = cloud(ScriptedHeat(stack('UPDATE_FAILED', 'quota exceeded')))
    answer = update(seen, stack_status='UPDATE_IN_PROGRESS')
    assert (answer['stack_status'], answer['stack_status_reason']) == (
        'UPDATE_FAILED', 'quota exceeded')


def test_an_update_failed_just_now_waits_for_the_rollback_heat_begins(
        cloud, monkeypatch):
    """Heat marks a failed update UPDATE_FAILED, then begins the rollback
    it was asked for: a busy engine shows the failure in between, which
    is not the outcome."""
    now = datetime.datetime(2026, 12, 2, 4, 38, 40)
    monkeypatch.setattr(heat_backend.dates, 'utcnow', lambda: now)
    failed = dict(stack('UPDATE_FAILED', 'Resource CREATE failed: boom'),
                  disable_rollback=False, updated_time='2026-12-02T04:38:32Z')
    seen = cloud(ScriptedHeat(failed))
    assert update(seen, stack_status='UPDATE_IN_PROGRESS') == {}
    assert seen.heat.made('events') == []
    # the rollback begun, then done: its outcome, with the cause
    seen.heat.current = dict(failed, stack_status='ROLLBACK_IN_PROGRESS')
    assert update(seen, stack_status='UPDATE_IN_PROGRESS') == {
        'stack_status': 'ROLLBACK_IN_PROGRESS'}
    # one that never began within the bound is the outcome
    seen.heat.current = failed
    now += datetime.timedelta(seconds=heat_backend.ROLLBACK_BEGINS_WITHIN)
    answer = update(seen, stack_status='UPDATE_IN_PROGRESS')
    assert (answer['stack_status'], answer['stack_status_reason']) == (
        'UPDATE_FAILED', 'Resource CREATE failed: boom')
    # without a rollback asked (or a time to tell), failed is final at once
    seen.heat.current = dict(failed, disable_rollback=True)
    assert update(seen, stack_status='UPDATE_IN_PROGRESS')[
        'stack_status'] == 'UPDATE_FAILED'
    seen.heat.current = dict(failed, updated_time=None)
    assert update(seen, stack_status='UPDATE_IN_PROGRESS')[
        'stack_status'] == 'UPDATE_FAILED'


def test_an_update_heat_refuses_is_failed_and_one_it_cannot_take_waits(
        cloud):
    seen = cloud(ScriptedHeat(stack('CREATE_COMPLETE')))
    seen.heat.update_error = heat_exc.HTTPBadRequest(json.dumps(
        {'error': {'message': 'Property error: count'}}).encode())
    assert update(seen, stack_status=stack_plugin.UPDATE_ASKED) == {
        'stack_status': 'UPDATE_FAILED',
        'stack_status_reason': 'Heat refused the update: Property error: '
                               'count'}
    # Heat down: raised, the update stays asked for the next pass
    seen.heat.update_error = heat_exc.HTTPServiceUnavailable(b'down')
    with pytest.raises(exceptions.CloudUnavailable,
                       match='updating stack web'):
        update(seen, stack_status=stack_plugin.UPDATE_ASKED)
    # busy with another action: nothing sent yet
    seen.heat.current = stack('SUSPEND_IN_PROGRESS')
    seen.heat.update_error = None
    assert update(seen, stack_status=stack_plugin.UPDATE_ASKED) == {}
    assert len(seen.heat.made('update')) == 2


def test_an_update_heat_never_began_is_asked_again_and_a_gone_stack_fails(
        cloud):
    seen = cloud(ScriptedHeat(stack('CREATE_COMPLETE')))
    assert update(seen, stack_status='UPDATE_IN_PROGRESS') == {
        'stack_status': stack_plugin.UPDATE_ASKED}
    seen.heat.current = None
    answer = update(seen, stack_status=stack_plugin.UPDATE_ASKED)
    assert answer['stack_status'] == 'UPDATE_FAILED'
    assert 'stack web is gone' in answer['stack_status_reason']
    assert seen.heat.made('update') == []


# -- end ------------------------------------------------------------------

def end(seen, action, **extra):
    return seen.backend.end(reservation(stack_id='s-1', **extra), 'p1',
                            action)


def test_end_delete_deletes_and_waits_until_gone(cloud):
    seen = cloud(ScriptedHeat(stack('CREATE_COMPLETE'),
                              delete=['DELETE_IN_PROGRESS', None]))
    answer = end(seen, 'delete')
    assert seen.service_projects == ['p1']
    assert seen.sessions == []      # never the user's (trust) session
    assert seen.heat.made('delete') == [('delete', 'web/s-1')]
    assert seen.heat.current is None
    assert answer == {'stack_id': 's-1', 'stack_status': 'DELETE_COMPLETE',
                      'stack_status_reason': None}
    # not held, no snapshot: Heat alone deletes the servers
    assert seen.heat.made('resources') == []
    assert seen.instances.calls == []


def test_end_suspend_suspends(cloud):
    seen = cloud(ScriptedHeat(stack('CREATE_COMPLETE')))
    answer = end(seen, 'suspend')
    assert seen.heat.made('suspend') == [('suspend', 'web/s-1')]
    assert seen.heat.made('delete') == []
    assert answer['stack_status'] == 'SUSPEND_COMPLETE'
    # again: already suspended, nothing more asked
    end(seen, 'suspend')
    assert len(seen.heat.made('suspend')) == 1


def test_end_snapshot_keeps_an_image_of_each_server_then_deletes(cloud):
    seen = cloud(ScriptedHeat(stack('CREATE_COMPLETE')))
    seen.heat.listed = LISTED
    answer = end(seen, 'snapshot')
    # one Nova snapshot per server, nested groups' included, named after
    # the reservation and the server; then the stack's delete
    assert seen.instances.calls == [
        ('snapshot', 'r1-srv-a', 'srv-a'), ('snapshot', 'r1-srv-b', 'srv-b'),
        ('snapshot', 'r1-srv-c', 'srv-c')]
    kinds = [call[0] for call in seen.heat.calls]
    assert kinds.index('delete') > kinds.index('resources')
    assert seen.heat.made('resources') == [('resources', 'web/s-1', 5)]
    assert answer['images'] == [
        {'server_id': 'srv-a', 'resource': 'app', 'image_id': 'img-srv-a'},
        {'server_id': 'srv-b', 'resource': 'web', 'image_id': 'img-srv-b'},
        {'server_id': 'srv-c', 'resource': 'web', 'image_id': 'img-srv-c'}]
    assert answer['stack_status'] == 'DELETE_COMPLETE'


def test_a_failed_snapshot_fails_the_end_before_any_delete(cloud):
    seen = cloud(ScriptedHeat(stack('CREATE_COMPLETE')))
    seen.heat.listed = LISTED
    seen.instances.fail = exceptions.CloudUnavailable(
        service='Nova', reason='image upload failed')
    with pytest.raises(exceptions.CloudUnavailable,
                       match='image upload failed'):
        end(seen, 'snapshot')
    assert seen.heat.made('delete') == []


# -- on_start: wake -------------------------------------------------------

def hold(seen, **extra):
    return seen.backend.hold(reservation(on_start='wake', **extra), 'p1',
                             PARTS, lambda: 'user-session')


def test_hold_asks_for_the_stack_as_given_without_waiting(cloud):
    seen = cloud(ScriptedHeat())
    answer = hold(seen)
    [(_kind, fields)] = seen.heat.made('create')
    # the parts hold nothing before the start: nothing is pinned
    assert fields['template'] == TEMPLATE
    assert fields['tags'] == 'climate,reservation:r1,climate:held'
    assert seen.sessions == ['user-session']
    assert answer == {'stack_id': 's-2', 'stack_status': 'CREATE_IN_PROGRESS',
                      'stack_status_reason': None}
    # Heat is not polled: the periodic pass follows the stack
    assert seen.heat.made('get') == [('get', 'web')]


def test_hold_follows_the_stack_then_shelves_its_servers(cloud):
    seen = cloud(ScriptedHeat(stack('CREATE_IN_PROGRESS', tags=HELD)))
    assert hold(seen)['stack_status'] == 'CREATE_IN_PROGRESS'
    assert seen.instances.calls == []
    seen.heat.script = ['CREATE_COMPLETE']
    seen.heat.listed = LISTED
    answer = hold(seen)
    assert seen.instances.calls == [('hold', 'r1-srv-a', 'srv-a'),
                                    ('hold', 'r1-srv-b', 'srv-b'),
                                    ('hold', 'r1-srv-c', 'srv-c')]
    assert answer['stack_status'] == 'CREATE_COMPLETE'
    assert answer['servers'][0] == {'server_id': 'srv-a', 'resource': 'app',
                                    'status': 'SHELVING', 'error': None}
    assert seen.heat.made('create') == []


def test_a_failed_held_stack_shows_heats_reason_and_is_made_again(cloud):
    seen = cloud(ScriptedHeat(stack('CREATE_FAILED', 'No valid host',
                                    tags=HELD)))
    answer = hold(seen)
    assert answer == {'stack_id': 's-1', 'stack_status': 'CREATE_FAILED',
                      'stack_status_reason': 'No valid host'}
    # its deletion asked, not waited for
    assert seen.heat.made('delete') == [('delete', 'web/s-1')]
    assert seen.heat.made('create') == []
    # being deleted: the failure stays shown (nothing answered)
    seen.heat.script = ['DELETE_IN_PROGRESS']
    assert hold(seen) == {}
    # gone: made again, the last failure said
    seen.heat.script = [None]
    answer = hold(seen, stack_status='CREATE_FAILED',
                  stack_status_reason='No valid host')
    assert len(seen.heat.made('create')) == 1
    assert answer['stack_status'] == 'CREATE_IN_PROGRESS'
    assert answer['stack_status_reason'] == \
        'made again; the last attempt: No valid host'


def test_hold_leaves_a_stack_not_made_for_the_reservation(cloud):
    seen = cloud(ScriptedHeat(stack('CREATE_COMPLETE', tags=['mine'])))
    with pytest.raises(exceptions.CloudUnavailable,
                       match='did not make for reservation r1'):
        hold(seen)
    assert seen.heat.made('delete') == seen.heat.made('create') == []


def wake_parts():
    return [dict(PARTS[0], hosts=[(HOST1, 1), (HOST2, 2)]), PARTS[1],
            {'id': 'r-web', 'resource_type': 'virtual:instance',
             'hosts': [(HOST2, 2)]}]


def test_start_wakes_a_held_stacks_servers_onto_their_slots(cloud):
    seen = cloud(ScriptedHeat(stack('CREATE_COMPLETE', tags=HELD)))
    seen.heat.listed = LISTED
    res = reservation(on_start='wake', needs=NEEDS + [WEB_NEED])
    answer = seen.backend.start(res, 'p1', wake_parts(),
                                lambda: 'user-session')
    # app on its part's first host, the group's two on theirs
    assert seen.instances.calls == [
        ('wake', 'r1-srv-a', 'srv-a', 'compute1'),
        ('wake', 'r1-srv-b', 'srv-b', 'compute2'),
        ('wake', 'r1-srv-c', 'srv-c', 'compute2')]
    assert seen.heat.made('create') == []
    assert [s['status'] for s in answer['servers']] == ['ACTIVE'] * 3
    assert answer['stack_status'] == 'CREATE_COMPLETE'
    assert answer['outputs'] == OUTPUTS
    # a retried start sends each server to the same host
    again = seen.backend.start(res, 'p1', wake_parts(),
                               lambda: 'user-session')
    assert seen.instances.calls[3:] == seen.instances.calls[:3]
    assert again['servers'] == answer['servers']


def test_a_server_without_a_slot_is_said_not_woken(cloud):
    seen = cloud(ScriptedHeat(stack('CREATE_COMPLETE', tags=HELD)))
    seen.heat.listed = LISTED
    answer = seen.backend.start(reservation(on_start='wake'), 'p1',
                                wake_parts(), lambda: 'user-session')
    assert [c[1] for c in seen.instances.calls] == ['r1-srv-a']
    assert answer['servers'][1]['status'] is None
    assert 'no instance slot of the lease is booked for web' in \
        answer['servers'][1]['error']


def test_a_held_stack_gone_by_the_start_is_made_pinned(cloud):
    seen = cloud(ScriptedHeat(stack('CREATE_FAILED', 'quota', tags=HELD)))
    answer = seen.backend.start(reservation(on_start='wake'), 'p1',
                                wake_parts(), lambda: 'user-session')
    [(_kind, fields)] = seen.heat.made('create')
    assert fields['template'] == PINNED
    assert 'climate:held' not in fields['tags']
    assert seen.instances.calls == []
    assert 'servers' not in answer


def test_the_end_of_a_held_stack_removes_what_let_its_servers_in(cloud):
    seen = cloud(ScriptedHeat(stack('CREATE_COMPLETE', tags=HELD)))
    seen.heat.listed = LISTED
    end(seen, 'suspend')
    # the servers stay as Heat suspends them
    assert seen.instances.calls == [('release', 'r1-srv-a', 'keep'),
                                    ('release', 'r1-srv-b', 'keep'),
                                    ('release', 'r1-srv-c', 'keep')]
    assert seen.heat.made('suspend') == [('suspend', 'web/s-1')]


def test_a_held_stack_of_a_lease_deleted_before_its_start_is_deleted(cloud):
    seen = cloud(ScriptedHeat(stack('CREATE_COMPLETE', tags=HELD)))
    seen.backend.discard(reservation(stack_id='s-1'), 'p1')
    assert seen.service_projects == ['p1']
    assert seen.heat.made('delete') == [('delete', 'web/s-1')]
    # not waited for: one look, then the delete
    assert seen.heat.made('get') == [('get', 'web/s-1')]
    gone = cloud(ScriptedHeat(None))
    gone.backend.discard(reservation(stack_id='s-1'), 'p1')
    assert gone.heat.made('delete') == []


def test_placement_is_by_top_level_resource_and_slot_order():
    servers = [{'server_id': 'a', 'resource': 'web'},
               {'server_id': 'b', 'resource': 'web'},
               {'server_id': 'c', 'resource': 'web'}]
    parts = [{'id': 'r-web', 'resource_type': 'virtual:instance',
              'hosts': [(HOST1, 1), (HOST2, 1)]}]
    assert heat_backend.placement(servers, [WEB_NEED], parts) == {
        'a': HOST1, 'b': HOST2, 'c': None}


@pytest.mark.parametrize('action', ['delete', 'suspend', 'snapshot'])
def test_end_of_a_stack_already_gone(cloud, action):
    seen = cloud(ScriptedHeat(None))
    answer = end(seen, action)
    assert answer['stack_status'] == 'DELETE_COMPLETE'
    assert [call[0] for call in seen.heat.calls] == ['get']


def test_end_without_stack_id_finds_it_by_name_and_tag(cloud):
    seen = cloud(ScriptedHeat(stack('CREATE_COMPLETE')))
    answer = seen.backend.end(reservation(), 'p1', 'delete')
    assert seen.heat.calls[0] == ('get', 'web')
    assert answer['stack_id'] == 's-1'
    other = cloud(ScriptedHeat(stack('CREATE_COMPLETE', tags=['mine'])))
    other.backend.end(reservation(), 'p1', 'delete')
    assert other.heat.made('delete') == []


def test_a_failed_delete_is_heat_unavailable(cloud):
    seen = cloud(ScriptedHeat(stack('CREATE_COMPLETE'), delete=[
        'DELETE_IN_PROGRESS', ('DELETE_FAILED', 'port in use')]))
    with pytest.raises(exceptions.CloudUnavailable,
                       match='stack web DELETE_FAILED: port in use'):
        end(seen, 'delete')


def test_the_plugin_ends_with_the_leases_project(monkeypatch):
    got = []

    class Backend:
        def end(self, reservation, project_id, action):
            got.append((project_id, action))
            return {}

    @contextlib.contextmanager
    def writer(ctx):
        yield types.SimpleNamespace(get=lambda model, rid: None)

    monkeypatch.setattr(stack_plugin.db_api, 'writer', writer)
    plugin = stack_plugin.VirtualStackPlugin()
    plugin._backend = Backend()
    lease = values.Lease(
        id='l1', name='l', project_id='p1', user_id='u1', trust_id=None,
        status='ACTIVE', lease_type=None,
        start_date=datetime.datetime(2030, 1, 1),
        end_date=datetime.datetime(2030, 1, 2))
    reservation = values.Reservation(
        id='r1', lease_id='l1', resource_type='virtual:stack',
        resource_id=None, status='active', part_of=None,
        missing_resources=False, resources_changed=False,
        params={'on_end': 'suspend'})
    plugin.on_end(None, lease, reservation)
    assert got == [('p1', 'suspend')]


# -- the Heat client ------------------------------------------------------

def test_the_service_client_acts_on_the_given_projects_stacks(monkeypatch):
    conf = cfg.ConfigOpts()
    clients_conf.register_opts(conf)
    conf([])
    asked = []

    class Session:
        def get_endpoint(self, **kwargs):
            asked.append(kwargs)
            return 'http://heat:8004/v1/service-project'

    monkeypatch.setattr(keystone, 'service_session', lambda conf: Session())
    heat = heat_clients.service_client(conf, project_id='p1')
    assert heat.http_client.endpoint_override == 'http://heat:8004/v1/p1'
    assert asked == [{'service_type': 'orchestration',
                      'interface': 'public', 'region_name': None}]
    assert heat_clients.service_client(conf).http_client.endpoint_override \
        is None
    assert heat_clients.project_endpoint('http://h/heat-api/v1/', 'p2') == \
        'http://h/heat-api/v1/p2'
