"""virtual:stack through the in-process API on SQLite: a template's needs
booked as parts of the same lease (static instance, volume and floating
IP inventories), refused whole with the template's words, started parts
first and ended parts last, and rebooked when a pending stack's template
changes."""

import pytest

from climate import context
from climate.db import api as db_api
from climate.db import models
from climate import exceptions
from climate.plugins import values
from climate.plugins.virtual_stack.backends import static
from climate.tests import fixtures
from climate.tests.unit.plugins import test_virtual_instance as base

START, END = base.START, base.END
NET = 'ext-net'

TEMPLATE = """
heat_template_version: 2018-08-31
parameters:
  web_count: {type: number, default: 2}
resources:
  web:
    type: OS::Heat::ResourceGroup
    properties:
      count: {get_param: web_count}
      resource_def:
        type: OS::Nova::Server
        properties: {flavor: m1.small, image: cirros}
  data:
    type: OS::Cinder::Volume
    properties: {size: 10}
  ip:
    type: OS::Neutron::FloatingIP
    properties: {floating_network: ext-net}
  net:
    type: OS::Neutron::Net
  db:
    type: OS::Trove::Instance
    properties: {flavor: small, size: 1}
outputs:
  first: {value: {get_attr: [web, resource.0.first_address]}}
"""


class RecordingStackBackend(static.StaticStackBackend):
    """The static backend, recording what it was asked and what the
    parts were when it was."""

    def __init__(self, conf):
        super().__init__(conf)
        self.calls = []

    def validate(self, template, parameters, environment, user_session):
        self.calls.append(('validate', parameters))
        return super().validate(template, parameters, environment,
                                user_session)

    def start(self, reservation, project_id, parts, user_session):
        self.calls.append(('start', reservation['id'], sorted(
            (p['resource_type'], p['status']) for p in parts)))
        return super().start(reservation, project_id, parts, user_session)

    def end(self, reservation, project_id, action):
        self.calls.append(('end', reservation['id'], action))
        return super().end(reservation, project_id, action)

    def update(self, reservation, project_id, parts, user_session):
        self.calls.append(('update', reservation['id'],
                           reservation.get('parameters')))
        return super().update(reservation, project_id, parts, user_session)


@pytest.fixture
def env():
    with fixtures.ClimateEnvironment() as environment:
        plugin = environment.plugin('virtual:stack')
        plugin._backend = RecordingStackBackend(plugin_conf())
        environment.backend = plugin._backend
        yield environment


def plugin_conf():
    from climate.plugins.virtual_stack import plugin
    return plugin.CONF


def inventory(env, hosts=1, pool_gb=100, addresses=('172.24.4.10',)):
    """Hosts for the servers (4 VCPU, 4096 MB: two m1.small), a volume
    pool, floating IPs of ``ext-net``."""
    base.add_hosts(env, hosts)
    base.admin(env, 'POST', '/v1/volume-pools',
               {'name': 'pool-a', 'total_capacity_gb': pool_gb},
               expect=201, version='1.5')
    for address in addresses:
        base.admin(env, 'POST', '/v1/floatingips',
                   {'floating_network_id': NET,
                    'floating_ip_address': address}, expect=201)


def stack(template=TEMPLATE, **extra):
    return dict(resource_type='virtual:stack', template=template, **extra)


def lease(env, name, *reservations, start=START, end=END, expect=201):
    return base.lease(env, name, *reservations, start=start, end=end,
                      expect=expect)


def split(found):
    """(the stack reservation, its parts by resource type)."""
    [owner] = [r for r in found['reservations']
               if r['resource_type'] == 'virtual:stack']
    parts = {r['resource_type']: r for r in found['reservations']
             if r is not owner}
    return owner, parts


def by_id(found):
    return {r['id']: r for r in found['reservations']}


def held():
    """``{reservation id: {class: amount}}`` of every ledger booking."""
    out = {}
    ctx = context.admin_context()
    with db_api.reader(ctx) as session:
        for row in session.query(models.LedgerBooking).all():
            classes = out.setdefault(row.reservation_id, {})
            classes[row.resource_class] = classes.get(
                row.resource_class, 0) + row.amount
    return out


def test_a_template_books_its_needs_as_parts_of_the_lease(env):
    inventory(env)
    made = lease(env, 'web-stack', stack(parameters={'web_count': 2}))
    owner, parts = split(made)
    assert sorted(parts) == ['virtual:floatingip', 'virtual:instance',
                             'virtual:volume']
    assert owner['stack_name'] == 'climate-%s' % owner['id']
    assert (owner['on_start'], owner['on_end']) == ('create', 'delete')
    assert owner['template']['heat_template_version'] == '2018-08-31'
    # each need names the part holding it, each part its stack
    by_type = {n['resource_type']: n for n in owner['needs']}
    for rtype, part in parts.items():
        assert by_type[rtype]['reservation_id'] == part['id']
        assert part['stack_reservation_id'] == owner['id']
    assert by_type['virtual:instance']['resources'] == ['web/resource_def']
    assert (parts['virtual:instance']['amount'],
            parts['virtual:instance']['vcpus'],
            parts['virtual:instance']['memory_mb']) == (2, 1, 2048)
    assert parts['virtual:volume']['size_gb'] == 10
    assert parts['virtual:floatingip']['network_id'] == NET
    assert owner['free'] == [{'resource': 'net', 'type': 'OS::Neutron::Net'}]
    assert [u['resource'] for u in owner['unreservable']] == ['db']
    # the parts hold the capacity, the stack nothing of its own
    booked = held()
    assert owner['id'] not in booked
    assert booked[parts['virtual:instance']['id']]['MEMORY_MB'] == 4096
    assert booked[parts['virtual:volume']['id']]['VOLUME_GB'] == 10
    assert parts['virtual:floatingip']['id'] in booked
    # the stored listing shows the same
    assert by_id(base.get(env, made['id'])) == by_id(made)


def test_a_need_that_does_not_fit_refuses_the_whole_lease(env):
    inventory(env)
    before = base.unchanged(env)
    resp = env.request('POST', '/v1/leases', body={
        'name': 'too-big', 'start_date': START, 'end_date': END,
        'reservations': [stack(parameters={'web_count': 3})]})
    assert resp.status_int == 409, resp.text
    message = resp.json['error_message']
    assert message.startswith("the template's resource web/resource_def "
                              "(virtual:instance): "), message
    assert base.unchanged(env) == before
    # two floating IPs asked, one registered: the floating IP need says so
    resp = env.request('POST', '/v1/leases', body={
        'name': 'two-ips', 'start_date': START, 'end_date': END,
        'reservations': [stack(template={
            'heat_template_version': '2018-08-31',
            'resources': {
                'a': {'type': 'OS::Neutron::FloatingIP',
                      'properties': {'floating_network': NET}},
                'b': {'type': 'OS::Neutron::FloatingIP',
                      'properties': {'floating_network': NET}}}})]})
    # (Blazar's floating IP refusal is a 400)
    assert resp.status_int == 400, resp.text
    assert resp.json['error_message'].startswith(
        "the template's resources a, b (virtual:floatingip): Not enough "
        "floating IPs available")
    assert base.unchanged(env) == before


@pytest.mark.parametrize('extra,expected', [
    ({'template': None}, 'Missing parameter template'),
    ({'template': 'resources: [1, 2'}, 'template is not valid YAML'),
    ({'template': '- a list'}, 'template is a mapping'),
    ({'template': {'resources': {}}}, 'has no heat_template_version'),
    ({'template': TEMPLATE.replace('m1.small', 'm9.huge')},
     'asks for flavor "m9.huge"'),
    ({'parameters': {'web_count': 'many'}},
     'the count of resource web (OS::Heat::ResourceGroup) must be a whole '
     'number, not "many"'),
    ({'on_end': 'explode'}, 'on_end is one of delete, suspend, snapshot'),
    ({'on_start': 'later'}, 'on_start is one of create, wake'),
    ({'stack_name': '1abc'}, 'stack_name is a Heat stack name'),
    ({'colour': 'blue'}, 'unknown field(s) colour'),
])
def test_bad_input_is_a_400_and_writes_nothing(env, extra, expected):
    inventory(env)
    before = base.unchanged(env)
    body = stack()
    body.update(extra)
    if body['template'] is None:
        del body['template']
    resp = env.request('POST', '/v1/leases', body={
        'name': 'bad', 'start_date': START, 'end_date': END,
        'reservations': [body]})
    assert resp.status_int == 400, resp.text
    assert expected in resp.json['error_message'], resp.text
    assert base.unchanged(env) == before


def test_the_template_size_is_bounded(env):
    env_conf = plugin_conf()
    env_conf.set_override('max_template_size', 1024, group='stacks')
    try:
        resp = env.request('POST', '/v1/leases', body={
            'name': 'big', 'start_date': START, 'end_date': END,
            'reservations': [stack(template=TEMPLATE + '#' * 10 + '\n' + (
                'description: "%s"\n' % ('x' * 2000)))]})
    finally:
        env_conf.clear_override('max_template_size', group='stacks')
    assert resp.status_int == 400, resp.text
    assert 'max_template_size' in resp.json['error_message']


def test_parts_start_first_and_end_last(env):
    inventory(env)
    made = lease(env, 'short', stack(on_end='suspend'), start='now',
                 end=fixtures.iso(3))
    owner, parts = split(made)
    found = base.wait_status(env, made['id'], 'TERMINATED', timeout=20)
    acted = [c for c in env.backend.calls if c[0] != 'validate']
    assert acted[0] == ('start', owner['id'], [
        ('virtual:floatingip', 'active'), ('virtual:instance', 'active'),
        ('virtual:volume', 'active')])
    assert acted[1] == ('end', owner['id'], 'suspend')
    owner, _parts = split(found)
    assert owner['stack_id'] and owner['stack_status'] == 'SUSPEND_COMPLETE'
    assert all(r['status'] == 'deleted' for r in found['reservations'])
    assert held() == {}


def test_a_part_is_changed_only_through_its_stack(env):
    inventory(env)
    made = lease(env, 'parts', stack())
    owner, parts = split(made)
    part = parts['virtual:instance']
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'reservations': [{'id': part['id'], 'amount': 1}]})
    assert resp.status_int == 409, resp.text
    assert ('holds part of the stack of reservation %s' % owner['id']) in \
        resp.json['error_message']
    # sent back as read, it changes nothing and is no error
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'reservations': [{'id': part['id'], 'amount': part['amount']}]})
    assert resp.status_int == 200, resp.text


def test_a_new_template_rebooks_the_parts_or_changes_nothing(env):
    inventory(env, addresses=('172.24.4.10', '172.24.4.11'))
    made = lease(env, 'grow', stack(parameters={'web_count': 1}))
    owner, parts = split(made)
    assert parts['virtual:instance']['amount'] == 1
    before = base.unchanged(env)
    # three servers do not fit on the one host: 409, nothing changes
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'reservations': [{'id': owner['id'],
                          'parameters': {'web_count': 3}}]})
    assert resp.status_int == 409, resp.text
    assert resp.json['error_message'].startswith(
        "the template's resource web/resource_def (virtual:instance): ")
    assert base.unchanged(env) == before
    # two do: the parts are booked anew
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'reservations': [{'id': owner['id'],
                          'parameters': {'web_count': 2}}]})
    assert resp.status_int == 200, resp.text
    new_owner, new_parts = split(resp.json['lease'])
    assert new_owner['parameters'] == {'web_count': 2}
    assert new_parts['virtual:instance']['amount'] == 2
    assert {n['reservation_id'] for n in new_owner['needs']} == {
        p['id'] for p in new_parts.values()}
    booked = held()
    assert not set(booked) & {p['id'] for p in parts.values()}
    assert booked[new_parts['virtual:instance']['id']]['MEMORY_MB'] == 4096
    # the stored listing follows
    assert by_id(base.get(env, made['id'])) == by_id(resp.json['lease'])
    # each new set of parameters was validated (as the caller, with Heat)
    validated = [c for c in env.backend.calls if c[0] == 'validate']
    assert validated == [('validate', {'web_count': n}) for n in (1, 3, 2)]
    # a change that needs the same parts keeps them, and the template,
    # unchanged, is not sent to Heat again
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'reservations': [{'id': owner['id'], 'on_end': 'snapshot'}]},
        version='1.4')
    assert resp.status_int == 200, resp.text
    assert [c for c in env.backend.calls if c[0] == 'validate'] == validated
    same_owner, same_parts = split(resp.json['lease'])
    assert same_owner['on_end'] == 'snapshot'
    assert {p['id'] for p in same_parts.values()} == {
        p['id'] for p in new_parts.values()}


def test_deleting_the_lease_frees_every_part(env):
    inventory(env)
    made = lease(env, 'gone', stack())
    assert held()
    resp = env.request('DELETE', '/v1/leases/' + made['id'])
    assert resp.status_int == 204, resp.text
    assert held() == {}


def started(env, web_count=1, name='started', **extra):
    """An active lease of the stack with ``web_count`` servers (the end
    two hours away: the before-end notice, an hour before the end, would
    otherwise run during the test)."""
    made = lease(env, name, stack(parameters={'web_count': web_count},
                                  **extra),
                 start='now', end=fixtures.iso(7200))
    return base.wait_status(env, made['id'], 'ACTIVE', timeout=20)


def put(env, lease_id, reservation_id, **change):
    return env.request('PUT', '/v1/leases/' + lease_id, body={
        'reservations': [dict(change, id=reservation_id)]}, version='1.4')


DISK = TEMPLATE.replace('properties: {size: 10}',
                        'properties: {size: 10, volume_type: ssd}')


def test_a_started_stack_takes_a_new_template_its_parts_grown_in_place(
        env):
    inventory(env)
    found = started(env)
    owner, parts = split(found)
    assert parts['virtual:instance']['amount'] == 1
    before = base.unchanged(env)
    for change, words in (
            # three servers do not fit on the one host
            ({'parameters': {'web_count': 3}},
             "the template's resource web/resource_def (virtual:instance): "),
            # a volume type none of its reservations has
            ({'template': DISK},
             "the template's resource data (virtual:volume): no reservation "
             "of this started stack has that shape (volume_type \"ssd\")"),
            ({'stack_name': 'renamed'}, 'a started stack keeps its name')):
        resp = put(env, found['id'], owner['id'], **change)
        assert resp.status_int == 409, resp.text
        assert words in resp.json['error_message'], resp.text
        assert base.unchanged(env) == before
    # two fit: the instance part grows (the same reservation), the stack
    # is updated (the static inventory records it at once)
    resp = put(env, found['id'], owner['id'], parameters={'web_count': 2})
    assert resp.status_int == 200, resp.text
    new_owner, new_parts = split(resp.json['lease'])
    assert {p['id'] for p in new_parts.values()} == {
        p['id'] for p in parts.values()}
    assert new_parts['virtual:instance']['amount'] == 2
    assert held()[parts['virtual:instance']['id']]['MEMORY_MB'] == 4096
    assert new_owner['stack_status'] == 'UPDATE_COMPLETE'
    assert [n['amount'] for n in new_owner['needs']
            if n['resource_type'] == 'virtual:instance'] == [2]
    assert {n['reservation_id'] for n in new_owner['needs']} == {
        p['id'] for p in parts.values()}
    # back to one: the started part keeps its two slots to the end
    resp = put(env, found['id'], owner['id'], parameters={'web_count': 1})
    assert resp.status_int == 200, resp.text
    new_owner, new_parts = split(resp.json['lease'])
    assert new_parts['virtual:instance']['amount'] == 2
    assert [n['amount'] for n in new_owner['needs']
            if n['resource_type'] == 'virtual:instance'] == [1]
    # (the static inventory records in the update's transaction: the
    # refused ones were recorded too, and rolled back)
    updates = acted(env, 'update')
    assert updates[-2:] == [
        ('update', owner['id'], {'web_count': n}) for n in (2, 1)]
    # an on_end change (or the same parameters) is no update of the stack
    for change in ({'on_end': 'suspend'}, {'parameters': {'web_count': 1}}):
        resp = put(env, found['id'], owner['id'], **change)
        assert resp.status_int == 200, resp.text
    assert split(resp.json['lease'])[0]['on_end'] == 'suspend'
    assert acted(env, 'update') == updates


class UpdatingStackBackend(RecordingStackBackend):
    """A backend acting in a cloud whose updates Heat takes a pass to
    apply: sent, then ``outcome``."""

    acts_in_cloud = True
    outcome = {'stack_status': 'UPDATE_COMPLETE',
               'stack_status_reason': None, 'outputs': [
                   {'output_key': 'first', 'output_value': '10.0.0.5'}]}

    def update(self, reservation, project_id, parts, user_session):
        self.calls.append(('update', reservation['id'],
                           reservation.get('stack_status'),
                           sorted(p['resource_type'] for p in parts)))
        if reservation['stack_status'] == 'UPDATE_ASKED':
            return {'stack_status': 'UPDATE_IN_PROGRESS'}
        return dict(self.outcome)


@pytest.fixture
def updating(env):
    plugin = env.plugin('virtual:stack')
    plugin._backend = env.backend = UpdatingStackBackend(plugin_conf())
    return plugin


def shown(env, lease_id):
    return split(base.admin(env, 'GET', '/v1/leases/' + lease_id)
                 ['lease'])[0]


def test_a_started_stack_is_updated_after_the_commit_and_followed(
        env, updating):
    inventory(env)
    found = started(env)
    owner, _parts = split(found)
    resp = put(env, found['id'], owner['id'], parameters={'web_count': 2})
    assert resp.status_int == 200, resp.text
    # sent after the commit, with the parts as they are now
    kinds = ['virtual:floatingip', 'virtual:instance', 'virtual:volume']
    assert acted(env, 'update') == [
        ('update', owner['id'], 'UPDATE_ASKED', kinds)]
    assert split(resp.json['lease'])[0]['stack_status'] == \
        'UPDATE_IN_PROGRESS'
    # another update while Heat works on this one: 409, nothing changed
    before = base.unchanged(env)
    resp = put(env, found['id'], owner['id'], parameters={'web_count': 1})
    assert resp.status_int == 409, resp.text
    assert 'still applying its last update' in resp.json['error_message']
    assert base.unchanged(env) == before
    # the periodic pass records Heat's outcome, then leaves it alone
    assert updating.heal(context.admin_context()) == [owner['id']]
    now = shown(env, found['id'])
    assert now['stack_status'] == 'UPDATE_COMPLETE'
    assert now['outputs'] == UpdatingStackBackend.outcome['outputs']
    assert updating.heal(context.admin_context()) == []
    assert len(acted(env, 'update')) == 2


def test_an_update_heat_fails_is_shown_and_sent_again_on_request(
        env, updating):
    inventory(env)
    found = started(env)
    owner, _parts = split(found)
    env.backend.outcome = {
        'stack_status': 'ROLLBACK_COMPLETE',
        'stack_status_reason': 'the update failed (web: No valid host); '
                               'Heat rolled the stack back'}
    resp = put(env, found['id'], owner['id'], parameters={'web_count': 2})
    assert resp.status_int == 200, resp.text
    assert updating.heal(context.admin_context()) == [owner['id']]
    now = shown(env, found['id'])
    assert now['stack_status'] == 'ROLLBACK_COMPLETE'
    assert 'No valid host' in now['stack_status_reason']
    # the booking stays grown (an active part never shrinks); an on_end
    # change sends nothing, the same parameters again retry the update
    assert split(base.get(env, found['id']))[1]['virtual:instance'][
        'amount'] == 2
    resp = put(env, found['id'], owner['id'], on_end='suspend')
    assert resp.status_int == 200, resp.text
    assert len(acted(env, 'update')) == 2
    resp = put(env, found['id'], owner['id'], parameters={'web_count': 2})
    assert resp.status_int == 200, resp.text
    assert acted(env, 'update')[-1][2] == 'UPDATE_ASKED'
    assert len(acted(env, 'update')) == 3


def test_a_started_wake_stack_keeps_its_template(env, holding):
    inventory(env)
    found = started(env, on_start='wake')
    owner, _parts = split(found)
    before = base.unchanged(env)
    resp = put(env, found['id'], owner['id'], parameters={'web_count': 2})
    assert resp.status_int == 409, resp.text
    assert 'started wake stack cannot change' in \
        resp.json['error_message']
    assert base.unchanged(env) == before


# -- on_start: wake -------------------------------------------------------

class HoldingStackBackend(RecordingStackBackend):
    """A backend acting in a cloud that holds ``wake`` stacks: the first
    hold asks for the stack, the next ones find its servers shelved."""

    acts_in_cloud = True

    def hold(self, reservation, project_id, parts, user_session):
        self.calls.append(('hold', reservation['id'],
                           reservation.get('stack_status')))
        if reservation.get('stack_status') is None:
            return {'stack_id': 's-1', 'stack_status': 'CREATE_IN_PROGRESS'}
        return {'stack_status': 'CREATE_COMPLETE', 'servers': [
            {'server_id': 'srv-1', 'resource': 'web',
             'status': 'SHELVED_OFFLOADED', 'error': None}]}

    def start(self, reservation, project_id, parts, user_session):
        self.calls.append(('hosts', sorted(
            (p['resource_type'], [(f['hypervisor_hostname'], n)
                                  for f, n in p.get('hosts') or ()])
            for p in parts if 'hosts' in p)))
        return super().start(reservation, project_id, parts, user_session)

    def discard(self, reservation, project_id):
        self.calls.append(('discard', reservation['id'],
                           reservation.get('stack_id')))


@pytest.fixture
def holding(env):
    plugin = env.plugin('virtual:stack')
    plugin._backend = env.backend = HoldingStackBackend(plugin_conf())
    return plugin


def acted(env, *kinds):
    return [c for c in env.backend.calls if c[0] in kinds]


def test_a_wake_stack_is_made_after_the_create_and_followed_until_start(
        env, holding):
    inventory(env)
    made = lease(env, 'woken', stack(on_start='wake'))
    owner, parts = split(made)
    # the prepare after the commit asked for the stack
    assert acted(env, 'hold') == [('hold', owner['id'], None)]
    assert owner['stack_status'] == 'CREATE_IN_PROGRESS'
    # each periodic pass takes the next step
    assert holding.heal(context.admin_context()) == [owner['id']]
    owner, _parts = split(base.admin(env, 'GET', '/v1/leases/' + made['id'])
                          ['lease'])
    assert owner['stack_status'] == 'CREATE_COMPLETE'
    assert owner['servers'][0]['status'] == 'SHELVED_OFFLOADED'
    # nothing new: nothing said changed
    assert holding.heal(context.admin_context()) == []


def test_a_started_wake_stack_is_held_no_more_and_knows_its_hosts(
        env, holding):
    inventory(env)
    made = lease(env, 'woken', stack(on_start='wake'), start='now',
                 end=fixtures.iso(7200))
    base.wait_status(env, made['id'], 'ACTIVE', timeout=20)
    holds = len(acted(env, 'hold'))
    # the pass after the start leaves the woken servers alone
    assert holding.heal(context.admin_context()) == []
    owner, _parts = split(base.admin(env, 'GET', '/v1/leases/' + made['id'])
                          ['lease'])
    # nor one that read it pending, before the start
    assert holding._follow(context.admin_context(),
                           values.Lease.from_view(made),
                           dict(owner, status='pending')) is False
    assert len(acted(env, 'hold')) == holds
    # the start saw where the instance part's slots are
    [(_kind, hosts)] = acted(env, 'hosts')
    assert hosts == [('virtual:instance', [('h00', 2)])]


def test_a_wake_stack_goes_with_a_lease_deleted_before_its_start(
        env, holding):
    inventory(env)
    made = lease(env, 'gone', stack(on_start='wake'))
    owner, _parts = split(made)
    resp = env.request('DELETE', '/v1/leases/' + made['id'])
    assert resp.status_int == 204, resp.text
    assert acted(env, 'discard') == [('discard', owner['id'], 's-1')]
    assert held() == {}


def test_a_wake_stack_lease_is_not_deleted_while_heat_is_down(
        env, holding, monkeypatch):
    inventory(env)
    made = lease(env, 'kept', stack(on_start='wake'))
    booked = held()

    def down(reservation, project_id):
        raise exceptions.CloudUnavailable(service='Heat',
                                          reason='connection refused')
    monkeypatch.setattr(env.backend, 'discard', down)
    resp = env.request('DELETE', '/v1/leases/' + made['id'])
    # the held stack would be left behind: the delete is refused whole,
    # to be sent again
    assert resp.status_int == 503, resp.text
    assert 'Heat is unavailable' in resp.text
    assert base.admin(env, 'GET', '/v1/leases/' + made['id'])['lease'][
        'status'] == made['status']
    assert held() == booked


def test_a_new_template_of_a_pending_wake_stack_makes_it_again(
        env, holding):
    inventory(env)
    made = lease(env, 'again', stack(on_start='wake'))
    owner, _parts = split(made)
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'reservations': [{'id': owner['id'],
                          'parameters': {'web_count': 1}}]})
    assert resp.status_int == 200, resp.text
    assert acted(env, 'discard', 'hold') == [
        ('hold', owner['id'], None), ('discard', owner['id'], 's-1'),
        ('hold', owner['id'], None)]
    # an on_end change keeps the stack
    resp = env.request('PUT', '/v1/leases/' + made['id'], body={
        'reservations': [{'id': owner['id'], 'on_end': 'snapshot'}]})
    assert resp.status_int == 200, resp.text
    assert len(acted(env, 'discard')) == 1


def test_only_a_wake_stacks_instance_part_starts_with_its_slots_held(
        env, holding, monkeypatch):
    """The woken servers hold the instance part's slots with their own
    flavor: the part's start tells the instance backend so (its flavor's
    Placement inventory is kept closed); a create stack's part is open
    to the servers Heat boots with its flavor."""
    inventory(env, hosts=2, addresses=('172.24.4.10', '172.24.4.11'))
    backend = env.plugin('virtual:instance').backend
    seen = {}

    def start(view, *args):
        seen[view['id']] = view.get('slots_held')
        return type(backend).start(backend, view, *args)
    monkeypatch.setattr(backend, 'start', start)
    woken = split(started(env, on_start='wake'))[1]['virtual:instance']
    made = split(started(env, name='made'))[1]['virtual:instance']
    assert seen == {woken['id']: True, made['id']: False}
