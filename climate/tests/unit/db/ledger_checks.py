"""What the database tests of the resource tables share: the ledger
inventory of a kind of provider, and a migration's round trip."""

from alembic import autogenerate
from alembic import migration as alembic_migration
import sqlalchemy as sa

from climate.db import api as db_api
from climate.db.ledger import inventory
from climate.db import migration
from climate.db import models


def inventory_totals(ctx, kind):
    """``{provider: {class: total}}`` of the providers of ``kind``."""
    with db_api.reader(ctx) as session:
        return {p: {c: inv.total for c, inv in held.items()}
                for p, held in inventory.inventories_of(
                    session, kind=kind).items()}


def reservation_row(session, resource_type, start, end):
    """A pending lease over ``[start, end)`` with one reservation of
    ``resource_type``, in the caller's transaction: the reservation row
    (its ``lease_id`` set), for bookings to hang on."""
    lease = models.Lease(name='l', start_date=start, end_date=end,
                         project_id='p', user_id='u', status='PENDING')
    session.add(lease)
    session.flush()
    res = models.Reservation(lease_id=lease.id, resource_type=resource_type,
                             params={}, status='pending')
    session.add(res)
    session.flush()
    return res


def assert_round_trip(down_to, table, kind):
    """From the head, migrating down to ``down_to`` drops ``table`` and
    the ledger inventories of providers of ``kind``; up again, ``table``
    is what the models say."""
    assert migration.current() == migration.head()
    engine = db_api.get_engine()
    migration.downgrade(down_to)
    assert table not in sa.inspect(engine).get_table_names()
    with engine.connect() as conn:
        kinds = conn.execute(sa.text(
            'SELECT DISTINCT provider_kind FROM ledger_inventories')).all()
    assert (kind,) not in kinds
    migration.upgrade()
    with engine.connect() as conn:
        context = alembic_migration.MigrationContext.configure(
            conn, opts={'compare_type': True})
        diff = [d for d in autogenerate.compare_metadata(
            context, models.Base.metadata) if table in repr(d)]
    assert diff == []
