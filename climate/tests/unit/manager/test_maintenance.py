"""Maintenance windows (microversion 1.16, ``climate.manager.maintenance``)
through the in-process API on SQLite: hosts by filter, a host left to its
lease not taken, instance slots on a host are hits too, an active lease
can be shortened but not moved, and a cancel frees the hosts."""

import pytest

from climate import context
from climate.db import api as db_api
from climate.db import lease_json
from climate.db import models
from climate import states
from climate.tests import fixtures

V = '1.16'
ADMIN = 'admin'


@pytest.fixture
def env():
    with fixtures.ClimateEnvironment() as environment:
        for name, rack in (('compute-1', 'r1'), ('compute-2', 'r1'),
                           ('compute-3', 'r2')):
            resp = environment.request(
                'POST', '/v1/os-hosts', persona=ADMIN,
                body={'name': name, 'rack': rack, 'vcpus': 8,
                      'memory_mb': 16384, 'local_gb': 100})
            assert resp.status_int == 201, resp.text
        yield environment


def lease(env, name, start, end, reservation):
    resp = env.request('POST', '/v1/leases', body={
        'name': name, 'start_date': fixtures.iso(start),
        'end_date': fixtures.iso(end), 'reservations': [reservation]},
        version=V)
    assert resp.status_int == 201, resp.text
    return resp.json['lease']


def window(env, expect, **body):
    body.setdefault('name', 'w')
    body.setdefault('start_date', fixtures.iso(2 * 3600))
    body.setdefault('end_date', fixtures.iso(3 * 3600))
    resp = env.request('POST', '/v1/maintenance-windows', body=body,
                       persona=ADMIN, version=V)
    assert resp.status_int == expect, resp.text
    return resp.json.get('maintenance_window') or resp.json


def host(name, count=1):
    return {'resource_type': 'physical:host', 'min': count, 'max': count,
            'hypervisor_properties': '["=", "$hypervisor_hostname", "%s"]' %
            name, 'resource_properties': ''}


def test_hosts_by_filter_and_a_host_left_to_its_lease(env):
    kept = lease(env, 'kept', 3600, 4 * 3600, host('compute-1'))
    plan = window(env, 200, resource_properties='["=", "$rack", "r1"]',
                  dry_run=True)
    assert [h['name'] for h in plan['hosts']] == ['compute-1', 'compute-2']
    assert [(a['lease_id'], sorted(a['options'])) for a in
            plan['affected']] == [(kept['id'], ['leave', 'shorten'])]
    applied = window(env, 201, resource_properties='["=", "$rack", "r1"]',
                     actions={kept['id']: 'leave'})
    # compute-1 stays with the lease: the window takes compute-2 only
    assert [h['name'] for h in applied['hosts']] == ['compute-2']
    assert applied['affected'][0]['done'].startswith(
        'left on host(s) compute-1')
    shown = env.request('GET', '/v1/leases/' + kept['id'],
                        version=V).json['lease']
    assert shown['end_date'] == kept['end_date']
    assert shown['status_reason'].startswith('maintenance window w (')
    # the window's lease books compute-2 over it
    holder = env.request('GET', '/v1/leases/' + applied['lease_id'],
                         version=V, persona=ADMIN).json['lease']
    assert holder['name'] == 'maintenance: w'
    assert (holder['start_date'], holder['end_date']) == (
        applied['start_date'], applied['end_date'])


def test_instance_slots_on_a_host_are_hits_and_cannot_move(env):
    slots = lease(env, 'slots', 2 * 3600, 5 * 3600, {
        'resource_type': 'virtual:instance', 'amount': 3, 'vcpus': 8,
        'memory_mb': 1024, 'disk_gb': 10, 'affinity': False,
        'resource_properties': ''})
    plan = window(env, 200, hosts=['compute-1', 'compute-2', 'compute-3'],
                  dry_run=True)
    assert [(a['name'], sorted(a['options'])) for a in plan['affected']] \
        == [('slots', ['leave'])]
    resp = window(env, 409, hosts=['compute-1', 'compute-2', 'compute-3'],
                  actions={slots['id']: 'move'})
    assert resp['error_name'] == 'MaintenanceActionImpossible'
    assert 'its options are leave' in resp['error_message']
    resp = window(env, 409, hosts=['compute-1', 'compute-2', 'compute-3'],
                  default_action='leave')
    assert resp['error_name'] == 'MaintenanceNothingLeft'
    listed = env.request('GET', '/v1/maintenance-windows', persona=ADMIN,
                         version=V).json['maintenance_windows']
    assert listed == []


def test_an_active_lease_is_shortened_not_moved_and_a_cancel_frees(env):
    running = lease(env, 'running', 3600, 5 * 3600, host('compute-3'))
    with db_api.writer(context.admin_context()) as session:
        session.query(models.Lease).filter_by(id=running['id']).update(
            {'status': states.ACTIVE})
        lease_json.changed(session, (running['id'],))
    plan = window(env, 200, hosts=['compute-3'], dry_run=True)
    assert sorted(plan['affected'][0]['options']) == ['leave', 'shorten']
    applied = window(env, 201, hosts=['compute-3'], default_action='shorten')
    shown = env.request('GET', '/v1/leases/' + running['id'],
                        version=V).json['lease']
    assert shown['end_date'] == applied['start_date']
    assert applied['affected'][0]['done'].startswith('shortened to end at')
    # nothing books compute-3 over the window now
    blocked = env.request('POST', '/v1/leases', body={
        'name': 'blocked', 'start_date': fixtures.iso(2 * 3600 + 60),
        'end_date': fixtures.iso(2 * 3600 + 1800),
        'reservations': [host('compute-3')]}, version=V)
    assert blocked.status_int == 409, blocked.text
    resp = env.request('DELETE', '/v1/maintenance-windows/' + applied['id'],
                       persona=ADMIN, version=V)
    assert resp.status_int == 204, resp.text
    # twice is harmless
    assert env.request('DELETE', '/v1/maintenance-windows/' +
                       applied['id'], persona=ADMIN,
                       version=V).status_int == 204
    shown = env.request('GET', '/v1/maintenance-windows/' + applied['id'],
                        persona=ADMIN, version=V).json['maintenance_window']
    assert (shown['status'], shown['lease_id']) == ('CANCELLED', None)
    free = env.request('POST', '/v1/leases', body={
        'name': 'free', 'start_date': fixtures.iso(2 * 3600 + 60),
        'end_date': fixtures.iso(2 * 3600 + 1800),
        'reservations': [host('compute-3')]}, version=V)
    assert free.status_int == 201, free.text
