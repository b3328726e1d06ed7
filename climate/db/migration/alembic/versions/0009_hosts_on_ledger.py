"""physical:host books in the capacity ledger.

Every compute host becomes a ledger provider (``provider_id`` its id as
text, kind ``compute_host``) with a ``HOST`` inventory of 1 and, where
its facts are above 0, ``VCPU``, ``MEMORY_MB`` and ``DISK_GB``
inventories of its ``vcpus``, ``memory_mb`` and ``local_gb`` (allocation
ratio 1.0 unless the host stores one: the three ``*_allocation_ratio``
columns this migration adds, null until a registration sets them).
Every row of ``computehost_allocations`` becomes the bookings of a host
taken whole -- ``HOST = 1`` plus the host's usable ``VCPU``,
``MEMORY_MB``, ``DISK_GB`` -- with the same reservation, lease and
window (the ``HOST`` booking keeps the allocation's id), and the table
goes.  Each step is one ``INSERT ... SELECT``, whatever the number of
rows.  Two indexes on the bookings serve the host searches as the
allocations' did: ``(provider_id, start_date, end_date)`` and
``(end_date, start_date, provider_id)``.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25
"""

from alembic import op
import sqlalchemy as sa

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None

KIND = 'compute_host'
#: (resource class, fact column, ratio column) of a compute host.
CLASSES = (('VCPU', 'vcpus', 'cpu_allocation_ratio'),
           ('MEMORY_MB', 'memory_mb', 'ram_allocation_ratio'),
           ('DISK_GB', 'local_gb', 'disk_allocation_ratio'))
RATIOS = [ratio for _cls, _fact, ratio in CLASSES]

hosts = sa.table('computehosts', sa.column('id', sa.Integer),
                 sa.column('vcpus', sa.Integer),
                 sa.column('memory_mb', sa.Integer),
                 sa.column('local_gb', sa.Integer),
                 *[sa.column(r, sa.Float) for r in RATIOS])
allocs = sa.table('computehost_allocations', sa.column('id', sa.String),
                  sa.column('reservation_id', sa.String),
                  sa.column('lease_id', sa.String),
                  sa.column('computehost_id', sa.Integer),
                  sa.column('start_date', sa.DateTime),
                  sa.column('end_date', sa.DateTime))
inventories = sa.table(
    'ledger_inventories', sa.column('provider_id', sa.String),
    sa.column('provider_kind', sa.String),
    sa.column('resource_class', sa.String),
    sa.column('total', sa.BigInteger), sa.column('reserved', sa.BigInteger),
    sa.column('allocation_ratio', sa.Float),
    sa.column('min_unit', sa.BigInteger), sa.column('max_unit', sa.BigInteger),
    sa.column('step_size', sa.BigInteger),
    sa.column('created_at', sa.DateTime))
bookings = sa.table(
    'ledger_bookings', sa.column('id', sa.String),
    sa.column('reservation_id', sa.String), sa.column('lease_id', sa.String),
    sa.column('provider_id', sa.String),
    sa.column('resource_class', sa.String),
    sa.column('amount', sa.BigInteger), sa.column('start_date', sa.DateTime),
    sa.column('end_date', sa.DateTime), sa.column('span_level', sa.Integer))


def _dialect():
    return op.get_bind().dialect.name


def _new_id():
    """A fresh random id per row, in SQL."""
    name = _dialect()
    if name == 'postgresql':
        return sa.cast(sa.func.gen_random_uuid(), sa.String)
    if name in ('mysql', 'mariadb'):
        return sa.func.uuid()
    return sa.func.lower(sa.func.hex(sa.func.randomblob(16)))


def _seconds(start, end):
    """Whole seconds from ``start`` to ``end``, in SQL."""
    name = _dialect()
    if name == 'postgresql':
        return sa.cast(sa.func.floor(sa.extract('epoch', end - start)),
                       sa.BigInteger)
    if name in ('mysql', 'mariadb'):
        return sa.func.timestampdiff(sa.literal_column('SECOND'), start, end)
    return sa.cast(sa.func.strftime('%s', end), sa.Integer) - sa.cast(
        sa.func.strftime('%s', start), sa.Integer)


def _span_level(start, end):
    """``climate.db.ledger.windows.span_level`` in SQL: the bit length of the
    window's length in seconds."""
    seconds = _seconds(start, end)
    return sa.case(*[(seconds < 2 ** level, level) for level in range(63)],
                   else_=63)


def _usable(fact, ratio):
    """Placement's usable capacity, ``int(total * ratio)`` (nothing
    reserved), as a whole number."""
    return sa.cast(sa.func.floor(
        fact * sa.func.coalesce(ratio, 1.0)), sa.BigInteger)


def _provider(host_id):
    return sa.cast(host_id, sa.String(255))


def upgrade():
    for ratio in RATIOS:
        op.add_column('computehosts',
                      sa.Column(ratio, sa.Float, nullable=True))
    now = sa.func.current_timestamp()
    columns = ['provider_id', 'provider_kind', 'resource_class', 'total',
               'reserved', 'allocation_ratio', 'min_unit', 'max_unit',
               'step_size', 'created_at']
    op.execute(inventories.insert().from_select(columns, sa.select(
        _provider(hosts.c.id), sa.literal(KIND), sa.literal('HOST'),
        sa.literal(1), sa.literal(0), sa.literal(1.0), sa.literal(1),
        sa.literal(1), sa.literal(1), now)))
    for cls, fact, ratio in CLASSES:
        total = hosts.c[fact]
        op.execute(inventories.insert().from_select(columns, sa.select(
            _provider(hosts.c.id), sa.literal(KIND), sa.literal(cls), total,
            sa.literal(0), sa.func.coalesce(hosts.c[ratio], 1.0),
            sa.literal(1), total, sa.literal(1), now).where(total > 0)))

    columns = ['id', 'reservation_id', 'lease_id', 'provider_id',
               'resource_class', 'amount', 'start_date', 'end_date',
               'span_level']
    level = _span_level(allocs.c.start_date, allocs.c.end_date)
    op.execute(bookings.insert().from_select(columns, sa.select(
        allocs.c.id, allocs.c.reservation_id, allocs.c.lease_id,
        _provider(allocs.c.computehost_id), sa.literal('HOST'),
        sa.literal(1), allocs.c.start_date, allocs.c.end_date, level)))
    for cls, fact, ratio in CLASSES:
        usable = _usable(hosts.c[fact], hosts.c[ratio])
        op.execute(bookings.insert().from_select(columns, sa.select(
            _new_id(), allocs.c.reservation_id, allocs.c.lease_id,
            _provider(allocs.c.computehost_id), sa.literal(cls), usable,
            allocs.c.start_date, allocs.c.end_date, level).select_from(
            allocs.join(hosts, hosts.c.id == allocs.c.computehost_id)).where(
            hosts.c[fact] > 0, usable > 0)))
    op.drop_table('computehost_allocations')
    # what the host searches read (climate.db.hosts), as the allocations'
    # indexes did: a host's bookings of any class from a time on, and the
    # bookings ending within a stretch of time
    op.create_index('ix_ledger_bookings_provider_start', 'ledger_bookings',
                    ['provider_id', 'start_date', 'end_date'])
    op.create_index('ix_ledger_bookings_end', 'ledger_bookings',
                    ['end_date', 'start_date', 'provider_id'])


def downgrade():
    op.drop_index('ix_ledger_bookings_end', 'ledger_bookings')
    op.drop_index('ix_ledger_bookings_provider_start', 'ledger_bookings')
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
    # the hosts' whole bookings go back; the older release knows no other
    # use of a compute host's capacity, so the rest of its ledger goes
    computehost = sa.cast(bookings.c.provider_id, sa.Integer)
    op.execute(allocs.insert().from_select(
        ['id', 'reservation_id', 'lease_id', 'computehost_id', 'start_date',
         'end_date'],
        sa.select(bookings.c.id, bookings.c.reservation_id,
                  bookings.c.lease_id, computehost, bookings.c.start_date,
                  bookings.c.end_date).where(
            bookings.c.resource_class == 'HOST',
            bookings.c.provider_id.in_(sa.select(
                inventories.c.provider_id).where(
                inventories.c.provider_kind == KIND,
                inventories.c.resource_class == 'HOST')),
            computehost.in_(sa.select(hosts.c.id)))))
    op.execute(bookings.delete().where(bookings.c.provider_id.in_(
        sa.select(inventories.c.provider_id).where(
            inventories.c.provider_kind == KIND).distinct())))
    op.execute(inventories.delete().where(
        inventories.c.provider_kind == KIND))
    for ratio in reversed(RATIOS):
        op.drop_column('computehosts', ratio)
