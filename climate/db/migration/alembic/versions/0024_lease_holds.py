"""Temporary holds (microversion 1.14): a lease booked for a few minutes
until it is confirmed.

``leases`` gains ``hold_expires_at``: when a ``HELD`` lease frees what it
booked unless it is confirmed first (``climate.lease.holds``); null for
every other lease.  The index finds the holds due to expire without
reading the other leases.

Every lease's body shows the new field, so the stored listing bodies are
cleared, as 0019 does: the managers store them again in the background
(``climate.manager.body_filler``).

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-03
"""

from alembic import op
import sqlalchemy as sa

revision = '0024'
down_revision = '0023'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('leases', sa.Column('hold_expires_at', sa.DateTime,
                                      nullable=True))
    op.create_index('ix_leases_holds', 'leases',
                    ['status', 'hold_expires_at'])
    op.execute('UPDATE leases SET body = NULL')


def downgrade():
    op.execute('UPDATE leases SET body = NULL')
    op.drop_index('ix_leases_holds', table_name='leases')
    # not batch_alter_table: on SQLite it copies the table, and the
    # copy's drop would cascade to every reservation and event
    op.drop_column('leases', 'hold_expires_at')
