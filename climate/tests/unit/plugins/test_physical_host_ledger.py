"""physical:host on the capacity ledger: a host reserved whole and
instance slots on it are two views of one ledger, the host inventory
keeps the ledger inventory, static registrations state overcommit."""

import datetime

import pytest

from climate import context
from climate import dates
from climate.db import api as db_api
from climate.db import hosts as db_hosts
from climate.db.ledger import inventory as ledger_inventory
from climate.db.ledger import windows
from climate.db import models
from climate import exceptions
from climate.tests import fixtures
from climate.tests.unit.plugins import test_physical_host as base

T0 = datetime.datetime(2090, 1, 1)
SHAPE = {'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 10}


def at(hours):
    return T0 + datetime.timedelta(hours=hours)


def text(when):
    return when.strftime('%Y-%m-%d %H:%M')


@pytest.fixture
def env():
    with fixtures.ClimateEnvironment() as environment:
        plugin = environment.plugin('physical:host')
        plugin._backend = base.RecordingBackend(None)
        environment.backend = plugin._backend
        yield environment


def add_hosts(env, count, **facts):
    facts = dict({'vcpus': 8, 'memory_mb': 8192, 'local_gb': 100}, **facts)
    for i in range(count):
        base.admin(env, 'POST', '/v1/os-hosts', dict(name='h%02d' % i,
                                                    **facts), expect=201)


def inventory(provider):
    ctx = context.admin_context()
    with db_api.reader(ctx) as session:
        return {cls: (inv.total, inv.allocation_ratio) for cls, inv in
                ledger_inventory.inventories_of(session, [provider]).get(
                    provider, {}).items()}


def test_a_host_with_an_instance_slot_is_not_reserved_whole(env):
    add_hosts(env, 2)
    _lease, slot_res, placed = env.book_slots(
        'slot', at(0), at(4), SHAPE, providers=['1'])
    assert placed == {'1': 1}
    # overlapping the slot: only host 2 is free
    lease = base.host_lease(env, 'whole', text(at(1)), text(at(2)))
    assert base.hosts_of(env, lease) == ['2']
    # and with host 2 taken, none is
    refused = base.host_lease(env, 'none', text(at(1)), text(at(5)),
                              expect=409)
    assert '2 host(s) match the filters and 0 of them are free' in \
        refused['error_message'], refused
    # the availability search and the timeline count the slot too
    found = base.admin(env, 'POST', '/v1/os-hosts/availability',
                       {'count': 2, 'duration': '1h',
                        'earliest_start': text(at(0))},
                       version='1.2')['availability']
    assert found['windows'][0]['start'].startswith('2090-01-01T04:00'), found
    # after the slot's end both are free again
    both = base.host_lease(env, 'after', text(at(4)), text(at(6)), low=2)
    assert base.hosts_of(env, both) == ['1', '2']
    # the host reservation's bookings: HOST and all the usable capacity
    mine = [b for b in env.bookings()
            if b[5] == both['reservations'][0]['id']]
    assert sorted((b[0], b[1], b[2]) for b in mine) == [
        ('1', 'DISK_GB', 100), ('1', 'HOST', 1), ('1', 'MEMORY_MB', 8192),
        ('1', 'VCPU', 8), ('2', 'DISK_GB', 100), ('2', 'HOST', 1),
        ('2', 'MEMORY_MB', 8192), ('2', 'VCPU', 8)]
    # a reserved host cannot leave while the slot holds it
    resp = env.request('DELETE', '/v1/os-hosts/1', persona='admin')
    assert resp.status_int == 409
    assert "Can't delete host 1. The host is reserved." in resp.text
    assert slot_res in resp.text


def test_a_booking_of_any_one_class_makes_a_host_busy_for_the_choice(env):
    """The host choice's own reads (db.hosts.free_candidates, and
    free_hosts, which counts a refusal) take a host with a booking of any
    class over the window as busy, one gigabyte of disk alone too, and
    free again outside it."""
    add_hosts(env, 3)
    _lease, _res, placed = env.book_slots(
        'disk', at(0), at(2), {'DISK_GB': 1}, providers=['1'])
    assert placed == {'1': 1}
    ctx = context.admin_context()
    horizon = datetime.timedelta(hours=1)
    assert db_hosts.free_hosts(ctx, [1, 2, 3], at(1), at(3)) == [2, 3]
    rows, count = db_hosts.free_candidates(ctx, [1, 2, 3], at(1), at(3), 3,
                                           horizon)
    assert sorted(r[0] for r in rows) == [2, 3] and count == 2
    assert db_hosts.free_hosts(ctx, [1, 2, 3], at(2), at(3)) == [1, 2, 3]
    rows, count = db_hosts.free_candidates(ctx, [1, 2, 3], at(2), at(3), 3,
                                           horizon)
    assert sorted(r[0] for r in rows) == [1, 2, 3] and count == 3


def test_a_host_reserved_whole_takes_no_instance_slot(env):
    add_hosts(env, 2)
    lease = base.host_lease(env, 'whole', text(at(0)), text(at(4)))
    taken = base.hosts_of(env, lease)
    assert taken == ['1']
    # overlapping: the slots go to host 2 only
    _l, _r, placed = env.book_slots('slots', at(1), at(2), SHAPE, count=3)
    assert placed == {'2': 3}
    with pytest.raises(exceptions.Conflict):
        env.book_slots('on-1', at(3), at(5), SHAPE, providers=['1'])
    # not overlapping: host 1 takes slots again
    _l, _r, placed = env.book_slots('later', at(4), at(5), SHAPE,
                                    providers=['1'])
    assert placed == {'1': 1}


def test_the_whole_booking_is_rechecked_under_lock(env):
    """A slot booked between the search and the booking (a concurrent
    instance reservation) makes the host booking a Conflict, never an
    overbooking: booking.book re-checks under the lock."""
    add_hosts(env, 1)
    lease = base.host_lease(env, 'later', text(at(10)), text(at(11)))
    res_id = lease['reservations'][0]['id']
    env.book_slots('slot', at(0), at(4), SHAPE, providers=['1'])
    ctx = context.admin_context()
    with pytest.raises(exceptions.Conflict):
        with db_api.writer(ctx):
            db_hosts.allocations_add(ctx, res_id, lease['id'], [1], at(1),
                                     at(2))
    assert [b for b in env.bookings('HOST') if b[3] == at(1)] == []


def test_an_active_extension_is_refused_by_a_slot(env):
    add_hosts(env, 1)
    start = dates.utcnow().replace(microsecond=0)
    lease = base.host_lease(env, 'run', 'now',
                            text(start + datetime.timedelta(hours=2)))
    base.wait_status(env, lease['id'], 'ACTIVE')
    env.book_slots('slot', start + datetime.timedelta(hours=3),
                   start + datetime.timedelta(hours=5), SHAPE)
    resp = env.request('PUT', '/v1/leases/' + lease['id'], body={
        'end_date': text(start + datetime.timedelta(hours=6))})
    assert resp.status_int == 409, resp.text
    assert 'it can end at' in resp.text


def test_a_pending_move_moves_every_class(env):
    add_hosts(env, 1)
    lease = base.host_lease(env, 'move', text(at(0)), text(at(1)))
    resp = env.request('PUT', '/v1/leases/' + lease['id'], body={
        'start_date': text(at(5)), 'end_date': text(at(7))})
    assert resp.status_int == 200, resp.text
    rows = env.rows(models.LedgerBooking)
    assert len(rows) == 4
    assert {(r.start_date, r.end_date, r.span_level) for r in rows} == {
        (at(5), at(7), windows.span_level(at(5), at(7)))}


def test_registration_sets_the_ledger_inventory_and_ratios(env):
    host = base.admin(env, 'POST', '/v1/os-hosts', {
        'name': 'big', 'vcpus': 4, 'memory_mb': 2048, 'local_gb': 0,
        'cpu_allocation_ratio': 4, 'ram_allocation_ratio': '1.5'},
        expect=201)['host']
    assert host['cpu_allocation_ratio'] == 4.0
    assert host['ram_allocation_ratio'] == 1.5
    assert host['disk_allocation_ratio'] is None
    # a class with a total of 0 is left out
    assert inventory(host['id']) == {'HOST': (1, 1.0), 'VCPU': (4, 4.0),
                                     'MEMORY_MB': (2048, 1.5)}
    # four times the cores: eight slots of two VCPUs
    _l, _r, placed = env.book_slots('dense', at(0), at(1),
                                    {'VCPU': 2, 'MEMORY_MB': 256}, count=8)
    assert placed == {host['id']: 8}
    shown = base.admin(env, 'GET', '/v1/os-hosts/' + host['id'])['host']
    assert shown['cpu_allocation_ratio'] == 4.0
    # a host with no facts still has its HOST inventory
    bare = base.admin(env, 'POST', '/v1/os-hosts', {'name': 'bare'},
                      expect=201)['host']
    assert inventory(bare['id']) == {'HOST': (1, 1.0)}
    # deleting a host removes its inventory
    env.request('DELETE', '/v1/os-hosts/' + bare['id'], persona='admin')
    assert inventory(bare['id']) == {}


@pytest.mark.parametrize('value', [0, -1, 'x', True, None, 'nan', 1e300,
                                   [], '1e7'])
def test_a_bad_allocation_ratio_is_400_naming_it(env, value):
    before = env.snapshot()
    resp = env.request('POST', '/v1/os-hosts', persona='admin', body={
        'name': 'h', 'vcpus': 2, 'ram_allocation_ratio': value})
    assert resp.status_int == 400, resp.text
    assert 'ram_allocation_ratio' in resp.text
    assert env.snapshot() == before


def test_an_update_sets_allocation_ratios_and_the_ledger(env):
    add_hosts(env, 1, cpu_allocation_ratio=2)
    assert inventory('1')['VCPU'] == (8, 2.0)
    # six slots of two VCPUs: 12 of the 16 usable
    _l, _r, placed = env.book_slots('slots', at(0), at(4),
                                    {'VCPU': 2, 'MEMORY_MB': 256}, count=6)
    assert placed == {'1': 6}

    # 12 VCPUs usable still fit: the ledger inventory follows the host
    host = base.admin(env, 'PUT', '/v1/os-hosts/1', {
        'values': {'cpu_allocation_ratio': '1.5'}})['host']
    assert host['cpu_allocation_ratio'] == 1.5
    assert inventory('1')['VCPU'] == (8, 1.5)

    # 8 do not: refused, nothing changed (the capability neither)
    before = env.snapshot()
    for body, given in (({'cpu_allocation_ratio': 1}, '1'),
                        ({'cpu_allocation_ratio': None, 'gpu': 'true'},
                         'null (1.0)')):
        resp = env.request('PUT', '/v1/os-hosts/1', persona='admin',
                           body=body)
        assert resp.status_int == 409, resp.text
        assert resp.json['error_message'] == (
            'Conflict: host h00 (1) cannot take cpu_allocation_ratio %s: '
            'the usable VCPU of provider 1 cannot become 8: 12 are booked '
            'at 2090-01-01 00:00:00 UTC. Reservations not yet over count on '
            'the capacity it has; lower the ratio once they are over.' %
            given)
        assert env.snapshot() == before
    assert inventory('1')['VCPU'] == (8, 1.5)

    # higher, with a capability: a host reserved whole takes all of it
    host = base.admin(env, 'PUT', '/v1/os-hosts/1', {
        'cpu_allocation_ratio': 4, 'ram_allocation_ratio': 2,
        'gpu': 'true'})['host']
    assert (host['cpu_allocation_ratio'], host['ram_allocation_ratio'],
            host['disk_allocation_ratio'], host['gpu']) == (
                4.0, 2.0, None, 'true')
    assert inventory('1') == {'HOST': (1, 1.0), 'VCPU': (8, 4.0),
                              'MEMORY_MB': (8192, 2.0),
                              'DISK_GB': (100, 1.0)}
    whole = base.host_lease(env, 'whole', text(at(10)), text(at(11)))
    res_id = whole['reservations'][0]['id']

    def held():
        return {b[1]: b[2] for b in env.bookings() if b[5] == res_id}

    assert held() == {'HOST': 1, 'VCPU': 32, 'MEMORY_MB': 16384,
                      'DISK_GB': 100}
    base.admin(env, 'PUT', '/v1/os-hosts/1', {'ram_allocation_ratio': None})
    assert held()['MEMORY_MB'] == 8192
    assert inventory('1')['MEMORY_MB'] == (8192, 1.0)
    shown = base.admin(env, 'GET', '/v1/os-hosts/1')['host']
    assert shown['ram_allocation_ratio'] is None


@pytest.mark.parametrize('value', [0, -1, 'x', True, 'nan', [], '1e7'])
def test_a_bad_allocation_ratio_update_is_400_naming_it(env, value):
    add_hosts(env, 1)
    before = env.snapshot()
    resp = env.request('PUT', '/v1/os-hosts/1', persona='admin',
                       body={'disk_allocation_ratio': value, 'gpu': 'x'})
    assert resp.status_int == 400, resp.text
    assert 'disk_allocation_ratio' in resp.text
    assert env.snapshot() == before


def test_allocation_ratios_are_placements_with_nova(env):
    add_hosts(env, 1)
    env.backend.name = 'nova'
    resp = env.request('PUT', '/v1/os-hosts/1', persona='admin',
                       body={'cpu_allocation_ratio': 2})
    assert resp.status_int == 400, resp.text
    assert 'cpu_allocation_ratio is a fact of the host; it cannot be ' \
        'changed' in resp.text
