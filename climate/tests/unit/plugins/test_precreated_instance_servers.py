"""One server, one lease at a time: a pre-created ``virtual:instance``
reservation holds its server on the capacity ledger (``server:<id>``,
class ``SERVER``, total 1: ``climate.db.servers``) over its window, in
the transaction of its slot, so a second lease naming the same server
over an overlapping window is a 409 that writes nothing; moves,
extensions, the end and the delete move or free it with the slot.
Through the in-process API on SQLite, with the recording backend of
``test_precreated_instances``."""

import datetime

import pytest

from climate import context
from climate.db import api as db_api
from climate.db.ledger import inventory as ledger_inventory
from climate.db import models
from climate.db import servers
from climate import exceptions
from climate.tests import fixtures
from climate.tests.unit.plugins import test_precreated_instances as pre
from climate.tests.unit.plugins import test_virtual_instance as base

env = pre.env
START, END = base.START, base.END            # 2090-01-01 00:00 -> 02:00
LATER = ('2090-01-01 03:00', '2090-01-01 05:00')
HELD = ('Conflict: server srv-1 is already held by lease %s from '
        '2090-01-01 00:00:00 to 2090-01-01 02:00:00 UTC; a server is held '
        'by one lease at a time. Choose a window that does not overlap '
        'that one, or another server.')


def server_bookings():
    """``[(reservation, provider, amount, start, end)]`` of SERVER."""
    return [(r, p, a, s, e) for r, p, c, a, s, e in base.bookings()
            if c == servers.SERVER]


def server_inventories():
    ctx = context.admin_context()
    with db_api.reader(ctx) as session:
        return ledger_inventory.inventories_of(session, kind=servers.KIND)


def add_gpu_host(env):
    """Host 2, the one ``GPU`` matches."""
    base.admin(env, 'POST', '/v1/os-hosts', dict(
        name='gpu', vcpus=4, memory_mb=4096, local_gb=40, gpu='true'),
        expect=201)
    base.ensure_inventory()


GPU = '["=", "$gpu", "true"]'


def put(env, lease_id, body, expect=200):
    resp = env.request('PUT', '/v1/leases/' + lease_id, body=body,
                       version='1.4')
    assert resp.status_int == expect, resp.text
    return resp.json.get('lease') or resp.json


def test_a_named_server_is_held_over_the_window(env):
    base.add_hosts(env, 1)
    made = pre.create(env, {'server_id': 'srv-1'})
    res_id = made['reservations'][0]['id']
    window = (datetime.datetime(2090, 1, 1), datetime.datetime(2090, 1, 1, 2))
    assert server_bookings() == [(res_id, 'server:srv-1', 1) + window]
    inventory = server_inventories()['server:srv-1'][servers.SERVER]
    assert (inventory.total, inventory.max_unit) == (1, 1)
    # the slot is booked as before
    assert base.units_of(res_id) == {'1': 2}


def test_overlapping_leases_naming_one_server_second_is_409(env):
    base.add_hosts(env, 2)
    first = pre.create(env, {'server_id': 'srv-1'})
    before = base.unchanged(env)
    calls = list(env.backend.calls)
    for start, end in ((START, END), ('2090-01-01 01:00', '2090-01-01 04:00'),
                       ('2089-12-31 23:00', '2090-01-01 00:01')):
        resp = pre.create(env, {'server_id': 'srv-1'}, start=start, end=end,
                          expect=409)
        assert resp['error_name'] == 'Conflict', resp
        assert resp['error_message'] == HELD % first['id'], resp
    # nothing written, nothing done to the server
    assert base.unchanged(env) == before
    assert env.backend.calls == calls


def test_held_is_said_even_when_the_hosts_are_full_too(env):
    base.add_hosts(env, 1, vcpus=2)   # room for one slot of m1.small
    first = pre.create(env, {'server_id': 'srv-1'})
    before = base.unchanged(env)
    resp = pre.create(env, {'server_id': 'srv-1'}, expect=409)
    assert resp['error_message'] == HELD % first['id'], resp
    assert base.unchanged(env) == before


def test_two_reservations_of_one_lease_naming_one_server(env):
    base.add_hosts(env, 2)
    before = base.unchanged(env)
    resp = env.request('POST', '/v1/leases', version='1.4', body={
        'name': 'twice', 'start_date': START, 'end_date': END,
        'reservations': [{'resource_type': 'virtual:instance',
                          'server_id': 'srv-1'}] * 2})
    assert resp.status_int == 409, resp.text
    assert 'server srv-1 is already held by another reservation of this ' \
           'lease from 2090-01-01 00:00:00' in resp.json['error_message']
    assert base.unchanged(env) == before


def test_non_overlapping_leases_both_hold_it(env):
    base.add_hosts(env, 1)
    first = pre.create(env, {'server_id': 'srv-1'})
    # [00:00, 02:00) and [02:00, 04:00) touch, never overlap
    second = pre.create(env, {'server_id': 'srv-1'}, start=END,
                        end='2090-01-01 04:00')
    third = pre.create(env, {'server_id': 'srv-1'}, start=LATER[1],
                       end='2090-01-01 06:00')
    held = sorted((r, s, e) for r, _p, _a, s, e in server_bookings())
    assert len(held) == 3
    assert {r for r, _s, _e in held} == {
        lease['reservations'][0]['id'] for lease in (first, second, third)}
    # one SERVER inventory row for the server, whoever made it
    assert list(server_inventories()) == ['server:srv-1']


def test_moving_a_lease_into_the_others_window_is_refused(env):
    base.add_hosts(env, 1)
    add_gpu_host(env)
    first = pre.create(env, {'server_id': 'srv-1'})
    second = pre.create(env, {'server_id': 'srv-1'}, start=LATER[0],
                        end=LATER[1])
    before = base.unchanged(env)
    resp = put(env, second['id'], {'start_date': '2090-01-01 01:30'},
               expect=409)
    assert resp['error_message'] == HELD % first['id'], resp
    # also when the slot is placed again (a new filter moves nothing but
    # the hosts): the server goes with it
    resp = put(env, second['id'], {
        'start_date': '2090-01-01 01:30', 'reservations': [{
            'id': second['reservations'][0]['id'],
            'resource_properties': GPU}]}, expect=409)
    assert resp['error_message'] == HELD % first['id'], resp
    assert base.unchanged(env) == before
    # a move that stays clear of it is fine, and moves the server with it
    moved = put(env, second['id'], {'start_date': '2090-01-01 02:00'})
    res_id = moved['reservations'][0]['id']
    assert [(s, e) for r, _p, _a, s, e in server_bookings()
            if r == res_id] == [(datetime.datetime(2090, 1, 1, 2),
                                 datetime.datetime(2090, 1, 1, 5))]
    # the first may not grow into it either
    resp = put(env, first['id'], {'end_date': '2090-01-01 02:30'},
               expect=409)
    assert resp['error_message'] == (
        'Conflict: server srv-1 is already held by lease %s from '
        '2090-01-01 02:00:00 to 2090-01-01 05:00:00 UTC; a server is held '
        'by one lease at a time. Choose a window that does not overlap '
        'that one, or another server.' % second['id'])


def test_a_new_filter_keeps_the_server_held(env):
    base.add_hosts(env, 1)
    add_gpu_host(env)
    first = pre.create(env, {'server_id': 'srv-1'})
    res_id = first['reservations'][0]['id']
    assert base.units_of(res_id) == {'1': 2}
    put(env, first['id'], {'reservations': [{
        'id': res_id, 'resource_properties': GPU}]})
    assert [r for r, *_x in server_bookings()] == [res_id]
    assert base.units_of(res_id) == {'2': 2}
    pre.create(env, {'server_id': 'srv-1'}, expect=409)


def test_delete_frees_the_server(env):
    base.add_hosts(env, 1)
    first = pre.create(env, {'server_id': 'srv-1'})
    pre.create(env, {'server_id': 'srv-1'}, expect=409)
    resp = env.request('DELETE', '/v1/leases/' + first['id'])
    assert resp.status_int == 204, resp.text
    assert server_bookings() == []
    second = pre.create(env, {'server_id': 'srv-1'})
    assert [r for r, *_x in server_bookings()] == [
        second['reservations'][0]['id']]


def test_an_active_lease_cannot_grow_into_the_next_and_its_end_frees_it(env):
    base.add_hosts(env, 1)
    # ends in 7000 s: its before_end event (an hour before) is not due
    # now, so nothing runs while the lease is compared below
    first = pre.create(env, {'server_id': 'srv-1'}, start='now',
                       end=fixtures.iso(7000))
    base.wait_status(env, first['id'], 'ACTIVE')
    second = pre.create(env, {'server_id': 'srv-1'}, start=fixtures.iso(7200),
                        end=fixtures.iso(10800))
    before = base.unchanged(env)
    resp = put(env, first['id'], {'end_date': fixtures.iso(9000)},
               expect=409)
    assert resp['error_message'].startswith(
        'Conflict: server srv-1 is already held by lease %s from ' %
        second['id']), resp
    assert base.unchanged(env) == before
    # ends now: the end frees it
    put(env, first['id'], {'end_date': fixtures.iso(2)})
    base.wait_status(env, first['id'], 'TERMINATED')
    assert [r for r, *_x in server_bookings()] == [
        second['reservations'][0]['id']]


def test_another_projects_lease_is_not_named(env, monkeypatch):
    base.add_hosts(env, 2)
    first = pre.create(env, {'server_id': 'srv-1'})
    # the server's project as Nova says it now (it was project-a's)
    monkeypatch.setitem(pre.SERVERS, 'srv-1', 'project-b')
    resp = env.request('POST', '/v1/leases', project='project-b',
                       version='1.4', body={
                           'name': 'theirs', 'start_date': START,
                           'end_date': END, 'reservations': [{
                               'resource_type': 'virtual:instance',
                               'server_id': 'srv-1'}]})
    assert resp.status_int == 409, resp.text
    message = resp.json['error_message']
    assert first['id'] not in message, message
    assert message.startswith(
        "Conflict: server srv-1 is already held by another project's lease "
        'from 2090-01-01 00:00:00 to 2090-01-01 02:00:00 UTC'), message


def test_a_booted_server_is_held_once_its_id_is_known(env, monkeypatch):
    base.add_hosts(env, 2)
    booted = pre.create(env, {'server': {'name': 'vm', 'imageRef': 'i',
                                         'flavorRef': 'm1.small'}})
    res_id = booted['reservations'][0]['id']
    server_id = 'booted-' + res_id[:8]
    assert server_bookings()[0][:3] == (res_id, 'server:' + server_id, 1)
    # named afterwards by another lease of the project: refused
    monkeypatch.setitem(pre.SERVERS, server_id, 'project-a')
    before = base.unchanged(env)
    resp = pre.create(env, {'server_id': server_id}, expect=409)
    assert resp['error_message'].startswith(
        'Conflict: server %s is already held by lease %s' % (
            server_id, booted['id'])), resp
    assert base.unchanged(env) == before
    # after its window: fine
    pre.create(env, {'server_id': server_id}, start=LATER[0], end=LATER[1])


def test_a_booted_server_named_meanwhile_stays_the_other_leases(
        env, monkeypatch):
    """The boot found again a server of the reservation (its metadata)
    that another lease named before its id was stored: the reservation
    holds no server and says why; once the other lease lets go, the
    periodic pass holds it."""
    base.add_hosts(env, 2)
    monkeypatch.setitem(pre.SERVERS, 'srv-3', 'project-a')
    other = pre.create(env, {'server_id': 'srv-3'})
    monkeypatch.setattr(env.backend, 'boot',
                        lambda reservation, project_id, session: 'srv-3')
    booted = pre.create(env, {'server': {'name': 'vm', 'imageRef': 'i',
                                         'flavorRef': 'm1.small'}})
    found = base.get(env, booted['id'])
    res = found['reservations'][0]
    assert res['server_id'] is None
    assert res['server_error'] == (
        'Reservation %s holds no server: server srv-3 is already held by '
        'lease %s from 2090-01-01 00:00:00 to 2090-01-01 02:00:00 UTC; a '
        'server is held by one lease at a time. Choose a window that does '
        'not overlap that one, or another server.' % (res['id'],
                                                      other['id']))
    assert res['missing_resources'] is True and found['degraded'] is True
    assert [r for r, *_x in server_bookings()] == [
        other['reservations'][0]['id']]
    plugin = env.plugin('virtual:instance')
    plugin.heal(context.admin_context())
    assert base.get(env, booted['id'])['reservations'][0]['server_id'] \
        is None
    env.request('DELETE', '/v1/leases/' + other['id'])
    plugin.heal(context.admin_context())
    res = base.get(env, booted['id'])['reservations'][0]
    assert (res['server_id'], res['server_error']) == ('srv-3', None)
    assert [r for r, *_x in server_bookings()] == [res['id']]


def test_ensure_makes_the_row_once():
    with fixtures.ClimateEnvironment():
        ctx = context.admin_context()
        for _ in range(2):
            with db_api.writer(ctx) as session:
                servers.ensure(session, 'srv-x')
        with db_api.reader(ctx) as session:
            rows = session.query(models.LedgerInventory).filter_by(
                provider_id='server:srv-x').all()
        assert [(r.provider_kind, r.resource_class, r.total)
                for r in rows] == [('server', 'SERVER', 1)]
        assert servers.server_of('server:srv-x') == 'srv-x'
        assert servers.server_of('3') is None


@pytest.mark.parametrize('provider_id', ['volume_pool:1', '7'])
def test_a_conflict_of_another_provider_is_not_explained(provider_id):
    exc = exceptions.Conflict(reason='full', provider=provider_id)
    assert servers.explained(None, exc, 'lease', None, None) is None
