"""Billing arithmetic, free of I/O: the operator's rate table checked,
and what each lease consumed within a period priced by it
(``climate.manager.billing`` reads the rows, ``climate.db.billing``).

A rate table::

    {"currency": "EUR",
     "lease_fee": 0.5,                      # once per lease started
     "hourly": {"VCPU": 0.02, "HOST": 1.5}, # per resource-hour consumed
     "advance_premium": {"after_hours": 24, "factor": 1.25}}

``advance_premium``: the resource-hours of a lease made at least
``after_hours`` before its start (a reservation of the future) cost
``factor`` times the rate.
"""

import collections
import re

from climate.scheduling import usage

FIELDS = ('currency', 'lease_fee', 'hourly', 'advance_premium')
PREMIUM_FIELDS = ('after_hours', 'factor')
_CURRENCY = re.compile(r'^[A-Za-z][A-Za-z0-9_.-]{0,15}$')
#: Beyond it a price is a typing mistake.
MAX_PRICE = 10 ** 9
MAX_FACTOR = 100.0
#: Decimals of a charge.
PLACES = 4

EMPTY = {'currency': '', 'lease_fee': 0, 'hourly': {},
         'advance_premium': None}

#: What one lease consumed of one class within a period.
Consumed = collections.namedtuple(
    'Consumed', 'project_id lease_id lease_name lease_created_at '
    'lease_start_date resource_type resource_class seconds')


class BadRates(ValueError):
    """A rate table that cannot be used: ``field`` names where."""

    def __init__(self, field, reason):
        super().__init__('%s %s' % (field, reason))
        self.field = field


def _price(value, field):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadRates(field, 'must be a number, not %r' % (value,))
    if not 0 <= value <= MAX_PRICE:
        raise BadRates(field, 'must be between 0 and %d, not %r' % (
            MAX_PRICE, value))
    return value


def check(rates):
    """The rate table ``rates`` as stored, every field checked
    (:class:`BadRates` naming the first bad one); missing fields take
    :data:`EMPTY`'s."""
    if not isinstance(rates, dict):
        raise BadRates('rates', 'must be an object')
    unknown = sorted(set(rates) - set(FIELDS))
    if unknown:
        raise BadRates(unknown[0], 'is not a field of a rate table (%s)' %
                       ', '.join(FIELDS))
    out = dict(EMPTY)
    currency = rates.get('currency', '')
    if currency != '' and (not isinstance(currency, str) or
                           not _CURRENCY.match(currency)):
        raise BadRates('currency', 'must be a short code such as EUR, not '
                       '%r' % (currency,))
    out['currency'] = currency
    out['lease_fee'] = _price(rates.get('lease_fee', 0), 'lease_fee')
    hourly = rates.get('hourly', {})
    if not isinstance(hourly, dict):
        raise BadRates('hourly', 'must be an object of resource classes, '
                       'e.g. {"VCPU": 0.02}')
    for cls, price in hourly.items():
        if not isinstance(cls, str) or not usage.RESOURCE_CLASS.match(cls):
            raise BadRates('hourly.%s' % cls, 'is not a resource class '
                           '(upper case letters, digits and underscores)')
        _price(price, 'hourly.%s' % cls)
    out['hourly'] = dict(hourly)
    premium = rates.get('advance_premium')
    if premium is not None:
        if not isinstance(premium, dict):
            raise BadRates('advance_premium', 'must be an object with '
                           'after_hours and factor, or null')
        unknown = sorted(set(premium) - set(PREMIUM_FIELDS))
        missing = sorted(set(PREMIUM_FIELDS) - set(premium))
        if unknown or missing:
            raise BadRates('advance_premium.%s' % (unknown or missing)[0],
                           'is %s; it has after_hours and factor' % (
                               'unknown' if unknown else 'missing'))
        _price(premium['after_hours'], 'advance_premium.after_hours')
        factor = premium['factor']
        if isinstance(factor, bool) or not isinstance(
                factor, (int, float)) or not 0 < factor <= MAX_FACTOR:
            raise BadRates('advance_premium.factor', 'must be a number above '
                           '0 and at most %g, not %r' % (MAX_FACTOR, factor))
        out['advance_premium'] = dict(premium)
    return out


def factor(rates, created_at, start):
    """The premium factor of a lease made at ``created_at`` to start at
    ``start``."""
    premium = rates.get('advance_premium')
    if premium and (start - created_at).total_seconds() >= \
            premium['after_hours'] * 3600.0:
        return premium['factor']
    return 1


def bill(rows, rates, start, end, now):
    """The bill of a period from :class:`Consumed` rows: a line per lease
    and class (resource-hours consumed, rate, factor, charge), a line per
    lease started within the period and before ``now`` (its fee), and the
    total.  Lines by project, lease name, then class."""
    lines = []
    fees = {}
    for row in rows:
        hours = usage.hours(row.seconds)
        rate = rates['hourly'].get(row.resource_class, 0)
        lease_factor = factor(rates, row.lease_created_at,
                              row.lease_start_date)
        lines.append({
            'project_id': row.project_id, 'lease_id': row.lease_id,
            'lease_name': row.lease_name, 'kind': 'usage',
            'resource_type': row.resource_type,
            'resource_class': row.resource_class,
            'unit': usage.unit(row.resource_class), 'quantity': hours,
            'rate': rate, 'factor': lease_factor,
            'charge': round(hours * rate * lease_factor, PLACES)})
        if start <= row.lease_start_date < min(end, now) and \
                row.lease_id not in fees:
            fees[row.lease_id] = {
                'project_id': row.project_id, 'lease_id': row.lease_id,
                'lease_name': row.lease_name, 'kind': 'lease_fee',
                'resource_type': None, 'resource_class': None,
                'unit': 'lease', 'quantity': 1, 'rate': rates['lease_fee'],
                'factor': 1, 'charge': round(rates['lease_fee'], PLACES)}
    lines.extend(fees.values())
    lines.sort(key=lambda x: (x['project_id'], x['lease_name'],
                              x['lease_id'], x['kind'] != 'lease_fee',
                              x['resource_type'] or '',
                              x['resource_class'] or ''))
    return {'currency': rates['currency'], 'lines': lines,
            'total': round(sum(x['charge'] for x in lines), PLACES)}
