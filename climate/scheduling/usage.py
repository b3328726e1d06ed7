"""Usage arithmetic, free of I/O: resource-hours, their units, periods
cut into steps, and the planning view of reserved against reservable
capacity (``climate.manager.usage`` feeds it rows of
``climate.db.usage``)."""

import collections
import re

from climate.scheduling import capacity

#: What an hour of one unit of a class is called.
UNITS = {
    capacity.WHOLE: 'host-hours',
    'VCPU': 'vCPU-hours',
    'MEMORY_MB': 'MB-hours',
    'DISK_GB': 'GB-hours',
    'VOLUME_GB': 'GB-hours',
    'VOLUME': 'volume-hours',
    'FLOATING_IP': 'IP-hours',
    'NETWORK_SEGMENT': 'segment-hours',
}

#: Placement's resource class names, standard and CUSTOM_*: what quotas
#: and rate tables may name.
RESOURCE_CLASS = re.compile(r'^[A-Z][A-Z0-9_]{0,254}$')

#: Most steps the planning view answers with.
MAX_STEPS = 1000

#: One lease's holdings of one class over a period, in amount-seconds
#: before and from now, and the amount held now.
Held = collections.namedtuple('Held', 'lease_id lease_name status '
                              'resource_type resource_class past future '
                              'current')


def unit(resource_class):
    """The name of an hour of one unit of ``resource_class``."""
    return UNITS.get(resource_class, '%s-hours' % resource_class)


def hours(amount_seconds):
    """Amount-seconds as amount-hours, to a millionth (a second of one
    unit is 0.000278)."""
    return round((amount_seconds or 0) / 3600.0, 6)


def _entry(resource_type, resource_class):
    return {'resource_type': resource_type, 'resource_class': resource_class,
            'unit': unit(resource_class), 'past': 0, 'future': 0,
            'current': 0}


def _add(entry, held):
    entry['past'] += int(held.past or 0)
    entry['future'] += int(held.future or 0)
    entry['current'] += int(held.current or 0)


def _in_hours(entry, now_within):
    out = dict(entry)
    out['past'] = hours(entry['past'])
    out['future'] = hours(entry['future'])
    out['total'] = hours(entry['past'] + entry['future'])
    out['current'] = entry['current'] if now_within else None
    return out


def project_usage(rows, start, end, now, by_lease=False):
    """The usage answer of one project from :class:`Held` rows: totals by
    resource type and class and, ``by_lease``, the same per lease (leases
    by name, classes by type then class).  ``past`` is consumed before
    ``now``, ``future`` committed from ``now`` on, both in resource-hours;
    ``current`` is the amount held at ``now`` (None when ``now`` is
    outside the period)."""
    now_within = start <= now < end
    totals = {}
    leases = {}
    for held in rows:
        key = (held.resource_type, held.resource_class)
        _add(totals.setdefault(key, _entry(*key)), held)
        if not by_lease:
            continue
        lease = leases.setdefault(held.lease_id, {
            'lease_id': held.lease_id, 'name': held.lease_name,
            # a deleted lease's records outlive it
            'status': held.status or 'DELETED', 'totals': {}})
        _add(lease['totals'].setdefault(key, _entry(*key)), held)
    answer = {'totals': [_in_hours(totals[k], now_within)
                         for k in sorted(totals)]}
    if by_lease:
        answer['leases'] = [
            dict(lease, totals=[_in_hours(lease['totals'][k], now_within)
                                for k in sorted(lease['totals'])])
            for lease in sorted(leases.values(),
                                key=lambda x: (x['name'], x['lease_id']))]
    return answer


def lease_usage(rows):
    """A lease's resource-hours by resource type and class, from
    ``(resource_type, resource_class, past, future, current)`` rows:
    ``consumed`` before now, ``committed`` from now on (what the
    notifications carry)."""
    out = {}
    for rtype, cls, past, future, _current in rows:
        entry = out.setdefault((rtype, cls), [0, 0])
        entry[0] += int(past or 0)
        entry[1] += int(future or 0)
    return [{'resource_type': rtype, 'resource_class': cls,
             'unit': unit(cls), 'consumed': hours(past),
             'committed': hours(future)}
            for (rtype, cls), (past, future) in sorted(out.items())]


def steps(start, end, step):
    """``[start, end)`` cut into steps of ``step`` (a timedelta), the last
    one shorter if need be.

    :raises ValueError: more than :data:`MAX_STEPS` steps.
    """
    count = -(-(end - start) // step)
    if count > MAX_STEPS:
        raise ValueError(count)
    return [(start + i * step, min(end, start + (i + 1) * step))
            for i in range(count)]


def reservable_by_class(inventories):
    """``{class: usable capacity}`` from ``(class, total, reserved,
    allocation_ratio, providers)`` rows."""
    out = collections.Counter()
    for cls, total, reserved, ratio, count in inventories:
        out[cls] += capacity.usable(capacity.Inventory(
            total, reserved, ratio)) * count
    return dict(out)


def _seconds(delta):
    return delta.total_seconds()


def planning(held, reservable, windows):
    """Reserved against reservable capacity, class by class and step by
    step: ``held`` is ``(class, start, end, amount)`` rows, ``reservable``
    ``{class: usable capacity}`` (today's inventory), ``windows`` the steps
    of :func:`steps`.

    Each step gives the peak amount reserved at one instant, the
    resource-hours reserved and their share of the reservable
    resource-hours.
    """
    if not windows:
        return []
    start, end = windows[0][0], windows[-1][1]
    by_class = collections.defaultdict(list)
    for cls, b_start, b_end, amount in held:
        by_class[cls].append(capacity.Booking(b_start, b_end, int(amount)))
    out = []
    for cls in sorted(set(by_class) | set(reservable)):
        segments = capacity.usage(by_class.get(cls, ()), start, end)
        usable = reservable.get(cls, 0)
        series = []
        index = 0
        for w_start, w_end in windows:
            peak = 0
            amount_seconds = 0.0
            # segments cover [start, end) in order: walk them once
            while index < len(segments) and segments[index][1] <= w_start:
                index += 1
            i = index
            while i < len(segments) and segments[i][0] < w_end:
                s_start, s_end, amount = segments[i]
                peak = max(peak, amount)
                amount_seconds += amount * _seconds(
                    min(s_end, w_end) - max(s_start, w_start))
                i += 1
            capacity_seconds = usable * _seconds(w_end - w_start)
            series.append({
                'start': w_start, 'end': w_end, 'reserved_peak': peak,
                'reserved_hours': hours(amount_seconds),
                'reservable_hours': hours(capacity_seconds),
                'reserved_share': round(amount_seconds / capacity_seconds,
                                        4) if capacity_seconds else None})
        out.append({'resource_class': cls, 'unit': unit(cls),
                    'reservable': usable, 'steps': series})
    return out
