"""climate.db.volume_pools on SQLite: the registration writes the pool's
ledger inventory in its transaction, a change the bookings do not fit is
refused with nothing changed, and migration 0010 goes down and up."""

import datetime

from alembic import autogenerate
from alembic import migration as alembic_migration
import pytest
import sqlalchemy as sa

from climate.db import api as db_api
from climate.db.ledger import inventory
from climate.db.ledger import slot_search
from climate.db import migration
from climate.db import models
from climate.db import volume_pools as db_pools
from climate import exceptions

T0 = datetime.datetime(2090, 1, 1)
T1 = T0 + datetime.timedelta(hours=2)


def _pool(ctx, name='n@lvm#a', total=100, **extra):
    values = dict(name=name, backend='lvm', reservable=True,
                  total_capacity_gb=total, reserved_percentage=0,
                  max_over_subscription_ratio=1.0, capabilities={})
    values.update(extra)
    return db_pools.pool_create(ctx, values)


def _inventory(ctx):
    with db_api.reader(ctx) as session:
        return {p: {c: inv.total for c, inv in held.items()}
                for p, held in inventory.inventories_of(
                    session, kind=inventory.VOLUME_POOL).items()}


def test_usable_gb():
    assert db_pools.usable_gb(100, 0, 1.0) == 100
    assert db_pools.usable_gb(100, 10, 2.0) == 180
    assert db_pools.usable_gb(33, 33, 1.5) == 33
    assert db_pools.usable_gb(0, 0, 20.0) == 0


def test_create_update_delete_follow_in_the_ledger(ctx):
    pool = _pool(ctx, reserved_percentage=20,
                 capabilities={'max_volumes': 5})
    provider = db_pools.provider(pool['id'])
    assert _inventory(ctx) == {provider: {'VOLUME_GB': 80, 'VOLUME': 5}}
    db_pools.pool_update(ctx, pool['id'], {'total_capacity_gb': 200})
    assert _inventory(ctx)[provider]['VOLUME_GB'] == 160
    db_pools.pool_delete(ctx, pool['id'])
    assert _inventory(ctx) == {}
    assert db_pools.pool_list(ctx) == []


def test_a_duplicate_name_is_a_conflict_and_writes_nothing(ctx):
    _pool(ctx)
    with pytest.raises(exceptions.Conflict):
        _pool(ctx, total=5)
    assert len(db_pools.pool_list(ctx)) == 1
    assert len(_inventory(ctx)) == 1


def test_bookings_guard_shrinking_and_removal(ctx):
    pool = _pool(ctx, total=50)
    provider = db_pools.provider(pool['id'])
    with db_api.writer(ctx) as session:
        lease = models.Lease(name='l', start_date=T0, end_date=T1,
                             project_id='p', user_id='u', status='PENDING')
        session.add(lease)
        session.flush()
        res = models.Reservation(lease_id=lease.id,
                                 resource_type='virtual:volume', params={},
                                 status='pending')
        session.add(res)
        session.flush()
        slot_search.place(session, res.id, lease.id, {'VOLUME_GB': 20,
                                                      'VOLUME': 1}, 2, T0, T1,
                          affinity=True, providers=[provider],
                          kind=inventory.VOLUME_POOL)
    with pytest.raises(exceptions.Conflict) as info:
        db_pools.pool_update(ctx, pool['id'], {'total_capacity_gb': 30})
    assert 'VOLUME_GB' in info.value.message
    assert db_pools.pool_get(ctx, pool['id'])['total_capacity_gb'] == 50
    assert _inventory(ctx)[provider]['VOLUME_GB'] == 50
    with pytest.raises(exceptions.Conflict):
        db_pools.pool_delete(ctx, pool['id'])
    assert db_pools.pool_get(ctx, pool['id'])


def test_migration_0010_goes_down_and_up(ctx):
    assert migration.current() == migration.head()
    engine = db_api.get_engine()
    _pool(ctx)
    migration.downgrade('0009')
    inspector = sa.inspect(engine)
    assert 'volume_pools' not in inspector.get_table_names()
    with engine.connect() as conn:
        kinds = conn.execute(sa.text(
            'SELECT DISTINCT provider_kind FROM ledger_inventories')).all()
    assert ('volume_pool',) not in kinds
    migration.upgrade()
    with engine.connect() as conn:
        context = alembic_migration.MigrationContext.configure(
            conn, opts={'compare_type': True})
        diff = [d for d in autogenerate.compare_metadata(
            context, models.Base.metadata) if 'volume_pools' in repr(d)]
    assert diff == []


def test_sync_adds_updates_and_retires_pools(ctx):
    _pool(ctx, name='old', total=10)
    _pool(ctx, name='kept', total=10)
    done = db_pools.pool_sync(ctx, [
        dict(name='kept', backend='lvm', total_capacity_gb=20,
             reserved_percentage=0, max_over_subscription_ratio=1.0,
             capabilities={}),
        dict(name='new', backend='ceph', total_capacity_gb=5,
             reserved_percentage=0, max_over_subscription_ratio=1.0,
             capabilities={'tier': 'gold'})])
    assert (done['added'], done['updated'], done['gone']) == (
        ['new'], ['kept'], ['old'])
    pools = {p['name']: p for p in db_pools.pool_list(ctx)}
    assert pools['old']['reservable'] is False
    assert pools['kept']['capacity_gb'] == 20
    assert pools['new']['capabilities'] == {'tier': 'gold'}
