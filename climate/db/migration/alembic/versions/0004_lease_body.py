"""Store each lease's listing body (``leases.body``).

A page of ``GET /v1/leases`` reads the bodies instead of rendering 100
leases with their reservations and events on every request
(``climate.db.lease_json``).  Leases already there have none: a listing
renders them until the managers have stored them
(``climate.manager.body_filler``), with the code of whatever release runs
then rather than the body's shape of this revision.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql


revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('leases', sa.Column(
        'body', sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mysql',
                                       'mariadb'),
        nullable=True))


def downgrade():
    op.drop_column('leases', 'body')
