"""Idempotency-Keys of lease creates (``idempotency_keys``).

A client that lost the answer to ``POST /v1/leases`` (an outage of the
message bus...) retries with the same ``Idempotency-Key`` header and gets
the lease its first request made (``climate.db.idempotency``).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25
"""

from alembic import op
import sqlalchemy as sa


revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'idempotency_keys',
        sa.Column('project_id', sa.String(255), primary_key=True),
        sa.Column('idempotency_key', sa.String(255), primary_key=True),
        sa.Column('request_hash', sa.String(64), nullable=False),
        sa.Column('lease_id', sa.String(36), nullable=False),
        sa.Column('created_at', sa.DateTime, nullable=False),
        sa.Column('expires_at', sa.DateTime, nullable=False),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_idempotency_keys_expires', 'idempotency_keys',
                    ['expires_at'])


def downgrade():
    op.drop_index('ix_idempotency_keys_expires', 'idempotency_keys')
    op.drop_table('idempotency_keys')
