"""Leases, reservations, events, allocations and the noop plugin's log.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from alembic import op
import sqlalchemy as sa

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def _timestamps():
    return [sa.Column('created_at', sa.DateTime, nullable=False),
            sa.Column('updated_at', sa.DateTime, nullable=True)]


def upgrade():
    op.create_table(
        'leases',
        sa.Column('id', sa.String(36), primary_key=True),
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('user_id', sa.String(255), nullable=True),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('trust_id', sa.String(255), nullable=True),
        sa.Column('start_date', sa.DateTime, nullable=False),
        sa.Column('end_date', sa.DateTime, nullable=False),
        sa.Column('status', sa.String(32), nullable=False),
        sa.Column('status_reason', sa.Text, nullable=True),
        sa.Column('degraded', sa.Boolean, nullable=False),
        *_timestamps(),
        sa.UniqueConstraint('project_id', 'name',
                            name='uniq_leases0project_id0name'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_leases_project_created', 'leases',
                    ['project_id', 'created_at', 'id'])
    op.create_index('ix_leases_created', 'leases', ['created_at', 'id'])
    op.create_index('ix_leases_status', 'leases', ['status'])

    op.create_table(
        'reservations',
        sa.Column('id', sa.String(36), primary_key=True),
        sa.Column('lease_id', sa.String(36),
                  sa.ForeignKey('leases.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('resource_type', sa.String(66), nullable=False),
        sa.Column('resource_id', sa.String(255), nullable=True),
        sa.Column('status', sa.String(32), nullable=False),
        sa.Column('params', sa.JSON, nullable=False),
        sa.Column('missing_resources', sa.Boolean, nullable=False),
        sa.Column('resources_changed', sa.Boolean, nullable=False),
        *_timestamps(),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_reservations_lease_id', 'reservations', ['lease_id'])

    op.create_table(
        'events',
        sa.Column('id', sa.String(36), primary_key=True),
        sa.Column('lease_id', sa.String(36),
                  sa.ForeignKey('leases.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('event_type', sa.String(66), nullable=False),
        sa.Column('time', sa.DateTime, nullable=False),
        sa.Column('due_at', sa.DateTime, nullable=False),
        sa.Column('status', sa.String(32), nullable=False),
        sa.Column('attempts', sa.Integer, nullable=False),
        sa.Column('claimed_by', sa.String(255), nullable=True),
        sa.Column('claim_token', sa.String(36), nullable=True),
        sa.Column('last_error', sa.Text, nullable=True),
        *_timestamps(),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_events_status_due', 'events', ['status', 'due_at'])
    op.create_index('ix_events_lease_id', 'events', ['lease_id'])

    op.create_table(
        'allocations',
        sa.Column('id', sa.String(36), primary_key=True),
        sa.Column('reservation_id', sa.String(36),
                  sa.ForeignKey('reservations.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('resource_type', sa.String(66), nullable=False),
        sa.Column('resource_id', sa.String(255), nullable=False),
        sa.Column('start_date', sa.DateTime, nullable=False),
        sa.Column('end_date', sa.DateTime, nullable=False),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_allocations_resource_window', 'allocations',
                    ['resource_type', 'resource_id', 'start_date',
                     'end_date'])
    op.create_index('ix_allocations_reservation_id', 'allocations',
                    ['reservation_id'])

    op.create_table(
        'noop_actions',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('action', sa.String(32), nullable=False),
        sa.Column('lease_id', sa.String(36), nullable=False),
        sa.Column('reservation_id', sa.String(36), nullable=False),
        sa.Column('event_id', sa.String(36), nullable=True),
        sa.Column('manager', sa.String(255), nullable=True),
        sa.Column('created_at', sa.DateTime, nullable=False),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_noop_actions_lease_id', 'noop_actions', ['lease_id'])


def downgrade():
    for table in ('noop_actions', 'allocations', 'events', 'reservations',
                  'leases'):
        op.drop_table(table)
