"""physical:host: hosts, their properties and their allocations.

``computehost_allocations`` carries each allocation's window (copied from
the lease) with indexes for the per-host overlap test and for range scans
of the availability search.  ``computehost_inventory_version`` (one row)
counts inventory changes, so that managers may cache which hosts a filter
matches.  The generic ``allocations`` table of 0001 is
left for other resource types; hosts do not use it.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.dialects import postgresql

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


# byte-wise comparison on every engine (see climate.db.models)
def _binary_string():
    return sa.String(255).with_variant(
        mysql.VARCHAR(255, collation='utf8mb4_bin'), 'mysql', 'mariadb'
    ).with_variant(postgresql.VARCHAR(255, collation='C'), 'postgresql')


def _binary_text():
    return sa.Text().with_variant(
        mysql.TEXT(collation='utf8mb4_bin'), 'mysql', 'mariadb'
    ).with_variant(postgresql.TEXT(collation='C'), 'postgresql')


def _timestamps():
    return [sa.Column('created_at', sa.DateTime, nullable=False),
            sa.Column('updated_at', sa.DateTime, nullable=True)]


def upgrade():
    op.create_table(
        'computehosts',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('hypervisor_hostname', _binary_string(), nullable=False),
        sa.Column('service_name', _binary_string(), nullable=False),
        sa.Column('vcpus', sa.Integer, nullable=False),
        sa.Column('memory_mb', sa.Integer, nullable=False),
        sa.Column('local_gb', sa.Integer, nullable=False),
        sa.Column('cpu_info', _binary_text(), nullable=True),
        sa.Column('hypervisor_type', _binary_string(), nullable=True),
        sa.Column('hypervisor_version', sa.BigInteger, nullable=True),
        sa.Column('trust_id', sa.String(255), nullable=True),
        sa.Column('reservable', sa.Boolean, nullable=False),
        sa.Column('disabled', sa.Boolean, nullable=False),
        *_timestamps(),
        sa.UniqueConstraint('hypervisor_hostname',
                            name='uniq_computehosts0hypervisor_hostname'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')

    op.create_table(
        'resource_properties',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('resource_type', sa.String(66), nullable=False),
        sa.Column('property_name', sa.String(255), nullable=False),
        sa.Column('private', sa.Boolean, nullable=False),
        *_timestamps(),
        sa.UniqueConstraint('resource_type', 'property_name',
                            name='uniq_resource_properties0type0name'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')

    op.create_table(
        'computehost_extra_capabilities',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('computehost_id', sa.Integer,
                  sa.ForeignKey('computehosts.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('property_id', sa.Integer,
                  sa.ForeignKey('resource_properties.id'), nullable=False),
        sa.Column('capability_value', _binary_string(), nullable=False),
        sa.Column('num_value', sa.Float, nullable=True),
        sa.UniqueConstraint('computehost_id', 'property_id',
                            name='uniq_host_capabilities0host0property'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_host_capabilities_property_value',
                    'computehost_extra_capabilities',
                    ['property_id', 'capability_value', 'computehost_id'])
    op.create_index('ix_host_capabilities_property_num',
                    'computehost_extra_capabilities',
                    ['property_id', 'num_value', 'computehost_id'])

    op.create_table(
        'computehost_allocations',
        sa.Column('id', sa.String(36), primary_key=True),
        sa.Column('reservation_id', sa.String(36),
                  sa.ForeignKey('reservations.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('lease_id', sa.String(36), nullable=False),
        sa.Column('computehost_id', sa.Integer,
                  sa.ForeignKey('computehosts.id'), nullable=False),
        sa.Column('start_date', sa.DateTime, nullable=False),
        sa.Column('end_date', sa.DateTime, nullable=False),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_computehost_allocations_reservation_id',
                    'computehost_allocations', ['reservation_id'])
    op.create_index('ix_computehost_allocations_lease_id',
                    'computehost_allocations', ['lease_id'])
    op.create_index('ix_host_allocations_host_start',
                    'computehost_allocations',
                    ['computehost_id', 'start_date', 'end_date'])
    op.create_index('ix_host_allocations_host_end',
                    'computehost_allocations',
                    ['computehost_id', 'end_date', 'start_date'])
    op.create_index('ix_host_allocations_window', 'computehost_allocations',
                    ['end_date', 'start_date', 'computehost_id'])
    op.create_index('ix_host_allocations_start', 'computehost_allocations',
                    ['start_date', 'end_date', 'computehost_id'])

    version = op.create_table(
        'computehost_inventory_version',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=False),
        sa.Column('version', sa.BigInteger, nullable=False),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.bulk_insert(version, [{'id': 1, 'version': 0}])


def downgrade():
    for table in ('computehost_inventory_version', 'computehost_allocations',
                  'computehost_extra_capabilities', 'resource_properties',
                  'computehosts'):
        op.drop_table(table)
