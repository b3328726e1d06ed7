"""The power planner's record of the hosts it powers off and wakes.

``host_power``: one row per host whose power Climate manages, its state
as last read or acted on (``on``, ``off``, ``waking``, ``unknown``),
since when, its measured boot time, the booking a wake under way is for
and the last error of its power backend.  ``host_power_history``: the
intervals each host spent in each state, for the energy figures.
``work_locks`` gains ``host_power``: one manager at a time acts on the
hosts' power (``climate.manager.workers.power``).

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-02
"""

from alembic import op
import sqlalchemy as sa

revision = '0022'
down_revision = '0021'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'host_power',
        sa.Column('host_id', sa.Integer,
                  sa.ForeignKey('computehosts.id', ondelete='CASCADE'),
                  primary_key=True, autoincrement=False),
        sa.Column('state', sa.String(16), nullable=False),
        sa.Column('since', sa.DateTime, nullable=False),
        sa.Column('boot_seconds', sa.Integer, nullable=True),
        sa.Column('need_at', sa.DateTime, nullable=True),
        sa.Column('last_error', sa.Text, nullable=True),
        sa.Column('error_at', sa.DateTime, nullable=True),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_table(
        'host_power_history',
        sa.Column('id', sa.BigInteger().with_variant(sa.Integer, 'sqlite'),
                  primary_key=True, autoincrement=True),
        sa.Column('host_id', sa.Integer, nullable=False),
        sa.Column('state', sa.String(16), nullable=False),
        sa.Column('started_at', sa.DateTime, nullable=False),
        sa.Column('ended_at', sa.DateTime, nullable=True),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_host_power_history_host', 'host_power_history',
                    ['host_id', 'started_at'])
    op.create_index('ix_host_power_history_window', 'host_power_history',
                    ['ended_at', 'started_at'])
    work_locks = sa.table('work_locks', sa.column('name', sa.String(64)))
    op.bulk_insert(work_locks, [{'name': 'host_power'}])


def downgrade():
    op.execute("DELETE FROM work_locks WHERE name = 'host_power'")
    op.drop_table('host_power_history')
    op.drop_table('host_power')
