"""climate.rpc's settings of the AMQP driver hold."""

from oslo_messaging._drivers import amqpdriver

from climate import rpc


def test_amqp_pollers_do_not_spin():
    # an idle poller waits POLL_TIMEOUT_MIN for a message, not 1 ms; if
    # oslo.messaging renames the setting, this says so
    assert amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN == rpc.POLL_TIMEOUT_MIN
