"""virtual:floatingip: the addresses floating IP reservations book.

``floatingips`` holds one row per registered address of an external
network (Blazar's table of the same name): ``floating_network_id``,
``floating_ip_address`` (canonical text), ``subnet_id`` (the Neutron
subnet holding it; null with the static inventory) and ``reservable``,
one row per ``(network, address)``.  Each address is a provider of the
capacity ledger (kind ``floatingip``, class ``FLOATING_IP`` = 1), written
by the registration itself; the downgrade removes those inventories and
their bookings with the table.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.dialects import postgresql

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None

KIND = 'floatingip'


def _binary_string():
    return sa.String(255).with_variant(
        mysql.VARCHAR(255, collation='utf8mb4_bin'), 'mysql', 'mariadb'
    ).with_variant(postgresql.VARCHAR(255, collation='C'), 'postgresql')


def upgrade():
    op.create_table(
        'floatingips',
        sa.Column('id', sa.String(36), primary_key=True),
        sa.Column('floating_network_id', _binary_string(), nullable=False),
        sa.Column('floating_ip_address', _binary_string(), nullable=False),
        sa.Column('subnet_id', sa.String(255), nullable=True),
        sa.Column('reservable', sa.Boolean, nullable=False),
        sa.Column('created_at', sa.DateTime, nullable=False),
        sa.Column('updated_at', sa.DateTime, nullable=True),
        sa.UniqueConstraint('floating_network_id', 'floating_ip_address',
                            name='uniq_floatingips0network0address'),
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
    op.drop_table('floatingips')
