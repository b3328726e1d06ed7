"""Leases as the API shows them (Blazar's v1 shape), built from SQL rows.

Dates are rendered here, once, so the API, notifications and plugins all
see the same strings whether they are in the manager's process or not, in
Blazar's two formats: ``2030-01-31T12:00:00.000000`` for the lease's dates
and events' times, ``2030-01-31 12:00:00`` for ``created_at`` and
``updated_at``.
A listing reads each lease's body as stored with it: rendered here when
the lease is created, by the database after any other change
(:mod:`climate.db.lease_json`, held to the same output by tests);
:func:`lease_page` wraps them.
"""

import base64
import zlib

from climate import dates


#: the keys a reservation's view adds to its stored parameters
RESERVATION_FIELDS = ('id', 'lease_id', 'resource_id', 'resource_type',
                      'status', 'missing_resources', 'resources_changed',
                      'created_at', 'updated_at', 'stack_reservation_id')


def reservation(res):
    body = dict(res.params or {})
    body.update({
        'id': res.id,
        'lease_id': res.lease_id,
        'resource_id': res.resource_id,
        'resource_type': res.resource_type,
        'status': res.status,
        'missing_resources': res.missing_resources,
        'resources_changed': res.resources_changed,
        'created_at': dates.format_timestamp(res.created_at),
        'updated_at': dates.format_timestamp(res.updated_at),
        # the reservation whose needs this one holds (a stack's), or null
        'stack_reservation_id': res.part_of,
    })
    return body


def reservation_params(view):
    """The stored parameters of a reservation's view (``reservation``)."""
    return {key: value for key, value in view.items()
            if key not in RESERVATION_FIELDS}


def event(ev):
    return {
        'id': ev.id,
        'lease_id': ev.lease_id,
        'event_type': ev.event_type,
        'time': dates.format(ev.time),
        'status': ev.status,
        'attempts': ev.attempts,
        'last_error': ev.last_error,
        'created_at': dates.format_timestamp(ev.created_at),
        'updated_at': dates.format_timestamp(ev.updated_at),
    }


# events due at the same time are listed in the order they run (a user's
# own event with the before-end notice), then as the database lists them
_RANK = {'start_lease': 0, 'before_end_lease': 1, 'end_lease': 2}


def _event_order(ev):
    return ev.time, _RANK.get(ev.event_type, 1), ev.created_at, ev.id


def _reservation_order(res):
    # as the database lists them; a lease's reservations are made in the
    # same second, so the id decides
    return res.created_at, res.id


def lease(row):
    return {
        'id': row.id,
        'name': row.name,
        'start_date': dates.format(row.start_date),
        'end_date': dates.format(row.end_date),
        'user_id': row.user_id,
        'project_id': row.project_id,
        'trust_id': row.trust_id,
        'status': row.status,
        'status_reason': row.status_reason,
        'degraded': row.degraded,
        'lease_type': row.lease_type,
        'max_retries': row.max_retries,
        'retry_attempts': row.retry_attempts,
        'next_attempt_at': dates.format(row.next_attempt_at),
        'hold_expires_at': dates.format(row.hold_expires_at),
        'series_id': row.series_id,
        'occurrence': row.occurrence,
        'keep_idle': bool(row.keep_idle),
        'last_used_at': dates.format(row.last_used_at),
        'idle_warned_at': dates.format(row.idle_warned_at),
        'idle_ended_at': dates.format(row.idle_ended_at),
        'created_at': dates.format_timestamp(row.created_at),
        'updated_at': dates.format_timestamp(row.updated_at),
        'reservations': [reservation(r) for r in sorted(
            row.reservations, key=_reservation_order)],
        'events': [event(e) for e in sorted(row.events, key=_event_order)],
    }


def lease_page(rows, compressed=False):
    """A listing as the manager answers it: ``leases``, the JSON text of
    the array of lease bodies (``rows`` are ``(id, body)`` pairs from
    ``db.api.lease_list``), which the API sends on as it is; ``count``
    and ``last_id`` for the link to the next page.

    :param compressed: give the text as ``leases_zlib`` instead, deflated
        and in base64 (:func:`page_leases` reads either).  A page of 100
        is about 150 KB of JSON, which oslo.messaging would escape into a
        string twice over (message, then envelope) and decode twice on the
        API's side; deflated it is a sixth of that, and the whole hop to
        the API costs less even counting the compression.
    """
    text = '[%s]' % ','.join(body for _id, body in rows)
    page = {'count': len(rows), 'last_id': rows[-1][0] if rows else None}
    if compressed:
        page['leases_zlib'] = base64.b64encode(
            zlib.compress(text.encode('utf-8'), 1)).decode('ascii')
    else:
        page['leases'] = text
    return page


def page_leases(page):
    """The JSON text of the leases of a :func:`lease_page`."""
    if 'leases_zlib' in page:
        return zlib.decompress(
            base64.b64decode(page['leases_zlib'])).decode('utf-8')
    return page['leases']
