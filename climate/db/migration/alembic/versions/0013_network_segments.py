"""network: the network segments network reservations book.

``network_segments`` holds one row per reservable segment (Chameleon's
and Blazar's table of the same name): ``network_type`` (vlan, vxlan,
flat), ``physical_network`` ('' when it has none, so that the unique
constraint holds on every engine), ``segment_id``, ``reservable`` and
``capabilities`` (JSON text: the extra capabilities filters select by).
Each segment is a provider of the capacity ledger (kind
``network_segment``, class ``NETWORK_SEGMENT`` = 1), written by the
registration itself; the downgrade removes those inventories and their
bookings with the table.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-28
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.dialects import postgresql

revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None

KIND = 'network_segment'


def _binary_string():
    return sa.String(255).with_variant(
        mysql.VARCHAR(255, collation='utf8mb4_bin'), 'mysql', 'mariadb'
    ).with_variant(postgresql.VARCHAR(255, collation='C'), 'postgresql')


def upgrade():
    op.create_table(
        'network_segments',
        sa.Column('id', sa.String(36), primary_key=True),
        sa.Column('network_type', sa.String(16), nullable=False),
        sa.Column('physical_network', _binary_string(), nullable=False),
        sa.Column('segment_id', sa.Integer, nullable=False),
        sa.Column('reservable', sa.Boolean, nullable=False),
        sa.Column('capabilities', sa.Text, nullable=False),
        sa.Column('created_at', sa.DateTime, nullable=False),
        sa.Column('updated_at', sa.DateTime, nullable=True),
        sa.UniqueConstraint('network_type', 'physical_network', 'segment_id',
                            name='uniq_network_segments0type0physnet0seg'),
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
    op.drop_table('network_segments')
