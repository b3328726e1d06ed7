"""What each host draws idle, as its power switch measured it.

``host_power`` gains ``idle_watts`` and ``watts_at``: the reading the
power planner (``climate.manager.workers.power``) takes of a free host
just before powering it off, and when.  The energy figures count it for
the host instead of ``[power] idle_watts``.  Both null until a switch
that measures power (Redfish) has been read.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-03
"""

from alembic import op
import sqlalchemy as sa

revision = '0023'
down_revision = '0022'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('host_power',
                  sa.Column('idle_watts', sa.Float, nullable=True))
    op.add_column('host_power',
                  sa.Column('watts_at', sa.DateTime, nullable=True))


def downgrade():
    # batch: SQLite cannot drop a column in place
    with op.batch_alter_table('host_power') as batch:
        batch.drop_column('watts_at')
        batch.drop_column('idle_watts')
