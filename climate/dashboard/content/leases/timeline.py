"""The project's leases over time: each lease a bar over its window.

A page is at most :data:`LANES` leases of those overlapping the window
(the API's listing filtered by ``time_from``/``time_to`` and sorted by
start, a keyset page: 1,000 leases or 100,000, a page costs the same),
each placed by percentages of the window, so the browser lays them out
without a script.
"""

import datetime

from django.utils.translation import gettext_lazy as _

from climate.dashboard import display

#: leases on a page of the timeline
LANES = 40
#: the ticks of the axis
TICKS = 6
#: the narrowest bar (percent of the window): a short lease stays visible
MIN_WIDTH = 0.4

#: the colour of each status (a CSS class of the page)
STATUS_CLASS = {
    'ACTIVE': 'active', 'STARTING': 'active', 'UPDATING': 'active',
    'PENDING': 'pending', 'INACTIVE': 'pending',
    'WAITING': 'waiting', 'IN_PROGRESS': 'waiting', 'HELD': 'waiting',
    'TERMINATING': 'ended', 'TERMINATED': 'ended', 'EXPIRED': 'ended',
    'ERROR': 'failed', 'EXHAUSTED': 'failed', 'TIMEDOUT': 'failed',
}
LEGEND = (('active', _('Active')), ('pending', _('Booked, not started')),
          ('waiting', _('Waiting or held')), ('ended', _('Ended')),
          ('failed', _('Failed')))


def _parse(text):
    try:
        return datetime.datetime.fromisoformat(str(text).rstrip('Zz'))
    except (TypeError, ValueError):
        return None


def lanes(leases, start, end, status_display=None):
    """A dict per lease with a window: ``left`` and ``width``
    (percentages of ``[start, end)``, clipped to it), ``css`` (its
    status' colour), ``before``/``after`` (it goes on past the window's
    edge) and its dates as the page shows them."""
    span = (end - start).total_seconds()
    status_display = status_display or {}
    result = []
    for lease in leases:
        lease_start = _parse(lease.start_date)
        lease_end = _parse(lease.end_date)
        if lease_start is None or lease_end is None or span <= 0:
            continue
        left = max(0.0, (lease_start - start).total_seconds() / span)
        right = min(1.0, (lease_end - start).total_seconds() / span)
        if right <= 0 or left >= 1:
            continue  # outside the window (the API's filter says not)
        width = max(MIN_WIDTH, round(100.0 * (right - left), 2))
        left = min(round(100.0 * left, 2), 100.0 - width)
        result.append({
            'id': lease.id, 'name': lease.name or lease.id,
            'status': lease.status,
            'status_text': status_display.get(lease.status, lease.status),
            'css': STATUS_CLASS.get(lease.status, 'ended'),
            'left': left, 'width': width,
            'before': lease_start < start, 'after': lease_end > end,
            'start_text': display.short_date(lease.start_date),
            'end_text': display.short_date(lease.end_date)})
    return result


def ticks(start, end, count=TICKS):
    """The axis: ``count`` + 1 labels at equal steps, with their place
    (percent)."""
    step = (end - start) / count
    return [{'percent': round(100.0 * i / count, 2),
             'text': display.api_date(start + step * i)}
            for i in range(count + 1)]
