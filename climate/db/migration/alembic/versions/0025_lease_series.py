"""Recurring leases (microversion 1.15): a series and its occurrences.

``lease_series`` holds a series' rule, the body each occurrence is made
from and how far it has been booked (``climate.manager.series``);
``leases`` gains ``series_id`` and ``occurrence`` (null for leases of no
series), unique together so that an occurrence is made once whichever
manager makes it.

Every lease's body shows the new fields, so the stored listing bodies
are cleared, as 0024 does: the managers store them again in the
background (``climate.manager.body_filler``).

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-03
"""

from alembic import op
import sqlalchemy as sa

revision = '0025'
down_revision = '0024'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'lease_series',
        sa.Column('id', sa.String(36), primary_key=True),
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('user_id', sa.String(255), nullable=True),
        sa.Column('trust_id', sa.String(255), nullable=True),
        sa.Column('rrule', sa.String(255), nullable=False),
        sa.Column('timezone', sa.String(64), nullable=False),
        sa.Column('on_conflict', sa.String(8), nullable=False),
        sa.Column('first_index', sa.Integer, nullable=False),
        sa.Column('first_start', sa.DateTime, nullable=False),
        sa.Column('first_end', sa.DateTime, nullable=False),
        sa.Column('template', sa.JSON, nullable=False),
        sa.Column('next_index', sa.Integer, nullable=False),
        sa.Column('next_start', sa.DateTime, nullable=True),
        sa.Column('status', sa.String(16), nullable=False),
        sa.Column('status_reason', sa.Text, nullable=True),
        sa.Column('skipped', sa.JSON, nullable=False),
        sa.Column('generation', sa.Integer, nullable=False),
        sa.Column('created_at', sa.DateTime, nullable=False),
        sa.Column('updated_at', sa.DateTime, nullable=True),
        sa.UniqueConstraint('project_id', 'name',
                            name='uniq_lease_series0project_id0name'),
    )
    op.create_index('ix_lease_series_project', 'lease_series',
                    ['project_id', 'created_at'])
    op.create_index('ix_lease_series_next', 'lease_series',
                    ['status', 'next_start'])
    op.add_column('leases', sa.Column('series_id', sa.String(36),
                                      nullable=True))
    op.add_column('leases', sa.Column('occurrence', sa.Integer,
                                      nullable=True))
    # an index, not a constraint: SQLite adds no constraint to a table
    op.create_index('uniq_leases0series_id0occurrence', 'leases',
                    ['series_id', 'occurrence'], unique=True)
    op.execute('UPDATE leases SET body = NULL')


def downgrade():
    op.execute('UPDATE leases SET body = NULL')
    op.drop_index('uniq_leases0series_id0occurrence', table_name='leases')
    # not batch_alter_table: on SQLite it copies the table, and the
    # copy's drop would cascade to every reservation and event
    op.drop_column('leases', 'occurrence')
    op.drop_column('leases', 'series_id')
    op.drop_table('lease_series')
