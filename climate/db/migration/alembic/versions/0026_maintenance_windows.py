"""Maintenance windows (microversion 1.16): an operator takes hosts out
for a window (``climate.manager.maintenance``).

``maintenance_windows`` holds each window: its hosts, its dates, the
lease of the operator's project that books them, and what it did to the
leases it hit.

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-03
"""

from alembic import op
import sqlalchemy as sa

revision = '0026'
down_revision = '0025'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'maintenance_windows',
        sa.Column('id', sa.String(36), primary_key=True),
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('reason', sa.Text, nullable=True),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('user_id', sa.String(255), nullable=True),
        sa.Column('start_date', sa.DateTime, nullable=False),
        sa.Column('end_date', sa.DateTime, nullable=False),
        sa.Column('hosts', sa.JSON, nullable=False),
        sa.Column('lease_id', sa.String(36), nullable=True),
        sa.Column('affected', sa.JSON, nullable=False),
        sa.Column('status', sa.String(16), nullable=False),
        sa.Column('created_at', sa.DateTime, nullable=False),
        sa.Column('updated_at', sa.DateTime, nullable=True),
        sa.UniqueConstraint('name', name='uniq_maintenance_windows0name'),
    )
    op.create_index('ix_maintenance_windows_start', 'maintenance_windows',
                    ['start_date'])


def downgrade():
    op.drop_table('maintenance_windows')
