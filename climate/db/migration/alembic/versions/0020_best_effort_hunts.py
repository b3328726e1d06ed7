"""Best-effort leases (lease type ``best_effort``): the hunt for hosts.

``leases`` gains ``hunt`` (JSON, null but for a best_effort lease that
had to free hosts): the evacuation plan, its deadline, the compute
services it disabled and the hosts it borrowed from outside the
inventory (``climate.manager.hunts``).  ``work_locks`` gains
``lease_hunts``, which the managers' hunt workers take in turn.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-26
"""

from alembic import op
import sqlalchemy as sa

revision = '0020'
down_revision = '0019'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('leases', sa.Column('hunt', sa.JSON, nullable=True))
    work_locks = sa.table('work_locks', sa.column('name', sa.String(64)))
    op.bulk_insert(work_locks, [{'name': 'lease_hunts'}])


def downgrade():
    op.execute("DELETE FROM work_locks WHERE name = 'lease_hunts'")
    # not batch_alter_table: see 0019
    op.drop_column('leases', 'hunt')
