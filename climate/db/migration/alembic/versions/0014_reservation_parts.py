"""A reservation that holds part of another's needs names it.

``reservations.part_of`` (nullable, indexed): the id of the reservation
whose needs this one holds (a ``virtual:stack`` reservation's servers,
volumes and floating IPs), in the same lease; null for every other
reservation.  A column rather than a plugin parameter: the plugins
rewrite their own parameters, and the link is the lease's, not theirs.

Every reservation's body shows it (``stack_reservation_id``), so the
stored listing bodies of leases are cleared, as 0008 does: the managers
store them again in the background (``climate.manager.body_filler``).

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-26
"""

from alembic import op
import sqlalchemy as sa

revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('reservations',
                  sa.Column('part_of', sa.String(36), nullable=True))
    op.create_index('ix_reservations_part_of', 'reservations', ['part_of'])
    op.execute('UPDATE leases SET body = NULL')


def downgrade():
    op.execute('UPDATE leases SET body = NULL')
    op.drop_index('ix_reservations_part_of', table_name='reservations')
    with op.batch_alter_table('reservations') as batch:
        batch.drop_column('part_of')
