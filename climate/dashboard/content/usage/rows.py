"""The rows of the usage and quota tables, from the API's answers."""

from django.utils.translation import gettext_lazy as _

from climate.dashboard.api import climate as climate_api
from climate.dashboard import display

#: a limit the API gives as -1 or None: none
UNLIMITED = (None, -1)


def usage_rows(usage):
    """One row per resource type and class of ``/v1/usage``'s totals."""
    rows = []
    for total in usage.get('totals') or []:
        key = '%s/%s' % (total.get('resource_type'),
                         total.get('resource_class'))
        rows.append(climate_api.Row(key, total))
    return rows


def _limit(value, as_duration=False):
    if value in UNLIMITED:
        return _('No limit')
    return display.hours(value) if as_duration else value


def quota_rows(quota):
    """What ``/v1/quotas/{project}`` limits, with what the project holds
    against each limit."""
    usage = quota.get('usage') or {}
    held = usage.get('held_now') or {}
    concurrent = quota.get('max_concurrent') or {}
    rows = []
    for cls in sorted(set(concurrent) | set(held)):
        rows.append(climate_api.Row('concurrent/%s' % cls, {
            'limit_name': _('%s reserved at once') % cls,
            'limit': _limit(concurrent.get(cls)),
            'used': held.get(cls, 0)}))
    budget = quota.get('budget') or {}
    spent = usage.get('budget_used') or {}
    for cls in sorted(set(budget) | set(spent)):
        rows.append(climate_api.Row('budget/%s' % cls, {
            'limit_name': _('%(cls)s-hours per %(period)s') % {
                'cls': cls, 'period': quota.get('budget_period')},
            'limit': _limit(budget.get(cls)),
            'used': spent.get(cls, 0)}))
    rows.append(climate_api.Row('max_lease_duration', {
        'limit_name': _('Longest lease'),
        'limit': _limit(quota.get('max_lease_duration'), True),
        'used': display.MISSING}))
    rows.append(climate_api.Row('max_extension', {
        'limit_name': _('Longest extension'),
        'limit': _limit(quota.get('max_extension'), True),
        'used': display.MISSING}))
    return rows


def _hours(value):
    try:
        return max(0.0, float(value or 0))
    except (TypeError, ValueError):
        return 0.0


def usage_bars(usage):
    """The chart of ``/v1/usage``'s totals: a bar per resource type and
    class, as long as its total against the longest of the same unit,
    split into past, running now and booked ahead (percentages of the
    longest bar, so that the parts of a bar add up to its length)."""
    totals = usage.get('totals') or []
    longest = {}
    for total in totals:
        unit = total.get('unit')
        longest[unit] = max(longest.get(unit, 0.0), _hours(total.get('total'))
                            or sum(_hours(total.get(k))
                                   for k in ('past', 'current', 'future')))
    bars = []
    for total in totals:
        scale = longest.get(total.get('unit')) or 0.0
        parts = []
        for key, label in (('past', _('Past')), ('current', _('Running now')),
                           ('future', _('Booked ahead'))):
            value = _hours(total.get(key))
            parts.append({'key': key, 'label': label, 'value': value,
                          'percent': round(100.0 * value / scale, 2)
                          if scale else 0})
        bars.append({'id': '%s/%s' % (total.get('resource_type'),
                                      total.get('resource_class')),
                     'resource_type': total.get('resource_type'),
                     'resource_class': total.get('resource_class'),
                     'unit': total.get('unit'),
                     'total': _hours(total.get('total')),
                     'parts': parts})
    return bars


def _number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def quota_bars(quota):
    """The limits of ``/v1/quotas/{project}`` that are amounts (at once,
    and per budget period), each a bar of what the project holds against
    it: ``percent`` its length (at most the whole bar), ``used_percent``
    the share said in words (over 100 when the project holds more than
    a lowered limit), ``over`` when it does.  A limit of none has no
    bar: there is nothing to fill."""
    bars = []
    for row in quota_rows(quota):
        if not row.id.startswith(('concurrent/', 'budget/')):
            continue
        limit, used = _number(row.limit), _number(row.used)
        if limit is None or used is None:
            continue  # 'No limit'
        share = 100.0 * used / limit if limit > 0 else (
            100.0 if used > 0 else 0.0)
        bars.append({'id': row.id, 'label': row.limit_name,
                     'limit': row.limit, 'used': row.used,
                     'percent': round(min(share, 100.0), 2),
                     'used_percent': round(share, 1),
                     'over': used > limit})
    return bars
