"""Change counters of the inventories, one row per kind of provider.

``inventory_versions`` (``kind`` primary key, ``version``) counts the
changes to an inventory that the plugins' caches read (which pools a
filter matches, and their capacities): every change of that inventory
bumps its kind's row in the same transaction
(``climate.db.inventory_versions``).  Rows are written by the first
bump; a kind without a row reads as version 0.  The compute hosts keep
their own ``computehost_inventory_version`` (0003).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27
"""

from alembic import op
import sqlalchemy as sa

revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'inventory_versions',
        sa.Column('kind', sa.String(64), primary_key=True,
                  autoincrement=False),
        sa.Column('version', sa.BigInteger, nullable=False),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')


def downgrade():
    op.drop_table('inventory_versions')
