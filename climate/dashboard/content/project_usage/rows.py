"""Every project's usage, as the admin panel shows a page of projects."""

from django.utils.translation import gettext_lazy as _

from climate.dashboard.api import climate as climate_api
from climate.dashboard import display

PARTS = (('past', _('Past')), ('current', _('Running now')),
         ('future', _('Booked ahead')))


def _hours(value):
    try:
        return max(0.0, float(value or 0))
    except (TypeError, ValueError):
        return 0.0


def by_unit(usage):
    """``{unit: {'past': h, 'current': h, 'future': h, 'total': h}}`` of
    one project's ``/v1/usage`` totals, the classes of a unit added up
    (a host lease's ``HOST`` hours are host-hours, its ``VCPU`` hours
    vCPU-hours: never added to each other)."""
    units = {}
    for total in (usage or {}).get('totals') or []:
        sums = units.setdefault(total.get('unit') or '?', dict.fromkeys(
            ('past', 'current', 'future', 'total'), 0.0))
        for key in sums:
            sums[key] += _hours(total.get(key))
    return units


def summary(units):
    """``9.0 host-hours, 32.0 vCPU-hours``; nothing reserved: -."""
    if not units:
        return display.MISSING
    return ', '.join('%s %s' % (round(sums['total'], 2), unit)
                     for unit, sums in sorted(units.items()))


def project_row(project, usage, own_limits, failed=False):
    units = by_unit(usage)
    return climate_api.Row(project.id, {
        'name': getattr(project, 'name', None) or project.id,
        'reserved': _('Unable to read') if failed else summary(units),
        'own_limits': _('Own limits') if own_limits else _('Defaults'),
        'units': units})


def unit_charts(rows):
    """A chart per unit of the page's projects: a bar per project that
    reserved some, as long as its total against the page's longest of
    that unit, split into past, running now and booked ahead."""
    charts = {}
    for row in rows:
        for unit, sums in row.units.items():
            charts.setdefault(unit, []).append((row, sums))
    result = []
    for unit in sorted(charts):
        longest = max(sums['total'] or sum(sums[k] for k, _l in PARTS)
                      for _row, sums in charts[unit]) or 0.0
        bars = []
        for row, sums in charts[unit]:
            parts = [{'key': key, 'label': label, 'value': sums[key],
                      'percent': round(100.0 * sums[key] / longest, 2)
                      if longest else 0}
                     for key, label in PARTS]
            bars.append({'id': row.id, 'name': row.name,
                         'total': round(sums['total'], 2), 'parts': parts})
        bars.sort(key=lambda bar: -bar['total'])
        result.append({'unit': unit, 'bars': bars})
    return result
