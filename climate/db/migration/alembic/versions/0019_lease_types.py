"""Lease types (microversion 1.11): a lease's promise, and its retries.

``leases`` gains:

* ``lease_type``: ``immediate``, ``with_retries``, ``best_effort`` or
  ``scheduled``; null for a lease created without one (every lease made
  before, and every 1.0 to 1.10 client's), which keeps Climate's first
  behaviour;
* ``max_retries``, ``retry_attempts``, ``next_attempt_at``: a
  ``with_retries`` lease's budget of attempts, those made, and when the
  next is due while it waits (``WAITING``);
* ``duration``: the seconds a ``with_retries`` lease asked for, kept
  while it waits (its dates are set when it is granted);
* ``arrival``: when a ``with_retries`` create arrived, in microseconds
  since the epoch (``created_at`` has seconds only): the waiting leases'
  order.

``work_locks``: named rows a manager locks to do a job alone; its first
row, ``lease_retries``, orders the passes over the waiting leases.

Every lease's body shows the new fields, so the stored listing bodies
are cleared, as 0008 does: the managers store them again in the
background (``climate.manager.body_filler``).

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-26
"""

from alembic import op
import sqlalchemy as sa

revision = '0019'
down_revision = '0018'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('leases', sa.Column('lease_type', sa.String(16),
                                      nullable=True))
    op.add_column('leases', sa.Column('max_retries', sa.Integer,
                                      nullable=True))
    op.add_column('leases', sa.Column('retry_attempts', sa.Integer,
                                      nullable=True))
    op.add_column('leases', sa.Column('next_attempt_at', sa.DateTime,
                                      nullable=True))
    op.add_column('leases', sa.Column('duration', sa.BigInteger,
                                      nullable=True))
    op.add_column('leases', sa.Column('arrival', sa.BigInteger,
                                      nullable=True))
    # the waiting leases, oldest first, without reading the others
    op.create_index('ix_leases_waiting', 'leases',
                    ['status', 'arrival', 'id'])
    work_locks = op.create_table(
        'work_locks',
        sa.Column('name', sa.String(64), primary_key=True),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.bulk_insert(work_locks, [{'name': 'lease_retries'}])
    op.execute('UPDATE leases SET body = NULL')


def downgrade():
    op.execute('UPDATE leases SET body = NULL')
    op.drop_table('work_locks')
    op.drop_index('ix_leases_waiting', table_name='leases')
    # not batch_alter_table: on SQLite it copies the table, and the
    # copy's drop would cascade to every reservation and event
    for column in ('arrival', 'duration', 'next_attempt_at',
                   'retry_attempts',
                   'max_retries', 'lease_type'):
        op.drop_column('leases', column)
