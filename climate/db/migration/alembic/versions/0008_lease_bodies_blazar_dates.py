"""Forget the stored listing bodies of leases (``leases.body``).

Listings now print ``created_at`` and ``updated_at`` of leases,
reservations and events as Blazar prints them (``YYYY-MM-DD HH:MM:SS``)
and show users' own events; bodies stored by an earlier release have the
old shape.  A lease without a body is rendered when listed, and the
managers store its body again in the background
(``climate.manager.body_filler``), so clearing them is all an upgrade
needs, whatever shape a later release gives the body.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25
"""

from alembic import op


revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade():
    op.execute('UPDATE leases SET body = NULL')


def downgrade():
    # the older release renders and stores the bodies it lacks itself
    op.execute('UPDATE leases SET body = NULL')
