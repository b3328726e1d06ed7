"""Store each lease's listing body (``leases.body``).

A page of ``GET /v1/leases`` reads the bodies instead of rendering 100
leases with their reservations and events on every request
(``climate.db.lease_json``).  Existing leases get theirs here.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

from climate.db import lease_json

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('leases', sa.Column(
        'body', sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mysql',
                                       'mariadb'),
        nullable=True))
    lease_json.render_missing(op.get_bind())


def downgrade():
    op.drop_column('leases', 'body')
