"""Index events by status, type and due time, for the claim by event type.

The engine claims due events one type at a time (ends, then starts, then
before-end notices; ``db.api.events_claim``): each query walks this index
in due order and locks only the rows it takes.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from alembic import op

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade():
    op.create_index('ix_events_status_type_due', 'events',
                    ['status', 'event_type', 'due_at'])


def downgrade():
    op.drop_index('ix_events_status_type_due', table_name='events')
