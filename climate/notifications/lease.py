"""Lease notifications for metering and billing.

Event types: ``climate.lease.create``, ``.update``, ``.delete``, ``.start``,
``.end``, ``.before_end`` and ``.event.notification`` (a user's event of
type ``notification`` ran; its payload adds ``event``).  The payload is
versioned: consumers check ``version`` (MAJOR.MINOR; a MINOR bump only adds
fields) and read ``lease``, the lease exactly as ``GET /v1/leases/{id}``
shows it.  See doc/source/notifications.rst for the schema.
"""

from oslo_log import log as logging

from climate import rpc

LOG = logging.getLogger(__name__)

PAYLOAD_VERSION = '1.0'
CREATE = 'create'
UPDATE = 'update'
DELETE = 'delete'
START = 'start'
END = 'end'
BEFORE_END = 'before_end'
EVENT_NOTIFICATION = 'event.notification'


def payload(lease, event=None):
    """The versioned payload; ``event`` (the event as the lease shows it)
    only for the notices of a user's event."""
    body = {'version': PAYLOAD_VERSION, 'lease': lease}
    if event is not None:
        body['event'] = event
    return body


class LeaseNotifier:
    """Sends ``climate.lease.*`` notifications; never fails the caller."""

    def __init__(self, host):
        self._notifier = rpc.get_notifier('climate.manager.%s' % host)

    def send(self, ctx, action, lease, event=None):
        try:
            self._notifier.info(ctx, 'climate.lease.%s' % action,
                                payload(lease, event))
        except Exception:  # a metering outage must not undo a lease change
            LOG.exception('Could not send climate.lease.%s for %s', action,
                          lease['id'])
