"""Idle reclaim (microversion 1.17): leases nothing uses are warned,
then ended early (``climate.manager.idle``).

``idle_policies`` holds each project's policy; ``leases`` gains
``keep_idle`` (a lease that asked never to be reclaimed),
``last_used_at``, ``idle_warned_at`` and ``idle_ended_at``.  Every lease's body shows them,
so the stored listing bodies are cleared, as 0024 does.

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-03
"""

from alembic import op
import sqlalchemy as sa

revision = '0027'
down_revision = '0026'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'idle_policies',
        sa.Column('project_id', sa.String(255), primary_key=True),
        sa.Column('resource_types', sa.JSON, nullable=True),
        sa.Column('warn_after', sa.Integer, nullable=False),
        sa.Column('end_after', sa.Integer, nullable=False),
        sa.Column('created_at', sa.DateTime, nullable=False),
        sa.Column('updated_at', sa.DateTime, nullable=True),
    )
    op.add_column('leases', sa.Column('keep_idle', sa.Boolean,
                                      nullable=False,
                                      server_default=sa.false()))
    op.add_column('leases', sa.Column('last_used_at', sa.DateTime,
                                      nullable=True))
    op.add_column('leases', sa.Column('idle_warned_at', sa.DateTime,
                                      nullable=True))
    op.add_column('leases', sa.Column('idle_ended_at', sa.DateTime,
                                      nullable=True))
    op.execute('UPDATE leases SET body = NULL')


def downgrade():
    op.execute('UPDATE leases SET body = NULL')
    # not batch_alter_table: on SQLite it copies the table, and the
    # copy's drop would cascade to every reservation and event
    op.drop_column('leases', 'idle_ended_at')
    op.drop_column('leases', 'idle_warned_at')
    op.drop_column('leases', 'last_used_at')
    op.drop_column('leases', 'keep_idle')
    op.drop_table('idle_policies')
