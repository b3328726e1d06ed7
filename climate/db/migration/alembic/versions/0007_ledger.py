"""The capacity ledger: inventories of providers and bookings over time.

``ledger_inventories`` holds Placement's inventory model (total,
reserved, allocation ratio, unit bounds) per provider and resource class;
``ledger_bookings`` the amounts reservations hold over ``[start, end)``
(``climate.db.ledger``).  Nothing moves into them yet: ``physical:host``
keeps ``computehost_allocations`` until its own migration.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.dialects import postgresql

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


# byte-wise comparison on every engine (see climate.db.models)
def _key():
    return sa.String(255).with_variant(
        mysql.VARCHAR(255, collation='utf8mb4_bin'), 'mysql', 'mariadb'
    ).with_variant(postgresql.VARCHAR(255, collation='C'), 'postgresql')


def upgrade():
    op.create_table(
        'ledger_inventories',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('provider_id', _key(), nullable=False),
        sa.Column('provider_kind', sa.String(64), nullable=False),
        sa.Column('resource_class', _key(), nullable=False),
        sa.Column('total', sa.BigInteger, nullable=False),
        sa.Column('reserved', sa.BigInteger, nullable=False),
        sa.Column('allocation_ratio', sa.Double, nullable=False),
        sa.Column('min_unit', sa.BigInteger, nullable=False),
        sa.Column('max_unit', sa.BigInteger, nullable=False),
        sa.Column('step_size', sa.BigInteger, nullable=False),
        sa.Column('created_at', sa.DateTime, nullable=False),
        sa.Column('updated_at', sa.DateTime, nullable=True),
        sa.UniqueConstraint('provider_id', 'resource_class',
                            name='uniq_ledger_inventories0provider0class'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_ledger_inventories_kind_provider',
                    'ledger_inventories',
                    ['provider_kind', 'provider_id', 'resource_class'])

    op.create_table(
        'ledger_bookings',
        sa.Column('id', sa.String(36), primary_key=True),
        sa.Column('reservation_id', sa.String(36),
                  sa.ForeignKey('reservations.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('lease_id', sa.String(36), nullable=False),
        sa.Column('provider_id', _key(), nullable=False),
        sa.Column('resource_class', _key(), nullable=False),
        sa.Column('amount', sa.BigInteger, nullable=False),
        sa.Column('start_date', sa.DateTime, nullable=False),
        sa.Column('end_date', sa.DateTime, nullable=False),
        sa.Column('span_level', sa.SmallInteger, nullable=False),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_ledger_bookings_reservation_id', 'ledger_bookings',
                    ['reservation_id'])
    op.create_index('ix_ledger_bookings_provider_window', 'ledger_bookings',
                    ['provider_id', 'resource_class', 'start_date',
                     'end_date', 'amount'])
    op.create_index('ix_ledger_bookings_span_window', 'ledger_bookings',
                    ['span_level', 'start_date', 'end_date',
                     'resource_class', 'provider_id', 'amount'])


def downgrade():
    op.drop_table('ledger_bookings')
    op.drop_table('ledger_inventories')
