"""virtual:volume: the volume pools reservations book on.

``volume_pools`` holds one row per storage pool (Cinder's pool name
``host@backend#pool``, or a pool declared to the static inventory) with
what its ledger inventory is computed from: ``total_capacity_gb``,
``reserved_percentage`` and ``max_over_subscription_ratio``, and its
capabilities (JSON text) that ``resource_properties`` filters read.  Each
pool is a provider of the capacity ledger (kind ``volume_pool``, classes
``VOLUME_GB`` and ``VOLUME``), written by the registration itself; the
downgrade removes those inventories with the table.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-25
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.dialects import postgresql

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None

KIND = 'volume_pool'


def _binary_string():
    return sa.String(255).with_variant(
        mysql.VARCHAR(255, collation='utf8mb4_bin'), 'mysql', 'mariadb'
    ).with_variant(postgresql.VARCHAR(255, collation='C'), 'postgresql')


def upgrade():
    op.create_table(
        'volume_pools',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('name', _binary_string(), nullable=False),
        sa.Column('backend', _binary_string(), nullable=False),
        sa.Column('reservable', sa.Boolean, nullable=False),
        sa.Column('total_capacity_gb', sa.BigInteger, nullable=False),
        sa.Column('reserved_percentage', sa.Integer, nullable=False),
        sa.Column('max_over_subscription_ratio', sa.Float, nullable=False),
        sa.Column('capabilities', sa.Text, nullable=False),
        sa.Column('created_at', sa.DateTime, nullable=False),
        sa.Column('updated_at', sa.DateTime, nullable=True),
        sa.UniqueConstraint('name', name='uniq_volume_pools0name'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')


def downgrade():
    inventories = sa.table('ledger_inventories',
                           sa.column('provider_kind', sa.String))
    bookings = sa.table('ledger_bookings',
                        sa.column('provider_id', sa.String))
    op.execute(bookings.delete().where(
        bookings.c.provider_id.like(KIND + ':%')))
    op.execute(inventories.delete().where(
        inventories.c.provider_kind == KIND))
    op.drop_table('volume_pools')
