"""Billing arithmetic (climate.scheduling.billing): the rate table's
checks and the bill of a period."""

import datetime

import pytest

from climate.scheduling import billing

T0 = datetime.datetime(2090, 1, 1)
H = datetime.timedelta(hours=1)
RATES = billing.check({'currency': 'EUR', 'lease_fee': 0.5,
                       'hourly': {'VCPU': 0.02, 'HOST': 1.5},
                       'advance_premium': {'after_hours': 24,
                                           'factor': 1.25}})


def consumed(lease, cls, hours, created=T0, start=T0, project='p'):
    return billing.Consumed(project, lease, 'name-' + lease, created, start,
                            'physical:host', cls, int(hours * 3600))


def test_a_table_gets_the_missing_fields():
    assert billing.check({}) == billing.EMPTY
    assert billing.check({'hourly': {'VCPU': 1}})['lease_fee'] == 0


@pytest.mark.parametrize('rates,field', [
    ([], 'rates'),
    ({'fee': 1}, 'fee'),
    ({'lease_fee': -1}, 'lease_fee'),
    ({'lease_fee': True}, 'lease_fee'),
    ({'lease_fee': 10 ** 10}, 'lease_fee'),
    ({'hourly': []}, 'hourly'),
    ({'hourly': {'Vcpu': 1}}, 'hourly.Vcpu'),
    ({'hourly': {'VCPU': '1'}}, 'hourly.VCPU'),
    ({'currency': 12}, 'currency'),
    ({'advance_premium': 2}, 'advance_premium'),
    ({'advance_premium': {'factor': 2}}, 'advance_premium.after_hours'),
    ({'advance_premium': {'factor': 2, 'after_hours': 1, 'x': 1}},
     'advance_premium.x'),
    ({'advance_premium': {'factor': 101, 'after_hours': 1}},
     'advance_premium.factor'),
    ({'advance_premium': {'factor': 2, 'after_hours': -1}},
     'advance_premium.after_hours'),
])
def test_a_bad_table_names_its_field(rates, field):
    with pytest.raises(billing.BadRates) as exc:
        billing.check(rates)
    assert exc.value.field == field


def test_the_bill_prices_consumption_and_fees():
    rows = [
        # made on the spot: the rate
        consumed('a', 'VCPU', 10, start=T0 + H),
        consumed('a', 'HOST', 2, start=T0 + H),
        # made two days ahead: the premium
        consumed('b', 'VCPU', 4, start=T0 + 48 * H),
        # a class without a price: counted, free
        consumed('b', 'DISK_GB', 100, start=T0 + 48 * H),
        # started before the period: no fee in it
        consumed('c', 'HOST', 1, created=T0 - 10 * H, start=T0 - 10 * H),
    ]
    bill = billing.bill(rows, RATES, T0, T0 + 72 * H, T0 + 60 * H)
    got = [(x['lease_id'], x['kind'], x['resource_class'], x['quantity'],
            x['rate'], x['factor'], x['charge']) for x in bill['lines']]
    assert got == [
        ('a', 'lease_fee', None, 1, 0.5, 1, 0.5),
        ('a', 'usage', 'HOST', 2.0, 1.5, 1, 3.0),
        ('a', 'usage', 'VCPU', 10.0, 0.02, 1, 0.2),
        ('b', 'lease_fee', None, 1, 0.5, 1, 0.5),
        ('b', 'usage', 'DISK_GB', 100.0, 0, 1.25, 0.0),
        ('b', 'usage', 'VCPU', 4.0, 0.02, 1.25, 0.1),
        ('c', 'usage', 'HOST', 1.0, 1.5, 1, 1.5)]
    assert bill['total'] == 5.8
    assert bill['currency'] == 'EUR'


def test_no_fee_before_the_lease_starts():
    rows = [consumed('a', 'VCPU', 0, start=T0 + 10 * H)]
    bill = billing.bill(rows, RATES, T0, T0 + 72 * H, T0 + 5 * H)
    assert [x['kind'] for x in bill['lines']] == ['usage']
