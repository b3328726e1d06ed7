"""Managers' liveness heartbeats (``managers``).

Each manager stamps its row with the database's clock every ``[manager]
heartbeat_interval`` seconds; the claims of a manager whose row is older
than ``heartbeat_timeout`` are released at once (``climate.db.managers``)
rather than when they expire.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql


revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def _time():
    return sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')


def upgrade():
    op.create_table(
        'managers',
        sa.Column('name', sa.String(255), primary_key=True),
        sa.Column('host', sa.String(255), nullable=True),
        sa.Column('pid', sa.Integer, nullable=True),
        sa.Column('started_at', _time(), nullable=False),
        sa.Column('heartbeat_at', _time(), nullable=False),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_managers_heartbeat_at', 'managers',
                    ['heartbeat_at'])
    op.create_index('ix_events_status_claimed_by', 'events',
                    ['status', 'claimed_by'])


def downgrade():
    op.drop_index('ix_events_status_claimed_by', table_name='events')
    op.drop_table('managers')
