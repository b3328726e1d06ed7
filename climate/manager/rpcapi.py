"""Client side of the manager's RPC API: the API process's only way in.

Every call is bounded when the message bus is away: sending a request
gives up after ``[api] message_bus_retries`` reconnections, and waiting
for the answer after ``[api] message_bus_timeout`` seconds without a sign
of life from the manager working on it (oslo.messaging's call monitor: a
manager busy for longer sends heartbeats).  Either way the caller gets
``MessageBusUnavailable`` (503) and the API's thread is free again, instead
of waiting as long as RabbitMQ stays away.

Once a call has failed so, the bus counts as down (:class:`BusState`):
one call at a time goes on trying it, the others are answered 503 at once,
so an outage never holds more than one of the API's threads; the first
call that gets through marks the bus up again.
"""

import threading
import time

from oslo_config import cfg
import oslo_messaging as messaging

from climate import exceptions
from climate import rpc

CONF = cfg.CONF

#: What a call raises when it could not reach the broker: oslo.messaging's
#: own error, and what its rabbit driver lets through when a new connection
#: fails within the retries it was given (kombu's OperationalError, py-amqp's
#: connection errors, socket errors).
BUS_ERRORS = (messaging.MessageDeliveryFailure, OSError)
try:
    import amqp.exceptions
    import kombu.exceptions
except ImportError:  # another driver
    pass
else:
    BUS_ERRORS += (kombu.exceptions.KombuError, amqp.exceptions.AMQPError)

#: RPC API versions: 1.1 adds create_lease's idempotency_key, and ping.
IDEMPOTENCY_VERSION = '1.1'


class BusState:
    """Whether the last call got through the message bus; while it did
    not, only one call at a time (the probe) tries it again."""

    def __init__(self):
        self._lock = threading.Lock()
        self.down_since = None
        self._probing = False

    def enter(self):
        """Before a call: True if it is the probe of a bus that is down.

        :raises MessageBusUnavailable: the bus is down and another call is
            probing it.
        """
        if self.down_since is None:  # the usual case: no lock
            return False
        with self._lock:
            if self.down_since is None:
                return False
            if self._probing:
                raise exceptions.MessageBusUnavailable(
                    reason='it has not answered for %.0f s' % (
                        time.monotonic() - self.down_since))
            self._probing = True
            return True

    def leave(self, probe, reached):
        """After a call, with whether it reached a manager."""
        if not probe and reached and self.down_since is None:
            return
        with self._lock:
            if probe:
                self._probing = False
            if reached:
                self.down_since = None
            elif self.down_since is None:
                self.down_since = time.monotonic()


class ManagerAPI:
    """Calls into climate-manager over oslo.messaging (topic
    ``climate.manager``)."""

    def __init__(self, conf=None):
        conf = conf or CONF
        client = rpc.get_client()  # registers rpc_response_timeout
        self._bus_timeout = conf.api.message_bus_timeout
        bounded = dict(retry=conf.api.message_bus_retries)
        self._call_timeout = max(conf.rpc_response_timeout,
                                 self._bus_timeout)
        self._client = client.prepare(
            timeout=self._call_timeout,
            call_monitor_timeout=self._bus_timeout, **bounded)
        self._client_1_1 = self._client.prepare(version=IDEMPOTENCY_VERSION)
        self._fanout = rpc.get_client(fanout=True).prepare(**bounded)
        self.bus = BusState()

    def _call(self, ctx, method, client=None, timeout=None, **kwargs):
        client = client or self._client
        if timeout is not None:
            client = client.prepare(timeout=timeout,
                                    call_monitor_timeout=None)
        probe = self.bus.enter()
        reached = False
        started = time.monotonic()
        try:
            result = client.call(ctx, method, **kwargs)
            reached = True
            return result
        except BUS_ERRORS as exc:
            raise exceptions.MessageBusUnavailable(
                reason='the request could not be handed to a manager (%s)' %
                (str(exc).splitlines() or [type(exc).__name__])[0])
        except messaging.MessagingTimeout:
            if timeout is None and \
                    time.monotonic() - started >= self._call_timeout:
                # a manager worked on it (it kept sending heartbeats) and
                # did not finish in time: the bus is fine
                reached = True
                raise exceptions.ServiceUnavailable(
                    reason='climate-manager did not finish the request '
                           'within %g s' % self._call_timeout)
            raise exceptions.MessageBusUnavailable(
                reason='no manager answered within %g s (the message bus or '
                       'every climate-manager is out of reach)' % (
                           timeout or self._bus_timeout))
        except Exception:
            reached = True  # the manager's answer: an error
            raise
        finally:
            self.bus.leave(probe, reached)

    def list_leases(self, ctx, **query):
        """A page of leases: ``{'leases_zlib': the JSON text of the array,
        deflated, 'count', 'last_id'}`` (``climate.manager.views.lease_page``;
        ``views.page_leases`` gives the text)."""
        return self._call(ctx, 'list_leases',
                          query=dict(query, compressed=True))

    def get_lease(self, ctx, lease_id):
        return self._call(ctx, 'get_lease', lease_id=lease_id)

    def create_lease(self, ctx, body, idempotency_key=None):
        """Create a lease; with ``idempotency_key``, at most once per key
        and project (``climate.manager.idempotency``)."""
        if idempotency_key is None:
            return self._call(ctx, 'create_lease', body=body)
        return self._call(ctx, 'create_lease', client=self._client_1_1,
                          body=body, idempotency_key=idempotency_key)

    def update_lease(self, ctx, lease_id, body):
        return self._call(ctx, 'update_lease', lease_id=lease_id, body=body)

    def delete_lease(self, ctx, lease_id):
        return self._call(ctx, 'delete_lease', lease_id=lease_id)

    def list_plugins(self, ctx):
        return self._call(ctx, 'list_plugins')

    def ping(self, ctx, timeout):
        """A round trip to one manager within ``timeout`` seconds:
        ``{'manager': its name}``."""
        return self._call(ctx, 'ping', client=self._client_1_1,
                          timeout=timeout)

    # -- /v1/os-hosts (climate.manager.hosts) ------------------------------

    def host_list(self, ctx):
        return self._call(ctx, 'host_list')

    def host_get(self, ctx, host_id):
        return self._call(ctx, 'host_get', host_id=host_id)

    def host_create(self, ctx, body):
        return self._call(ctx, 'host_create', body=body)

    def host_update(self, ctx, host_id, body):
        return self._call(ctx, 'host_update', host_id=host_id, body=body)

    def host_delete(self, ctx, host_id):
        return self._call(ctx, 'host_delete', host_id=host_id)

    def host_allocations(self, ctx, lease_id=None, reservation_id=None):
        return self._call(ctx, 'host_allocations', lease_id=lease_id,
                          reservation_id=reservation_id)

    def host_allocation(self, ctx, host_id, lease_id=None,
                        reservation_id=None):
        return self._call(ctx, 'host_allocation', host_id=host_id,
                          lease_id=lease_id, reservation_id=reservation_id)

    def host_properties(self, ctx, detail=False, include_private=False):
        return self._call(ctx, 'host_properties', detail=detail,
                          include_private=include_private)

    def host_property_update(self, ctx, name, body):
        return self._call(ctx, 'host_property_update', name=name, body=body)

    def host_availability(self, ctx, query):
        return self._call(ctx, 'host_availability', query=query)

    def host_timeline(self, ctx, query):
        return self._call(ctx, 'host_timeline', query=query)

    def wake_all(self, ctx):
        """Tell every manager's event engine to look for due events.

        :raises MessageBusUnavailable: the bus is down (at once while
            another call is probing it).
        """
        probe = self.bus.enter()
        reached = False
        try:
            self._fanout.cast(ctx, 'wake')
            reached = True
        except BUS_ERRORS as exc:
            raise exceptions.MessageBusUnavailable(
                reason='the wake-up could not be sent (%s)' %
                (str(exc).splitlines() or [type(exc).__name__])[0])
        finally:
            self.bus.leave(probe, reached)
