"""Lease notifications for metering and billing.

Event types: ``climate.lease.create``, ``.update``, ``.delete``, ``.start``,
``.end``, ``.before_end``, ``.event.notification`` (a user's event of
type ``notification`` ran; its payload adds ``event``), ``.confirm`` and
``.hold_expired`` (a temporary hold confirmed, or expired unconfirmed);
``climate.lease_series.occurrence_skipped`` and ``.stopped`` (an
occurrence of a recurring series its horizon could not book); and
``climate.lease.maintenance`` (a maintenance window hit the lease: its
payload adds ``maintenance``, what was done).  The payload is
versioned: consumers check ``version`` (MAJOR.MINOR; a MINOR bump only adds
fields) and read ``lease``, the lease exactly as ``GET /v1/leases/{id}``
shows it, and (1.1) ``usage``, its resource-hours consumed and committed
by resource type and class, so that a meter needs not call back; (1.2) the
lease's type fields and states (``climate.lease.types``); (1.3) the
lease's ``hold_expires_at`` (``climate.lease.holds``).  See
doc/source/notifications.rst for the schema.
"""

from oslo_log import log as logging

from climate import dates
from climate.db import api as db_api
from climate.db import usage as db_usage
from climate import rpc
from climate.scheduling import usage as usage_math

LOG = logging.getLogger(__name__)

PAYLOAD_VERSION = '1.3'
CREATE = 'create'
UPDATE = 'update'
DELETE = 'delete'
START = 'start'
END = 'end'
BEFORE_END = 'before_end'
EVENT_NOTIFICATION = 'event.notification'
#: temporary holds (microversion 1.14, climate.lease.holds)
CONFIRM = 'confirm'
HOLD_EXPIRED = 'hold_expired'
#: recurring series (microversion 1.15, climate.manager.series)
SERIES_PAYLOAD_VERSION = '1.0'
OCCURRENCE_SKIPPED = 'occurrence_skipped'
SERIES_STOPPED = 'stopped'
#: maintenance windows (microversion 1.16, climate.manager.maintenance)
MAINTENANCE = 'maintenance'


def payload(lease, event=None, usage=None):
    """The versioned payload; ``event`` (the event as the lease shows it)
    only for the notices of a user's event; ``usage`` as
    :func:`lease_usage` reads it."""
    body = {'version': PAYLOAD_VERSION, 'lease': lease,
            'usage': usage or []}
    if event is not None:
        body['event'] = event
    return body


def lease_usage(ctx, lease_id):
    """The lease's resource-hours by type and class, consumed and
    committed, as the ledger and the usage records hold them now (those
    of a deleted lease are its consumption until the deletion)."""
    with db_api.reader(ctx) as session:
        rows = db_usage.lease_rows(session, lease_id, dates.utcnow())
    return usage_math.lease_usage(rows)


def leases_usage(ctx, lease_ids):
    """:func:`lease_usage` of each lease of ``lease_ids``, read in one
    statement: ``{lease id: usage}``."""
    with db_api.reader(ctx) as session:
        rows = db_usage.leases_rows(session, lease_ids, dates.utcnow())
    return {lease_id: usage_math.lease_usage(rows.get(lease_id, []))
            for lease_id in lease_ids}


class LeaseNotifier:
    """Sends ``climate.lease.*`` notifications; never fails the caller."""

    def __init__(self, host):
        self._notifier = rpc.get_notifier('climate.manager.%s' % host)

    def send(self, ctx, action, lease, event=None):
        try:
            if not self._notifier.is_enabled():
                return  # no reading of the lease's usage for nobody
            self._notifier.info(ctx, 'climate.lease.%s' % action,
                                payload(lease, event,
                                        lease_usage(ctx, lease['id'])))
        except Exception:  # a metering outage must not undo a lease change
            LOG.exception('Could not send climate.lease.%s for %s', action,
                          lease['id'])

    def send_maintenance(self, ctx, lease, entry):
        """``climate.lease.maintenance``: a maintenance window hit
        ``lease`` (its view after); ``entry``: the window's record of it
        (the action and what was done; climate.manager.maintenance)."""
        try:
            self._notifier.info(ctx, 'climate.lease.%s' % MAINTENANCE,
                                dict(payload(lease), maintenance=entry))
        except Exception:
            LOG.exception('Could not send climate.lease.%s for %s',
                          MAINTENANCE, lease['id'])

    def send_series(self, ctx, action, series):
        """``climate.lease_series.<action>`` (``occurrence_skipped``,
        ``stopped``): ``series`` as ``GET /v1/lease-series/{id}`` shows
        it, with the ``occurrence`` not booked (climate.manager.series)."""
        try:
            self._notifier.info(ctx, 'climate.lease_series.%s' % action,
                                {'version': SERIES_PAYLOAD_VERSION,
                                 'series': series})
        except Exception:
            LOG.exception('Could not send climate.lease_series.%s for %s',
                          action, series['id'])

    def send_many(self, ctx, notices):
        """:meth:`send` each ``(action, lease, event)`` of ``notices``,
        the usage of all their leases read in one statement (a batch of
        events: one query, not one per lease)."""
        if not notices:
            return
        try:
            if not self._notifier.is_enabled():
                return
            usage = leases_usage(ctx, [lease['id'] for _a, lease, _e
                                       in notices])
        except Exception:
            LOG.exception('Could not read the usage of %d leases for their '
                          'notifications', len(notices))
            return
        for action, lease, event in notices:
            try:
                self._notifier.info(ctx, 'climate.lease.%s' % action,
                                    payload(lease, event,
                                            usage[lease['id']]))
            except Exception:
                LOG.exception('Could not send climate.lease.%s for %s',
                              action, lease['id'])
