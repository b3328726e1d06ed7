"""The writes that make two concurrent writers conflict on any database,
a multi-writer Galera cluster included (doc/source/ledger.rst): the
quota check's write of the project's row, and work locks as committed
claims with an expiry."""

import datetime

import sqlalchemy as sa

from climate.db import api as db_api
from climate.db import models
from climate.db import quotas as db_quotas
from climate.db import work_locks
from climate.tests import locks


def _generation(ctx, project_id):
    with db_api.reader(ctx) as session:
        return session.execute(sa.select(
            models.ProjectQuota.generation, models.ProjectQuota.updated_at
        ).where(models.ProjectQuota.project_id == project_id)).first()


def test_a_locking_quota_read_writes_the_projects_row(ctx):
    with db_api.writer(ctx) as session:
        # no row: nothing to write, nothing to read
        assert db_quotas.get(session, 'p1', lock=True) is None
        assert _generation(ctx, 'p1') is None
        db_quotas.put(session, 'p1', {'budget_period': 'month'})
    before = _generation(ctx, 'p1')
    with db_api.writer(ctx) as session:
        own = db_quotas.get(session, 'p1', lock=True)
        assert own['budget_period'] == 'month'
        # a plain read writes nothing
        db_quotas.get(session, 'p1')
    after = _generation(ctx, 'p1')
    assert after.generation == before.generation + 1
    # the limits did not change: their updated_at neither
    assert after.updated_at == before.updated_at
    with db_api.writer(ctx) as session:
        assert db_quotas.get(session, 'p2', lock=True, create=True) == {
            f: None for f in db_quotas.FIELDS}
    assert _generation(ctx, 'p2').generation == 1


def test_work_lock_is_a_committed_claim_with_an_expiry(ctx, monkeypatch):
    # SQLite's work locks are thread locks (one process); the claim the
    # other databases use is checked here on the same statements by
    # calling its steps directly
    engine = db_api.get_engine()
    table = models.WorkLock.__table__

    def row():
        with engine.connect() as conn:
            return conn.execute(sa.select(table).where(
                table.c.name == 'lease_retries')).first()

    assert work_locks.take(engine, 'lease_retries', 'a', 60)
    assert row().holder == 'a'
    # another holder is refused while the claim lasts; the holder renews
    assert not work_locks.take(engine, 'lease_retries', 'b', 60)
    assert work_locks.renew(engine, 'lease_retries', 'a', 60)
    assert not work_locks.renew(engine, 'lease_retries', 'b', 60)
    # an expired claim (its holder died) is taken over
    with engine.begin() as conn:
        conn.execute(sa.update(table).values(
            held_until=datetime.datetime(2000, 1, 1)))
    assert work_locks.take(engine, 'lease_retries', 'b', 60)
    assert not work_locks.renew(engine, 'lease_retries', 'a', 60)
    work_locks.give_back(engine, 'lease_retries', 'b')
    assert row().holder is None
    # a name without its row gets one
    assert work_locks.take(engine, 'new_job', 'a', 60)


def test_work_lock_on_sqlite_lets_one_thread_in(ctx):
    def not_waiting(_release):
        with work_locks.work_lock('lease_hunts', wait=False) as held:
            return held

    assert locks.held_elsewhere('lease_hunts', not_waiting, 10) is False
    with work_locks.work_lock('lease_hunts', wait=False) as held:
        assert held is True


def test_a_rollback_failed_by_a_concurrent_writer_is_a_warning(caplog):
    import logging

    from oslo_db import exception as db_exc
    from oslo_utils import excutils

    db_api.quiet_aborted_rollbacks()
    db_api.quiet_aborted_rollbacks()  # once, however often called
    assert len(logging.getLogger('oslo_utils.excutils').filters) == 1
    caplog.set_level(logging.WARNING)
    try:
        try:
            raise ValueError('not enough hosts')
        except ValueError:
            with excutils.save_and_reraise_exception():
                raise db_exc.DBDeadlock('(1213, Deadlock found)')
    except db_exc.DBDeadlock:
        pass
    records = [r for r in caplog.records if r.name == 'oslo_utils.excutils']
    assert [(r.levelname, r.exc_info) for r in records] == [
        ('WARNING', None)]
    assert 'it is re-run' in records[0].getMessage()


def test_inventory_writes_are_re_run_when_a_concurrent_writer_wins(
        ctx, monkeypatch):
    # Every registration counts a change on its kind's one shared row
    # (inventory_versions): on Galera, two admins' requests on two nodes
    # (or one's request on a node still applying the other's) lose at
    # certification, a deadlock that the write re-runs, not a 503
    from oslo_db import exception as db_exc

    from climate.db import floatingips as db_fips
    from climate.db import inventory_versions
    from climate.db import network_segments as db_segments
    from climate.db import volume_pools as db_pools

    real_bump = inventory_versions.bump
    lost = []

    def bump_losing_once(session, kind):
        if len(lost) < 1:
            lost.append(kind)
            raise db_exc.DBDeadlock('(1213, Deadlock found)')
        return real_bump(session, kind)

    def losing_once(write):
        lost.clear()
        monkeypatch.setattr(inventory_versions, 'bump', bump_losing_once)
        try:
            return write()
        finally:
            monkeypatch.setattr(inventory_versions, 'bump', real_bump)
            assert len(lost) == 1, write

    fip = losing_once(lambda: db_fips.fip_create(ctx, {
        'floating_network_id': 'net-1', 'floating_ip_address': '192.0.2.7',
        'subnet_id': 'sub-1', 'reservable': True}))
    assert [f['id'] for f in db_fips.fip_list(ctx)] == [fip['id']]
    losing_once(lambda: db_fips.fip_delete(ctx, fip['id']))
    assert db_fips.fip_list(ctx) == []

    segment = losing_once(lambda: db_segments.segment_create(ctx, {
        'network_type': 'vlan', 'physical_network': 'physnet1',
        'segment_id': 1001}))
    losing_once(lambda: db_segments.segment_update(
        ctx, segment['id'], capabilities={'zone': 'a'}))
    assert db_segments.segment_get(ctx, segment['id'])['zone'] == 'a'
    losing_once(lambda: db_segments.segment_delete(ctx, segment['id']))
    assert db_segments.segment_list(ctx) == []

    pool = losing_once(lambda: db_pools.pool_create(ctx, {
        'name': 'ceph', 'backend': 'rbd', 'reservable': True,
        'total_capacity_gb': 100}))
    losing_once(lambda: db_pools.pool_update(
        ctx, pool['id'], {'total_capacity_gb': 200}))
    assert db_pools.pool_get(ctx, pool['id'])['total_capacity_gb'] == 200
    losing_once(lambda: db_pools.pool_delete(ctx, pool['id']))
    assert db_pools.pool_list(ctx) == []
