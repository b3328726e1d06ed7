import datetime

from oslo_config import cfg
from oslo_messaging.notify import _impl_test
import pytest
import sqlalchemy as sa

from climate import context
from climate import dates
from climate.db import api as db_api
from climate.db.ledger import windows
from climate.db import models
from climate.db import usage as db_usage
from climate.notifications import lease as lease_notifications
from climate import rpc
from climate.tests import schema

CONF = cfg.CONF
H = datetime.timedelta(hours=1)


@pytest.fixture
def notifications(tmp_path):
    """A test notification driver and a SQLite database."""
    rpc.cleanup()
    rpc.register_opts(CONF)
    CONF([], project='climate', default_config_files=[])
    CONF.set_override('transport_url', 'fake:/')
    rpc.init()  # registers the notification options
    CONF.set_override('driver', ['test'],
                      group='oslo_messaging_notifications')
    schema.head_database(tmp_path / 'n.sqlite')
    _impl_test.reset()
    try:
        yield _impl_test.NOTIFICATIONS
    finally:
        db_api.get_engine().dispose()
        CONF.clear_override('driver', group='oslo_messaging_notifications')
        CONF.clear_override('transport_url')
        rpc.cleanup()


def test_lease_notification_is_versioned_and_carries_the_lease(
        notifications):
    notifier = lease_notifications.LeaseNotifier('host1')
    lease = {'id': 'l1', 'name': 'demo', 'status': 'ACTIVE'}
    notifier.send(context.admin_context(), lease_notifications.START, lease)
    [(ctxt, message, priority, _retry)] = notifications
    assert message['event_type'] == 'climate.lease.start'
    assert message['publisher_id'] == 'climate.manager.host1'
    assert priority == 'INFO'
    # a lease holding nothing
    assert message['payload'] == {'version': '1.3', 'lease': lease,
                                  'usage': []}


def test_the_payload_carries_resource_hours(notifications, monkeypatch):
    """Consumed before now and committed from now on, from the ledger;
    once the lease is gone, from its usage records."""
    ctx = context.admin_context()
    now = dates.utcnow()
    # the notifier's "now" is the test's: on a loaded machine a second
    # passes between the two and moves an hour's split by that second
    monkeypatch.setattr(dates, 'utcnow', lambda: now)
    start, end = now - 2 * H, now + 3 * H
    with db_api.writer(ctx) as session:
        session.execute(sa.insert(models.Lease), [dict(
            id='l2', name='held', project_id='p', start_date=start,
            end_date=end, status='ACTIVE', created_at=start)])
        session.execute(sa.insert(models.Reservation), [dict(
            id='r2', lease_id='l2', resource_type='virtual:instance',
            status='active', params={}, created_at=start)])
        session.execute(sa.insert(models.LedgerBooking), [dict(
            id='b%d' % n, reservation_id='r2', lease_id='l2',
            project_id='p', provider_id='h1', resource_class=cls,
            amount=amount, start_date=start, end_date=end,
            span_level=windows.span_level(start, end))
            for n, (cls, amount) in enumerate((('VCPU', 4),
                                                ('MEMORY_MB', 1024)))])
    notifier = lease_notifications.LeaseNotifier('host1')
    notifier.send(ctx, lease_notifications.UPDATE, {'id': 'l2'})
    usage = notifications[-1][1]['payload']['usage']
    assert usage == [
        {'resource_type': 'virtual:instance', 'resource_class': 'MEMORY_MB',
         'unit': 'MB-hours', 'consumed': 2048.0, 'committed': 3072.0},
        {'resource_type': 'virtual:instance', 'resource_class': 'VCPU',
         'unit': 'vCPU-hours', 'consumed': 8.0, 'committed': 12.0}]

    # deleted an hour later: what it held until then remains
    with db_api.writer(ctx) as session:
        db_usage.record_consumed(session, 'l2', now + H)
        session.execute(sa.delete(models.LedgerBooking))
        session.execute(sa.delete(models.Reservation))
        session.execute(sa.delete(models.Lease))
    notifier.send(ctx, lease_notifications.DELETE, {'id': 'l2'})
    usage = notifications[-1][1]['payload']['usage']
    assert [(u['resource_class'], u['consumed'], u['committed'])
            for u in usage] == [('MEMORY_MB', 2048.0, 1024.0),
                                ('VCPU', 8.0, 4.0)]


def test_a_failing_notifier_never_fails_the_caller():
    class Broken:
        def is_enabled(self):
            return True

        def info(self, *args):
            raise RuntimeError('rabbit is down')

    notifier = lease_notifications.LeaseNotifier.__new__(
        lease_notifications.LeaseNotifier)
    notifier._notifier = Broken()
    notifier.send(context.admin_context(), 'end', {'id': 'x'})


def test_notifications_sent_together_read_each_lease_s_usage(
        notifications, monkeypatch):
    """send_many (a batch of events) reads the usage of all its leases in
    one statement: each payload as send alone gives it."""
    ctx = context.admin_context()
    now = dates.utcnow()
    monkeypatch.setattr(dates, 'utcnow', lambda: now)
    start, end = now - 2 * H, now + 3 * H
    with db_api.writer(ctx) as session:
        session.execute(sa.insert(models.Lease), [dict(
            id=lease_id, name=lease_id, project_id='p', start_date=start,
            end_date=end, status='ACTIVE', created_at=start)
            for lease_id in ('l1', 'l2', 'l3')])
        session.execute(sa.insert(models.Reservation), [dict(
            id='r' + lease_id, lease_id=lease_id,
            resource_type='virtual:instance', status='active', params={},
            created_at=start) for lease_id in ('l1', 'l2')])
        session.execute(sa.insert(models.LedgerBooking), [dict(
            id='b' + lease_id, reservation_id='r' + lease_id,
            lease_id=lease_id, project_id='p', provider_id='h1',
            resource_class='VCPU', amount=amount, start_date=start,
            end_date=end, span_level=windows.span_level(start, end))
            for lease_id, amount in (('l1', 1), ('l2', 4))])
    notifier = lease_notifications.LeaseNotifier('host1')
    leases = [{'id': 'l1'}, {'id': 'l2'}, {'id': 'l3'}]
    for lease in leases:
        notifier.send(ctx, lease_notifications.START, lease)
    alone = [m['payload'] for _c, m, _p, _r in notifications]
    del notifications[:]
    notifier.send_many(ctx, [(lease_notifications.START, lease, None)
                             for lease in leases])
    together = [m['payload'] for _c, m, _p, _r in notifications]
    assert together == alone
    assert [p['usage'][0]['committed'] if p['usage'] else None
            for p in together] == [3.0, 12.0, None]
