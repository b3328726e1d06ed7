"""climate.db.floatingips on SQLite: the registration writes the address's
ledger inventory in its transaction, a duplicate writes nothing, a booked
address cannot leave, and migration 0011 goes down and up."""

import datetime

import pytest

from climate.db import api as db_api
from climate.db import floatingips as db_fips
from climate.db.ledger import booking
from climate import exceptions
from climate.tests.unit.db import ledger_checks

T0 = datetime.datetime(2090, 1, 1)
T1 = T0 + datetime.timedelta(hours=2)


def _fip(ctx, address='172.24.4.10', network='net'):
    return db_fips.fip_create(ctx, {
        'floating_network_id': network, 'floating_ip_address': address,
        'subnet_id': None, 'reservable': True})


def _inventory(ctx):
    return ledger_checks.inventory_totals(ctx, db_fips.KIND)


def test_canonical_addresses():
    assert db_fips.canonical('172.24.4.10') == '172.24.4.10'
    assert db_fips.canonical(' 2001:DB8:0:0::1 ') == '2001:db8::1'
    for bad in ('172.24.4', '1.2.3.256', '', None, 5, 'ｘ', '1.2.3.4/32'):
        assert db_fips.canonical(bad) is None
    assert sorted(['10.0.0.10', '2001:db8::1', '10.0.0.9'],
                  key=db_fips.address_key) == [
        '10.0.0.9', '10.0.0.10', '2001:db8::1']


def test_create_and_delete_follow_in_the_ledger(ctx):
    fip = _fip(ctx)
    provider = db_fips.provider(fip['id'])
    assert db_fips.fip_of(provider) == fip['id']
    assert db_fips.fip_of('volume_pool:1') is None
    assert _inventory(ctx) == {provider: {'FLOATING_IP': 1}}
    db_fips.fip_delete(ctx, fip['id'])
    assert _inventory(ctx) == {}
    assert db_fips.fip_list(ctx) == []
    with pytest.raises(exceptions.FloatingIPNotFound):
        db_fips.fip_delete(ctx, fip['id'])


def test_a_duplicate_is_a_conflict_and_writes_nothing(ctx):
    first = _fip(ctx)
    with pytest.raises(exceptions.FloatingIPAlreadyExists) as info:
        _fip(ctx)
    assert first['id'] in str(info.value)
    assert len(db_fips.fip_list(ctx)) == 1
    assert len(_inventory(ctx)) == 1


def test_a_booked_address_cannot_leave(ctx):
    fip = _fip(ctx)
    provider = db_fips.provider(fip['id'])
    with db_api.writer(ctx) as session:
        res = ledger_checks.reservation_row(session, 'virtual:floatingip',
                                            T0, T1)
        booking.book(session, res.id, res.lease_id,
                     [booking.Request(provider, 'FLOATING_IP', 1)], T0, T1)
        # one address, one booking at a time
        with pytest.raises(exceptions.Conflict):
            booking.book(session, res.id, res.lease_id,
                         [booking.Request(provider, 'FLOATING_IP', 1)],
                         T0 + datetime.timedelta(hours=1),
                         T1 + datetime.timedelta(hours=1))
    with pytest.raises(exceptions.CantDeleteFloatingIP) as info:
        db_fips.fip_delete(ctx, fip['id'])
    assert info.value.code == 409
    assert db_fips.fip_get(ctx, fip['id'])
    assert _inventory(ctx) == {provider: {'FLOATING_IP': 1}}


def test_migration_0011_goes_down_and_up(ctx):
    _fip(ctx)
    ledger_checks.assert_round_trip('0010', 'floatingips', db_fips.KIND)
