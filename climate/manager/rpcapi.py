"""Client side of the manager's RPC API: the API process's only way in.

Every call is bounded in time, whatever the message bus does:

- once the bus is known good (:attr:`BusState.up`: a call of this process
  got an answer, so oslo.messaging's reply queue exists), a call runs in
  the caller's thread, as fast as oslo.messaging goes: sending gives up
  after ``[api] message_bus_retries`` reconnections, and waiting for the
  answer after ``[api] message_bus_timeout`` seconds without a sign of life
  from the manager working on it (oslo.messaging's call monitor: a manager
  busy for longer sends heartbeats);
- otherwise (a fresh process, or after a failure) the bus is *probed*
  first: a ``ping`` round trip made by one daemon thread, which the caller
  waits for at most ``message_bus_timeout`` seconds.  A probe is needed
  because oslo.messaging opens its reply connection, on the first call of
  a process, with no retry limit and under a lock every later call queues
  on: with RabbitMQ away from the start, that first call (and every other)
  would wait as long as RabbitMQ stays away.  So until a call got an
  answer the probe first sends a cast, which needs no reply queue and
  gives up within the configured retries; only a broker that took it is
  asked for a reply queue.

One probe at a time: while it runs, the others wait for its outcome (a
fresh process) or, the bus being known down, are answered 503 at once.
A probe that outlives its caller's bound counts as the bus being down, and
stays the probe until it ends, so an outage holds no request thread longer
than the bound and at most one helper thread.  Whatever cannot reach the
bus in time raises ``MessageBusUnavailable`` (503).
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

#: RPC API versions: 1.1 adds create_lease's idempotency_key, and ping;
#: 1.2 adds released; 1.3 confirm_lease (temporary holds).
IDEMPOTENCY_VERSION = '1.1'
RETRIES_VERSION = '1.2'
HOLDS_VERSION = '1.3'


def _first_line(exc):
    return (str(exc).splitlines() or [type(exc).__name__])[0]


class Probe:
    """One look at the message bus, made by a daemon thread.

    ``outcome`` once ``done`` is set: ``'reached'`` (``answer`` is the
    ping's answer, or ``error`` the manager's error for it) or ``'down'``
    (``reason`` says why).
    """

    def __init__(self, bound):
        self.started = time.monotonic()
        self.deadline = self.started + bound
        self.done = threading.Event()
        self.outcome = None
        self.answer = None
        self.error = None
        self.reason = None


class BusState:
    """What this process knows of the message bus, and its probe.

    - ``ready``: a call got an answer (oslo.messaging's reply queue exists:
      later calls wait at most as their retries and timeouts allow);
    - ``down_since``: when the bus was found out of reach (monotonic
      seconds; None while it is not known down);
    - ``probe``: the :class:`Probe` in flight, if any.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self.ready = False
        self.down_since = None
        self.probe = None
        # read without the lock on every call: one attribute
        self.up = False

    def _set(self, ready=None, down=None):
        """Under the lock."""
        if ready:
            self.ready = True
        if down is True:
            if self.down_since is None:
                self.down_since = time.monotonic()
        elif down is False:
            self.down_since = None
        self.up = self.ready and self.down_since is None

    def reached(self):
        """A call got an answer (maybe an error) from a manager."""
        if self.up:  # the usual case: no lock
            return
        with self._lock:
            self._set(ready=True, down=False)

    def failed(self, since=None):
        """A call, or a probe, could not reach the bus."""
        with self._lock:
            self._set(down=True)
            if since is not None:
                self.down_since = min(self.down_since, since)

    def cast_reached(self):
        """A cast was taken by the broker: it is reachable (casts need no
        reply queue, so this does not make the bus ready)."""
        if self.down_since is None:
            return
        with self._lock:
            self._set(down=False)

    def join_probe(self, bound, start):
        """Before a call while the bus is not up: the probe to wait for.

        Returns ``(probe, mine)``, or ``(None, False)`` if the bus is up
        (by now).  ``start(probe)`` starts a new probe's thread.

        :raises MessageBusUnavailable: the bus is known down and another
            call is probing it: at once.
        """
        with self._lock:
            if self.up:
                return None, False
            probe = self.probe
            if probe is None:
                probe = self.probe = Probe(bound)
                try:
                    start(probe)
                except BaseException:
                    self.probe = None
                    raise
                return probe, True
            if self.down_since is not None or \
                    time.monotonic() >= probe.deadline:
                self._set(down=True)
                raise exceptions.MessageBusUnavailable(
                    reason='it has not answered for %.0f s' % (
                        time.monotonic() - min(self.down_since,
                                               probe.started)))
            return probe, False

    def end_probe(self, probe, reached, reason=None):
        """The probe's thread is done."""
        with self._lock:
            probe.outcome = 'reached' if reached else 'down'
            probe.reason = reason
            if reached:
                self._set(ready=True, down=False)
            else:
                self._set(down=True)
            if self.probe is probe:
                self.probe = None
            probe.done.set()

    def claim_cast(self):
        """Before a cast: a :class:`Probe` if this cast probes a bus known
        down (end it with :meth:`end_cast`), else None.

        :raises MessageBusUnavailable: the bus is known down and another
            call is probing it.
        """
        if self.down_since is None:
            return None
        with self._lock:
            if self.down_since is None:
                return None
            if self.probe is not None:
                raise exceptions.MessageBusUnavailable(
                    reason='it has not answered for %.0f s' % (
                        time.monotonic() - self.down_since))
            self.probe = Probe(0)
            return self.probe

    def end_cast(self, probe, reached):
        if probe is None and reached and self.down_since is None:
            return
        with self._lock:
            self._set(down=not reached)
            if probe is not None:
                if self.probe is probe:
                    self.probe = None
                probe.outcome = 'reached' if reached else 'down'
                probe.done.set()


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
        self._client_1_3 = self._client.prepare(version=HOLDS_VERSION)
        self._fanout = rpc.get_client(fanout=True).prepare(**bounded)
        self.bus = BusState()

    # -- the probe ---------------------------------------------------------

    def _start_probe(self, ctx, probe):
        threading.Thread(target=self._run_probe, args=(ctx, probe),
                         daemon=True, name='climate-bus-probe').start()

    def _run_probe(self, ctx, probe):
        reached, reason = False, None
        bound = probe.deadline - probe.started
        try:
            if not self.bus.ready:
                # The first call of a process would open oslo.messaging's
                # reply connection retrying forever: a cast first, which
                # gives up within message_bus_retries (a ping each manager
                # runs and nobody waits for).
                self._fanout.prepare(version=IDEMPOTENCY_VERSION).cast(
                    ctx, 'ping')
            probe.answer = self._client_1_1.prepare(
                timeout=bound, call_monitor_timeout=None).call(ctx, 'ping')
            reached = True
        except BUS_ERRORS as exc:
            reason = 'the request could not be handed to a manager (%s)' % (
                _first_line(exc))
        except messaging.MessagingTimeout:
            reason = ('no manager answered within %g s (the message bus or '
                      'every climate-manager is out of reach)' % bound)
        except Exception as exc:  # the manager's answer: an error
            reached = True
            probe.error = exc
        finally:
            self.bus.end_probe(probe, reached, reason)

    def _probe(self, ctx, bound):
        """Wait for the bus to be probed (at most ``bound`` seconds): the
        probe, if it was made, or None if the bus is up already.

        :raises MessageBusUnavailable: it is not reachable in time.
        """
        probe, _ = self.bus.join_probe(
            bound, lambda p: self._start_probe(ctx, p))
        if probe is None:
            return None
        wait = min(probe.deadline, time.monotonic() + bound) - \
            time.monotonic()
        if not probe.done.wait(max(0.0, wait)):
            self.bus.failed(since=probe.started)
            raise exceptions.MessageBusUnavailable(
                reason='no answer from it within %g s' % bound)
        if probe.outcome != 'reached':
            raise exceptions.MessageBusUnavailable(reason=probe.reason)
        return probe

    # -- calls -------------------------------------------------------------

    def _call(self, ctx, method, client=None, timeout=None, **kwargs):
        client = client or self._client
        if not self.bus.up:
            probe = self._probe(ctx, timeout or self._bus_timeout)
            if method == 'ping' and probe is not None:
                # the probe was this very call
                if probe.error is not None:
                    raise probe.error
                return probe.answer
        if timeout is not None:
            client = client.prepare(timeout=timeout,
                                    call_monitor_timeout=None)
        started = time.monotonic()
        try:
            result = client.call(ctx, method, **kwargs)
        except BUS_ERRORS as exc:
            self.bus.failed()
            raise exceptions.MessageBusUnavailable(
                reason='the request could not be handed to a manager (%s)' %
                _first_line(exc))
        except messaging.MessagingTimeout:
            if timeout is None and \
                    time.monotonic() - started >= self._call_timeout:
                # a manager worked on it (it kept sending heartbeats) and
                # did not finish in time: the bus is fine
                self.bus.reached()
                raise exceptions.ServiceUnavailable(
                    reason='climate-manager did not finish the request '
                           'within %g s; it may still finish it (a lease '
                           'create retried with the same Idempotency-Key '
                           'header is made at most once)' %
                           self._call_timeout)
            self.bus.failed()
            raise exceptions.MessageBusUnavailable(
                reason='no manager answered within %g s (the message bus or '
                       'every climate-manager is out of reach)' % (
                           timeout or self._bus_timeout))
        except Exception:
            self.bus.reached()  # the manager's answer: an error
            raise
        self.bus.reached()
        return result

    def list_leases(self, ctx, **query):
        """A page of leases: ``{'leases_zlib': the JSON text of the array,
        deflated, 'count', 'last_id'}`` (``climate.lease.views.lease_page``;
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

    def confirm_lease(self, ctx, lease_id):
        return self._call(ctx, 'confirm_lease', client=self._client_1_3,
                          lease_id=lease_id)

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

    def host_pool_summary(self, ctx):
        return self._call(ctx, 'host_pool_summary')

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

    def host_power_list(self, ctx):
        return self._call(ctx, 'host_power_list')

    def host_power_get(self, ctx, host_id, query):
        return self._call(ctx, 'host_power_get', host_id=host_id,
                          query=query)

    def host_energy(self, ctx, query):
        return self._call(ctx, 'host_energy', query=query)

    def host_properties(self, ctx, detail=False, include_private=False):
        return self._call(ctx, 'host_properties', detail=detail,
                          include_private=include_private)

    def host_property_update(self, ctx, name, body):
        return self._call(ctx, 'host_property_update', name=name, body=body)

    def host_availability(self, ctx, query):
        return self._call(ctx, 'host_availability', query=query)

    def host_timeline(self, ctx, query):
        return self._call(ctx, 'host_timeline', query=query)

    # -- /v1/volume-pools (climate.manager.volume_pools) -------------------

    def volume_pool_list(self, ctx):
        return self._call(ctx, 'volume_pool_list')

    def volume_pool_get(self, ctx, pool_id):
        return self._call(ctx, 'volume_pool_get', pool_id=pool_id)

    def volume_pool_create(self, ctx, body):
        return self._call(ctx, 'volume_pool_create', body=body)

    def volume_pool_update(self, ctx, pool_id, body):
        return self._call(ctx, 'volume_pool_update', pool_id=pool_id,
                          body=body)

    def volume_pool_delete(self, ctx, pool_id):
        return self._call(ctx, 'volume_pool_delete', pool_id=pool_id)

    def volume_pool_allocations(self, ctx, lease_id=None,
                                reservation_id=None):
        return self._call(ctx, 'volume_pool_allocations', lease_id=lease_id,
                          reservation_id=reservation_id)

    def volume_availability(self, ctx, query):
        return self._call(ctx, 'volume_availability', query=query)

    # -- /v1/floatingips (climate.manager.floatingips) ---------------------

    def floatingip_list(self, ctx):
        return self._call(ctx, 'floatingip_list')

    def floatingip_get(self, ctx, floatingip_id):
        return self._call(ctx, 'floatingip_get', floatingip_id=floatingip_id)

    def floatingip_create(self, ctx, body):
        return self._call(ctx, 'floatingip_create', body=body)

    def floatingip_delete(self, ctx, floatingip_id):
        return self._call(ctx, 'floatingip_delete',
                          floatingip_id=floatingip_id)

    # -- /v1/networks (climate.manager.networks) ---------------------------

    def network_list(self, ctx):
        return self._call(ctx, 'network_list')

    def network_get(self, ctx, network_id):
        return self._call(ctx, 'network_get', network_id=network_id)

    def network_create(self, ctx, body):
        return self._call(ctx, 'network_create', body=body)

    def network_update(self, ctx, network_id, body):
        return self._call(ctx, 'network_update', network_id=network_id,
                          body=body)

    def network_delete(self, ctx, network_id):
        return self._call(ctx, 'network_delete', network_id=network_id)

    # -- /v1/instances (climate.manager.instances) -------------------------

    def instance_availability(self, ctx, query):
        return self._call(ctx, 'instance_availability', query=query)

    # -- /v1/webhooks (climate.manager.webhooks) -----------------------------

    def webhook_list(self, ctx, project_id=None):
        return self._call(ctx, 'webhook_list', project_id=project_id)

    def webhook_get(self, ctx, webhook_id):
        return self._call(ctx, 'webhook_get', webhook_id=webhook_id)

    def webhook_create(self, ctx, body):
        return self._call(ctx, 'webhook_create', body=body)

    def webhook_delete(self, ctx, webhook_id):
        return self._call(ctx, 'webhook_delete', webhook_id=webhook_id)

    def webhook_deliveries(self, ctx, webhook_id, limit):
        return self._call(ctx, 'webhook_deliveries', webhook_id=webhook_id,
                          limit=limit)

    # -- /v1/lease-series (climate.manager.series) ---------------------------

    def series_list(self, ctx, project_id=None):
        return self._call(ctx, 'series_list', project_id=project_id)

    def series_get(self, ctx, series_id):
        return self._call(ctx, 'series_get', series_id=series_id)

    def series_create(self, ctx, body):
        return self._call(ctx, 'series_create', body=body)

    def series_update(self, ctx, series_id, body):
        return self._call(ctx, 'series_update', series_id=series_id,
                          body=body)

    def series_delete(self, ctx, series_id):
        return self._call(ctx, 'series_delete', series_id=series_id)

    # -- /v1/maintenance-windows (climate.manager.maintenance) --------------

    def maintenance_list(self, ctx):
        return self._call(ctx, 'maintenance_list')

    def maintenance_get(self, ctx, window_id):
        return self._call(ctx, 'maintenance_get', window_id=window_id)

    def maintenance_create(self, ctx, body):
        return self._call(ctx, 'maintenance_create', body=body)

    def maintenance_delete(self, ctx, window_id):
        return self._call(ctx, 'maintenance_delete', window_id=window_id)

    # -- /v1/idle-policies (climate.manager.idle) ----------------------------

    def idle_policy_list(self, ctx):
        return self._call(ctx, 'idle_policy_list')

    def idle_policy_get(self, ctx, project_id):
        return self._call(ctx, 'idle_policy_get', project_id=project_id)

    def idle_policy_set(self, ctx, project_id, body):
        return self._call(ctx, 'idle_policy_set', project_id=project_id,
                          body=body)

    def idle_policy_delete(self, ctx, project_id):
        return self._call(ctx, 'idle_policy_delete', project_id=project_id)

    # -- /v1/usage (climate.manager.usage) ------------------------------------

    def usage(self, ctx, query):
        return self._call(ctx, 'usage', query=query)

    def usage_capacity(self, ctx, query):
        return self._call(ctx, 'usage_capacity', query=query)

    # -- /v1/quotas (climate.manager.quotas) ---------------------------------

    def quota_list(self, ctx):
        return self._call(ctx, 'quota_list')

    def quota_get(self, ctx, project_id):
        return self._call(ctx, 'quota_get', project_id=project_id)

    def quota_set(self, ctx, project_id, body):
        return self._call(ctx, 'quota_set', project_id=project_id, body=body)

    def quota_delete(self, ctx, project_id):
        return self._call(ctx, 'quota_delete', project_id=project_id)

    # -- /v1/billing (climate.manager.billing) -------------------------------

    def billing_rates_get(self, ctx):
        return self._call(ctx, 'billing_rates_get')

    def billing_rates_set(self, ctx, body):
        return self._call(ctx, 'billing_rates_set', body=body)

    def billing_export(self, ctx, query, project_id=None):
        return self._call(ctx, 'billing_export', query=query,
                          project_id=project_id)

    def wake_all(self, ctx):
        """Tell every manager's event engine to look for due events.

        A cast needs no reply queue: it is bounded by the retries alone.

        :raises MessageBusUnavailable: the bus is down (at once while
            another call is probing it).
        """
        self._cast_all(ctx, 'wake')

    def released_all(self, ctx):
        """Tell every manager that capacity was released: their passes
        over the waiting leases try them now
        (``climate.manager.workers.retries``); their engines look for due
        events too.  As :meth:`wake_all`."""
        self._cast_all(ctx, 'released', RETRIES_VERSION)

    def _cast_all(self, ctx, method, version=None):
        probe = self.bus.claim_cast()
        reached = False
        fanout = self._fanout if version is None else \
            self._fanout.prepare(version=version)
        try:
            fanout.cast(ctx, method)
            reached = True
        except BUS_ERRORS as exc:
            raise exceptions.MessageBusUnavailable(
                reason='the wake-up could not be sent (%s)' %
                _first_line(exc))
        finally:
            self.bus.end_cast(probe, reached)
