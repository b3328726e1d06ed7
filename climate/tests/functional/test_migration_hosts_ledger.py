"""Migration 0009 on MariaDB and PostgreSQL with rows in the old tables:
hosts become ledger providers, ``computehost_allocations`` become whole
bookings (HOST plus the host's capacity, the allocation's window and
span level), and a downgrade gives the allocations back."""

import datetime
import uuid

import sqlalchemy as sa

from climate.db import api as db_api
from climate.db.ledger import windows
from climate.db import migration
from climate.db import models

NOW = datetime.datetime(2026, 11, 25, 10, 0, 0)
#: (vcpus, memory_mb, local_gb) of hosts 1..3: a full one, one with no
#: disk, one the static inventory registered without facts.
HOSTS = {1: (16, 65536, 500), 2: (8, 32768, 0), 3: (0, 0, 0)}
#: (host, start, end) of each allocation: lengths from one second to
#: several years (span levels 1 to 27).
WINDOWS = [
    (1, NOW, NOW + datetime.timedelta(seconds=1)),
    (1, NOW + datetime.timedelta(days=1), NOW + datetime.timedelta(days=2)),
    (2, NOW, NOW + datetime.timedelta(hours=4, seconds=1)),
    (3, NOW, NOW + datetime.timedelta(days=3 * 365)),
    (2, NOW + datetime.timedelta(days=10),
     NOW + datetime.timedelta(days=10, seconds=2 ** 20)),
]


def _populate(conn):
    meta = sa.MetaData()
    # the tables as 0008 left them (leases too: later migrations add
    # columns the models have); reservations as the models say (0009
    # leaves them alone, and the models know their JSON)
    tables = {name: sa.Table(name, meta, autoload_with=conn) for name in (
        'computehosts', 'computehost_allocations', 'leases')}
    tables['reservations'] = models.Reservation.__table__
    conn.execute(tables['computehosts'].insert(), [
        dict(id=i, hypervisor_hostname='h%d' % i, service_name='h%d' % i,
             vcpus=v, memory_mb=m, local_gb=d, reservable=True,
             disabled=False, created_at=NOW)
        for i, (v, m, d) in HOSTS.items()])
    allocations = []
    for n, (host, start, end) in enumerate(WINDOWS):
        lease_id, res_id, alloc_id = (str(uuid.uuid4()) for _ in range(3))
        conn.execute(tables['leases'].insert().values(
            id=lease_id, name='l%d' % n, project_id='p', start_date=start,
            end_date=end, status='PENDING', degraded=False,
            created_at=NOW))
        conn.execute(tables['reservations'].insert().values(
            id=res_id, lease_id=lease_id, resource_type='physical:host',
            status='pending', params={'min': 1, 'max': 1},
            missing_resources=False, resources_changed=False,
            created_at=NOW))
        conn.execute(tables['computehost_allocations'].insert().values(
            id=alloc_id, reservation_id=res_id, lease_id=lease_id,
            computehost_id=host, start_date=start, end_date=end))
        allocations.append((alloc_id, res_id, lease_id, host, start, end))
    return allocations


def _rows(engine, query):
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(sa.text(query))]


def test_host_allocations_move_into_the_ledger(database):
    db_api.configure(connection=database.url)
    engine = database.engine
    try:
        migration.upgrade('0008')
        with engine.begin() as conn:
            allocations = _populate(conn)
        migration.upgrade()
        assert migration.current() == migration.head()

        inventories = _rows(engine, (
            'SELECT provider_id, provider_kind, resource_class, total, '
            'reserved, allocation_ratio, min_unit, max_unit, step_size '
            'FROM ledger_inventories'))
        expected = []
        for host, (vcpus, memory, disk) in HOSTS.items():
            expected.append((str(host), 'compute_host', 'HOST', 1, 0, 1.0,
                             1, 1, 1))
            for cls, total in (('VCPU', vcpus), ('MEMORY_MB', memory),
                               ('DISK_GB', disk)):
                if total:
                    expected.append((str(host), 'compute_host', cls, total,
                                     0, 1.0, 1, total, 1))
        assert sorted(inventories) == sorted(expected)

        bookings = _rows(engine, (
            'SELECT id, reservation_id, lease_id, provider_id, '
            'resource_class, amount, start_date, end_date, span_level '
            'FROM ledger_bookings'))
        expected = []
        for alloc_id, res_id, lease_id, host, start, end in allocations:
            level = windows.span_level(start, end)
            vcpus, memory, disk = HOSTS[host]
            expected.append((res_id, lease_id, str(host), 'HOST', 1, start,
                             end, level))
            for cls, total in (('VCPU', vcpus), ('MEMORY_MB', memory),
                               ('DISK_GB', disk)):
                if total:
                    expected.append((res_id, lease_id, str(host), cls, total,
                                     start, end, level))
        assert sorted(b[1:] for b in bookings) == sorted(expected)
        # the HOST booking keeps the allocation's id, the others get fresh
        # distinct ones
        host_ids = {b[0] for b in bookings if b[4] == 'HOST'}
        assert host_ids == {a[0] for a in allocations}
        assert len({b[0] for b in bookings}) == len(bookings)
        assert 'computehost_allocations' not in sa.inspect(
            engine).get_table_names()
        columns = {c['name'] for c in sa.inspect(engine).get_columns(
            'computehosts')}
        assert {'cpu_allocation_ratio', 'ram_allocation_ratio',
                'disk_allocation_ratio'} <= columns

        # and back: the allocations return as they were
        migration.downgrade('0008')
        back = _rows(engine, (
            'SELECT id, reservation_id, lease_id, computehost_id, '
            'start_date, end_date FROM computehost_allocations'))
        assert sorted(back) == sorted(allocations)
        assert _rows(engine, 'SELECT count(*) FROM ledger_bookings') == [
            (0,)]
        assert _rows(engine, 'SELECT count(*) FROM ledger_inventories') == [
            (0,)]
        migration.upgrade()
        assert len(_rows(engine, 'SELECT id FROM ledger_bookings')) == len(
            bookings)
    finally:
        db_api.get_engine().dispose()
