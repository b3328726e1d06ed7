"""What reservations held, kept after their leases end.

``usage_records``: one row per ledger booking a lease held, cut at the
moment the lease ended or was deleted (``climate.db.usage``), written in
the transaction that releases the booking.  The ledger keeps current
and future bookings only; usage (``GET /v1/usage``) and billing read
the past here.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-26
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.dialects import postgresql

revision = '0016'
down_revision = '0015'
branch_labels = None
depends_on = None

_KEY = sa.String(255).with_variant(
    mysql.VARCHAR(255, collation='utf8mb4_bin'), 'mysql', 'mariadb'
).with_variant(postgresql.VARCHAR(255, collation='C'), 'postgresql')


def upgrade():
    op.create_table(
        'usage_records',
        sa.Column('id', sa.BigInteger().with_variant(sa.Integer, 'sqlite'),
                  primary_key=True, autoincrement=True),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('lease_id', sa.String(36), nullable=False),
        sa.Column('lease_name', sa.String(255), nullable=False),
        sa.Column('lease_created_at', sa.DateTime, nullable=False),
        sa.Column('lease_start_date', sa.DateTime, nullable=False),
        sa.Column('reservation_id', sa.String(36), nullable=False),
        sa.Column('resource_type', sa.String(66), nullable=False),
        sa.Column('resource_class', _KEY, nullable=False),
        sa.Column('amount', sa.BigInteger, nullable=False),
        sa.Column('start_date', sa.DateTime, nullable=False),
        sa.Column('end_date', sa.DateTime, nullable=False),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_usage_records_project_window', 'usage_records',
                    ['project_id', 'end_date', 'start_date'])
    op.create_index('ix_usage_records_window', 'usage_records',
                    ['end_date', 'start_date'])
    op.create_index('ix_usage_records_project_class', 'usage_records',
                    ['project_id', 'resource_class', 'end_date',
                     'start_date', 'amount', 'lease_id'])
    op.create_index('ix_usage_records_lease', 'usage_records',
                    ['lease_id'])


def downgrade():
    op.drop_table('usage_records')
