"""Per-project limits on leases.

``project_quotas``: a project's own limits (``/v1/quotas``, microversion
1.9); a null column takes the configured default, -1 is no limit.  The
row is also the lock that serializes the quota checks of the project's
creates and updates.

``ledger_bookings.project_id``: the booking's lease's project, filled
from the leases, and an index by project, class and window that the
quota checks read (covering) instead of each of the project's leases.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26
"""

from alembic import op
import sqlalchemy as sa

revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'project_quotas',
        sa.Column('project_id', sa.String(255), primary_key=True),
        sa.Column('max_lease_duration', sa.BigInteger, nullable=True),
        sa.Column('max_extension', sa.BigInteger, nullable=True),
        sa.Column('max_concurrent', sa.JSON, nullable=True),
        sa.Column('budget', sa.JSON, nullable=True),
        sa.Column('budget_period', sa.String(16), nullable=True),
        sa.Column('created_at', sa.DateTime, nullable=False),
        sa.Column('updated_at', sa.DateTime, nullable=True),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.add_column('ledger_bookings',
                  sa.Column('project_id', sa.String(255), nullable=True))
    op.execute('UPDATE ledger_bookings SET project_id = (SELECT '
               'leases.project_id FROM leases WHERE leases.id = '
               'ledger_bookings.lease_id)')
    op.create_index('ix_ledger_bookings_project', 'ledger_bookings',
                    ['project_id', 'resource_class', 'start_date',
                     'end_date', 'amount', 'lease_id'])


def downgrade():
    op.drop_index('ix_ledger_bookings_project', table_name='ledger_bookings')
    with op.batch_alter_table('ledger_bookings') as batch:
        batch.drop_column('project_id')
    op.drop_table('project_quotas')
