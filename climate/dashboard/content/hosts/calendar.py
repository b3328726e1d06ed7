"""The hosts' calendar: how many reservable hosts are booked over time.

The API aggregates: ``POST /v1/os-hosts/timeline`` answers the count of
free hosts as segments of constant count, whatever the size of the
inventory (10,000 hosts are one number per segment, not 10,000 rows).
The page then folds the segments into a fixed number of columns, each
the most and the fewest hosts booked within it, so that what the
browser gets does not grow with the leases either.
"""

import datetime

from climate import dates
from climate import exceptions

#: the columns of a calendar, whatever its span
COLUMNS = 48
#: the spans offered (days); the API takes at most 366
SPANS = (1, 7, 30, 90)
DEFAULT_SPAN = 7


def _parse(text):
    return datetime.datetime.fromisoformat(str(text).rstrip('Zz'))


def columns(timeline, count=COLUMNS):
    """``timeline`` (the API's answer) folded into ``count`` columns of
    equal length: dicts with ``start``, ``end`` (datetimes), ``most`` and
    ``fewest`` booked, ``free`` (the fewest free) and ``percent`` (the
    most booked, of every matching host)."""
    total = int(timeline.get('matching_hosts') or 0)
    start = _parse(timeline['time_from'])
    end = _parse(timeline['time_to'])
    step = (end - start) / count
    segments = sorted(
        ((_parse(s['start']), _parse(s['end']), int(s['free']))
         for s in timeline.get('segments') or ()),
        key=lambda s: s[0])
    result = []
    first = 0
    for i in range(count):
        col_start = start + step * i
        col_end = end if i == count - 1 else start + step * (i + 1)
        # segments are in order and do not overlap: skip those over
        while first < len(segments) and segments[first][1] <= col_start:
            first += 1
        frees = []
        j = first
        while j < len(segments) and segments[j][0] < col_end:
            frees.append(segments[j][2])
            j += 1
        # a moment the answer does not cover: every host free
        if not frees:
            frees = [total]
        fewest_free, most_free = min(frees), max(frees)
        most = total - fewest_free
        result.append({
            'start': col_start, 'end': col_end,
            'most': most, 'fewest': total - most_free,
            'free': fewest_free,
            'percent': int(round(100.0 * most / total)) if total else 0})
    return result


def window(start_text, days_text, now=None):
    """``(start, end, days)`` of the page's parameters: ``start`` a date
    (the current hour by default), ``days`` one of :data:`SPANS`."""
    now = now or dates.utcnow()
    try:
        days = int(days_text)
    except (TypeError, ValueError):
        days = DEFAULT_SPAN
    if days not in SPANS:
        days = DEFAULT_SPAN
    start = None
    if start_text:
        try:
            start = dates.parse(start_text, 'start', now)
        except exceptions.ClimateException:
            start = None
    if start is None:
        start = now.replace(minute=0, second=0, microsecond=0)
    return start, start + datetime.timedelta(days=days), days
