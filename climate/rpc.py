"""oslo.messaging plumbing shared by the API and the manager."""

import threading
import time

from oslo_config import cfg
import oslo_messaging as messaging
from oslo_messaging._drivers import amqpdriver

from climate import context

TOPIC = 'climate.manager'
# Exceptions in these modules are re-raised as themselves in the caller.
ALLOWED_EXMODS = ['climate.exceptions']

_TRANSPORT = None
_NOTIFICATION_TRANSPORT = None

# The AMQP driver's pollers (the manager's RPC listener, the API's reply
# waiter) drop to a 1 ms consume timeout after each message and back off
# from there, so they can run acks and requeues that other threads queued.
# Only notification listeners queue any (RPC messages are acked as they
# arrive) and Climate runs none: the 1 ms spin only took the GIL from the
# thread serving the request (about 1 ms of each API call).  A message
# still wakes a poller at once; only the idle timeout grows.
POLL_TIMEOUT_MIN = 1.0
if hasattr(amqpdriver, 'ACK_REQUEUE_EVERY_SECONDS_MIN'):
    amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN = POLL_TIMEOUT_MIN


class _WokenOnDelivery:
    """The clock of oslo.messaging's in-process ``fake:`` transport (the
    embedded default's): its listeners look for a message, then sleep 50 ms
    -- most of each API call of ``climate-all``.  Here the sleep ends as
    soon as a message is delivered.  A delivery between a listener's look
    and its sleep still waits the 50 ms, as before."""

    delivered = threading.Condition()
    time = staticmethod(time.time)

    @classmethod
    def sleep(cls, seconds):
        with cls.delivered:
            cls.delivered.wait(seconds)

    @classmethod
    def install(cls):
        from oslo_messaging._drivers import impl_fake
        if impl_fake.time is cls:
            return
        deliver = impl_fake.FakeExchange.deliver_message

        def deliver_message(self, *args, **kwargs):
            deliver(self, *args, **kwargs)
            with cls.delivered:
                cls.delivered.notify_all()

        impl_fake.FakeExchange.deliver_message = deliver_message
        impl_fake.time = cls


class ContextSerializer(messaging.Serializer):
    """Carries the RequestContext across RPC; payloads are plain JSON."""

    def __init__(self):
        self._base = messaging.JsonPayloadSerializer()

    def serialize_entity(self, ctxt, entity):
        # Payloads are JSON-native already (views, request bodies), and the
        # driver's jsonutils.dumps converts anything else: a to_primitive
        # pass here only cost ~5 ms per page of 100 leases.
        return entity

    def deserialize_entity(self, ctxt, entity):
        return self._base.deserialize_entity(ctxt, entity)

    def serialize_context(self, ctxt):
        return ctxt.to_dict()

    def deserialize_context(self, ctxt):
        return context.RequestContext.from_dict(ctxt)


def register_opts(conf):
    """Register oslo.messaging's transport options (``transport_url``...)
    now, so their defaults can change before the config files are read.
    These are the very objects oslo.messaging registers later itself."""
    conf.register_opts(messaging.transport._transport_opts)
    messaging.set_transport_defaults('climate')


def init(conf=None):
    """Create the transports once per process."""
    global _TRANSPORT, _NOTIFICATION_TRANSPORT
    conf = conf or cfg.CONF
    _WokenOnDelivery.install()
    if _TRANSPORT is None:
        _TRANSPORT = messaging.get_rpc_transport(
            conf, allowed_remote_exmods=ALLOWED_EXMODS)
    if _NOTIFICATION_TRANSPORT is None:
        _NOTIFICATION_TRANSPORT = messaging.get_notification_transport(conf)


def cleanup(timeout=None):
    """Close the transports; with ``timeout``, give up waiting after that
    many seconds.

    A process stopping during a broker outage would otherwise wait for
    oslo.messaging's reply listener, stuck in a connection attempt (kombu's
    5 s connect timeout, then the next): the closing is left to a daemon
    thread that the process does not wait for.
    """
    global _TRANSPORT, _NOTIFICATION_TRANSPORT
    transports = [t for t in (_TRANSPORT, _NOTIFICATION_TRANSPORT)
                  if t is not None]
    _TRANSPORT = _NOTIFICATION_TRANSPORT = None

    def close():
        for transport in transports:
            transport.cleanup()

    if timeout is None:
        close()
        return
    closer = threading.Thread(target=close, daemon=True,
                              name='climate-rpc-cleanup')
    closer.start()
    closer.join(timeout)


def get_client(server=None, fanout=False, timeout=None):
    init()
    target = messaging.Target(topic=TOPIC, server=server, fanout=fanout,
                              version='1.0')
    return messaging.get_rpc_client(_TRANSPORT, target,
                                    serializer=ContextSerializer(),
                                    timeout=timeout)


def get_server(host, endpoints):
    init()
    target = messaging.Target(topic=TOPIC, server=host)
    # oslo.messaging's default executor is native threads
    return messaging.get_rpc_server(_TRANSPORT, target, endpoints,
                                    serializer=ContextSerializer())


def get_notifier(publisher_id):
    init()
    return messaging.Notifier(_NOTIFICATION_TRANSPORT,
                              publisher_id=publisher_id,
                              serializer=ContextSerializer())
