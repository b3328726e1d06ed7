"""climate.rpc's settings of the AMQP driver hold, and its cleanup."""

import threading
import time

from oslo_messaging._drivers import amqpdriver

from climate import rpc


def test_amqp_pollers_do_not_spin():
    # an idle poller waits POLL_TIMEOUT_MIN for a message, not 1 ms; if
    # oslo.messaging renames the setting, this says so
    assert amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN == rpc.POLL_TIMEOUT_MIN


class _StuckTransport:
    """A transport whose cleanup waits, as oslo.messaging's does for a reply
    listener stuck in a connection attempt while the broker is away."""

    def __init__(self, release):
        self.release = release
        self.closed = False

    def cleanup(self):
        self.release.wait(30)
        self.closed = True


def test_a_bounded_cleanup_does_not_wait_for_a_stuck_transport(monkeypatch):
    release = threading.Event()
    stuck = _StuckTransport(release)
    monkeypatch.setattr(rpc, '_TRANSPORT', stuck)
    monkeypatch.setattr(rpc, '_NOTIFICATION_TRANSPORT', None)
    started = time.monotonic()
    rpc.cleanup(timeout=0.2)
    assert time.monotonic() - started < 15  # the transport hangs 30 s
    assert rpc._TRANSPORT is None and not stuck.closed
    release.set()  # the daemon thread still closes it when it can
    for _ in range(100):
        if stuck.closed:
            break
        time.sleep(0.01)
    assert stuck.closed


def test_an_unbounded_cleanup_closes_before_it_returns(monkeypatch):
    release = threading.Event()
    release.set()
    transport = _StuckTransport(release)
    monkeypatch.setattr(rpc, '_TRANSPORT', transport)
    monkeypatch.setattr(rpc, '_NOTIFICATION_TRANSPORT', None)
    rpc.cleanup()
    assert transport.closed and rpc._TRANSPORT is None


def test_the_fake_transport_wakes_its_listeners_on_delivery():
    """climate-all's in-process transport: a listener sleeping between two
    looks (50 ms, or here 30 s) wakes when a message is delivered."""
    from oslo_messaging._drivers import impl_fake

    rpc._WokenOnDelivery.install()
    rpc._WokenOnDelivery.install()   # twice: still one wrapper
    assert impl_fake.time is rpc._WokenOnDelivery
    sleeper = threading.Thread(target=impl_fake.time.sleep, args=(30,))
    sleeper.start()
    exchange = impl_fake.FakeExchange('test')
    deadline = 100
    while sleeper.is_alive() and deadline:
        # until the sleeper waits: a delivery before its wait is not seen
        exchange.deliver_message('topic', {}, {'method': 'ping'})
        sleeper.join(0.1)
        deadline -= 1
    assert not sleeper.is_alive()
    assert exchange.poll(type('T', (), {'server': None, 'topic': 'topic'})(),
                         None)[1] == {'method': 'ping'}
