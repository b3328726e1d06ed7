"""The operator's rate table.

``billing_rates``: one row (id 1), the rate table as ``PUT
/v1/billing/rates`` (microversion 1.10) checked it.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-26
"""

from alembic import op
import sqlalchemy as sa

revision = '0018'
down_revision = '0017'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'billing_rates',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=False),
        sa.Column('rates', sa.JSON, nullable=False),
        sa.Column('updated_at', sa.DateTime, nullable=False),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')


def downgrade():
    op.drop_table('billing_rates')
