"""Webhooks a project registers, and the log of their deliveries.

``webhooks``: a project's endpoint (``url``), the ``secret`` its bodies
are signed with (HMAC-SHA256) and an optional ``event_types`` filter
(JSON list; null: every event type that is delivered).

``webhook_deliveries``: one row per webhook and event run (the unique key
``(webhook_id, event_id)``: written in the very transaction that marks the
event DONE, so it is recorded exactly once whatever the managers do), with
the body sent on every attempt, its status (``pending``, ``delivered``,
``failed``), the attempts made and the next one's time, the last answer
and the claim of the manager delivering it.  No foreign key to the lease
or the event: the log outlives them.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '0015'
down_revision = '0014'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'webhooks',
        sa.Column('id', sa.String(36), primary_key=True),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('url', sa.String(2048), nullable=False),
        sa.Column('secret', sa.String(255), nullable=False),
        sa.Column('event_types', sa.JSON, nullable=True),
        sa.Column('created_at', sa.DateTime, nullable=False),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_webhooks_project', 'webhooks',
                    ['project_id', 'created_at'])
    op.create_table(
        'webhook_deliveries',
        sa.Column('id', sa.String(36), primary_key=True),
        sa.Column('webhook_id', sa.String(36),
                  sa.ForeignKey('webhooks.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('lease_id', sa.String(36), nullable=False),
        sa.Column('event_id', sa.String(36), nullable=False),
        sa.Column('event_type', sa.String(66), nullable=False),
        sa.Column('body', sa.Text().with_variant(mysql.MEDIUMTEXT(),
                                                 'mysql', 'mariadb'),
                  nullable=False),
        sa.Column('status', sa.String(16), nullable=False),
        sa.Column('attempts', sa.Integer, nullable=False),
        sa.Column('next_attempt_at', sa.DateTime, nullable=False),
        sa.Column('last_status_code', sa.Integer, nullable=True),
        sa.Column('last_error', sa.Text, nullable=True),
        sa.Column('claimed_by', sa.String(255), nullable=True),
        sa.Column('claim_token', sa.String(36), nullable=True),
        sa.Column('created_at', sa.DateTime, nullable=False),
        sa.Column('delivered_at', sa.DateTime, nullable=True),
        sa.UniqueConstraint('webhook_id', 'event_id',
                            name='uniq_webhook_deliveries0webhook0event'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_webhook_deliveries_status_next',
                    'webhook_deliveries', ['status', 'next_attempt_at'])


def downgrade():
    op.drop_table('webhook_deliveries')
    op.drop_table('webhooks')
