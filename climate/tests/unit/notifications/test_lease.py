from oslo_config import cfg
from oslo_messaging.notify import _impl_test

from climate import context
from climate.notifications import lease as lease_notifications
from climate import rpc

CONF = cfg.CONF


def test_lease_notification_is_versioned_and_carries_the_lease():
    rpc.cleanup()
    rpc.register_opts(CONF)
    CONF([], project='climate', default_config_files=[])
    CONF.set_override('transport_url', 'fake:/')
    rpc.init()  # registers the notification options
    CONF.set_override('driver', ['test'],
                      group='oslo_messaging_notifications')
    _impl_test.reset()
    try:
        notifier = lease_notifications.LeaseNotifier('host1')
        lease = {'id': 'l1', 'name': 'demo', 'status': 'ACTIVE'}
        notifier.send(context.admin_context(), lease_notifications.START,
                      lease)
        [(ctxt, message, priority, _retry)] = _impl_test.NOTIFICATIONS
        assert message['event_type'] == 'climate.lease.start'
        assert message['publisher_id'] == 'climate.manager.host1'
        assert priority == 'INFO'
        assert message['payload'] == {'version': '1.0', 'lease': lease}
    finally:
        CONF.clear_override('driver', group='oslo_messaging_notifications')
        CONF.clear_override('transport_url')
        rpc.cleanup()


def test_a_failing_notifier_never_fails_the_caller():
    class Broken:
        def info(self, *args):
            raise RuntimeError('rabbit is down')

    notifier = lease_notifications.LeaseNotifier.__new__(
        lease_notifications.LeaseNotifier)
    notifier._notifier = Broken()
    notifier.send(context.admin_context(), 'end', {'id': 'x'})
