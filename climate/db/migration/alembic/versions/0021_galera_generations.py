"""Writes that make concurrent writers conflict on any database, a
multi-writer Galera cluster included.

``ledger_inventories`` and ``project_quotas`` gain ``generation``, which
every booking of a provider (every quota check of a project) bumps in
its transaction: two of them on different Galera nodes write the same
row, so certification fails one, where a ``SELECT ... FOR UPDATE`` is
local to its node.  ``work_locks`` gains ``holder`` and ``held_until``:
a work lock is a committed claim with an expiry, not a row lock held by
a connection (``climate.db.work_locks``).

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-28
"""

from alembic import op
import sqlalchemy as sa

revision = '0021'
down_revision = '0020'
branch_labels = None
depends_on = None


def upgrade():
    for table in ('ledger_inventories', 'project_quotas'):
        op.add_column(table, sa.Column('generation', sa.BigInteger,
                                       nullable=False, server_default='0'))
    op.add_column('work_locks', sa.Column('holder', sa.String(255),
                                          nullable=True))
    op.add_column('work_locks', sa.Column('held_until', sa.DateTime,
                                          nullable=True))


def downgrade():
    # not batch_alter_table: see 0019
    op.drop_column('work_locks', 'held_until')
    op.drop_column('work_locks', 'holder')
    for table in ('project_quotas', 'ledger_inventories'):
        op.drop_column(table, 'generation')
