"""The power planner's tables: a state change and its history interval
written together, the inputs read in a bounded number of statements,
and migrations 0022 and 0023 down and up; the idle watts read kept."""

import datetime

from alembic import autogenerate
from alembic import migration as alembic_migration
import sqlalchemy as sa

from climate.db import api as db_api
from climate.db import hosts as db_hosts
from climate.db import migration
from climate.db import models
from climate.db import power as db_power
from climate.tests.unit.db import power_checks

T0 = datetime.datetime(2090, 1, 1)


def at(minutes):
    return T0 + datetime.timedelta(minutes=minutes)


def _host(ctx, name='h1', **caps):
    return power_checks.add_host(ctx, name, caps)


def _history(ctx):
    H = models.HostPowerHistory
    with db_api.reader(ctx) as session:
        return [tuple(r) for r in session.execute(sa.select(
            H.host_id, H.state, H.started_at, H.ended_at).order_by(H.id))]


def test_a_change_of_state_closes_one_interval_and_opens_the_next(ctx):
    host = _host(ctx)
    db_power.set_state(ctx, host, 'on', at(0))
    db_power.set_state(ctx, host, 'on', at(5))
    rec = db_power.set_state(ctx, host, 'off', at(10))
    assert (rec.state, rec.since) == ('off', at(10))
    db_power.set_state(ctx, host, 'waking', at(70), need_at=at(90))
    assert _history(ctx) == [(host, 'on', at(0), at(10)),
                             (host, 'off', at(10), at(70)),
                             (host, 'waking', at(70), None)]
    assert db_power.records(ctx)[host].need_at == at(90)
    assert db_power.intervals(ctx, 'off', at(0), at(60)) == {
        host: [(at(10), at(60))]}
    assert db_power.intervals(ctx, 'waking', at(0), at(80)) == {
        host: [(at(70), at(80))]}


def test_an_error_is_kept_until_the_next_state_written(ctx):
    host = _host(ctx)
    rec = db_power.record_error(ctx, host, 'BMC away', at(1))
    assert (rec.state, rec.last_error, rec.error_at) == (
        'unknown', 'BMC away', at(1))
    db_power.set_state(ctx, host, 'on', at(2), boot_seconds=120)
    rec = db_power.records(ctx)[host]
    assert (rec.last_error, rec.boot_seconds) == (None, 120)
    db_power.set_state(ctx, host, 'off', at(3))
    assert db_power.records(ctx)[host].boot_seconds == 120


def test_inputs_hold_facts_capabilities_and_the_bookings_ahead(ctx):
    first = _host(ctx, 'h1', ironic_node='n1')
    second = _host(ctx, 'h2')
    db_power.set_state(ctx, first, 'off', at(0), boot_seconds=900)
    for start, end in ((at(30), at(60)), (at(600), at(660))):
        power_checks.book(ctx, second, start, end)
    seen = []

    def horizon(longest_boot):
        seen.append(longest_boot)
        return datetime.timedelta(minutes=120)

    inputs = db_power.read_inputs(ctx, at(0), horizon)
    assert seen == [900]
    assert sorted(inputs.hosts) == [first, second]
    facts = inputs.hosts[first].facts
    assert (facts['hypervisor_hostname'], facts['ironic_node'],
            facts['id']) == ('h1', 'n1', first)
    assert inputs.hosts[first].record.state == 'off'
    assert inputs.hosts[second].record is None
    # the booking beyond the horizon is not read
    assert inputs.bookings == {second: [(at(30), at(60))]}


def test_a_deleted_host_takes_its_record_not_its_history(ctx):
    host = _host(ctx)
    db_power.set_state(ctx, host, 'off', at(0))
    db_hosts.host_delete(ctx, host)
    assert db_power.records(ctx) == {}
    assert _history(ctx) == [(host, 'off', at(0), None)]


def test_migration_0022_goes_down_and_up(ctx):
    assert migration.current() == migration.head()
    engine = db_api.get_engine()
    migration.downgrade('0021')
    tables = sa.inspect(engine).get_table_names()
    assert 'host_power' not in tables
    assert 'host_power_history' not in tables
    migration.upgrade()
    with engine.connect() as conn:
        assert conn.execute(sa.text(
            "SELECT name FROM work_locks WHERE name = 'host_power'")).all()
        context = alembic_migration.MigrationContext.configure(
            conn, opts={'compare_type': True})
        diff = autogenerate.compare_metadata(context, models.Base.metadata)
    assert diff == []


def _statements_of_a_read(ctx):
    seen = []

    def count(conn, cursor, statement, *args):
        seen.append(statement)

    engine = db_api.get_engine()
    sa.event.listen(engine, 'before_cursor_execute', count)
    try:
        db_power.read_inputs(ctx, at(0),
                             lambda boot: datetime.timedelta(hours=3))
    finally:
        sa.event.remove(engine, 'before_cursor_execute', count)
    return len(seen)


def test_the_inputs_cost_the_same_statements_whatever_the_hosts(ctx):
    host = _host(ctx, 'h0')
    power_checks.book(ctx, host, at(10), at(20))
    db_power.set_state(ctx, host, 'on', at(0))
    few = _statements_of_a_read(ctx)
    for i in range(1, 13):
        other = _host(ctx, 'h%d' % i, rack=str(i))
        power_checks.book(ctx, other, at(i), at(i + 30))
        db_power.set_state(ctx, other, 'off', at(0))
    assert _statements_of_a_read(ctx) == few


def test_a_reading_is_kept_until_the_next_one(ctx):
    first = _host(ctx, 'h1')
    second = _host(ctx, 'h2')
    db_power.set_state(ctx, first, 'off', at(10),
                       reading=db_power.Reading(212.5, at(9)))
    db_power.set_state(ctx, second, 'off', at(10))
    rec = db_power.record(ctx, first)
    assert (rec.idle_watts, rec.watts_at) == (212.5, at(9))
    # a write without a reading leaves the last one
    db_power.set_state(ctx, first, 'on', at(20))
    db_power.record_error(ctx, first, 'BMC away', at(21))
    assert db_power.record(ctx, first)[-2:] == (212.5, at(9))
    db_power.set_state(ctx, first, 'off', at(30),
                       reading=db_power.Reading(199, at(29)))
    assert db_power.record(ctx, first)[-2:] == (199.0, at(29))
    # only the hosts read
    assert db_power.idle_watts(ctx) == {first: 199.0}
    assert db_power.records(ctx)[second].idle_watts is None


def test_the_readings_of_every_host_cost_one_statement(ctx):
    for i in range(5):
        host = _host(ctx, 'h%d' % i, rack=str(i))
        db_power.set_state(ctx, host, 'off', at(0),
                           reading=db_power.Reading(100 + i, at(0)))
    seen = []

    def count(conn, cursor, statement, *args):
        seen.append(statement)

    engine = db_api.get_engine()
    sa.event.listen(engine, 'before_cursor_execute', count)
    try:
        found = db_power.idle_watts(ctx)
    finally:
        sa.event.remove(engine, 'before_cursor_execute', count)
    assert sorted(found.values()) == [100.0, 101.0, 102.0, 103.0, 104.0]
    assert [s for s in seen if s.startswith('SELECT')] == [seen[-1]]


def test_migration_0023_goes_down_and_up_keeping_the_records(ctx):
    host = _host(ctx)
    db_power.set_state(ctx, host, 'off', at(0),
                       reading=db_power.Reading(150.0, at(0)))
    engine = db_api.get_engine()
    migration.downgrade('0022')

    def columns():
        return {c['name'] for c in sa.inspect(engine).get_columns(
            'host_power')}

    assert not {'idle_watts', 'watts_at'} & columns()
    with engine.connect() as conn:
        # the downgrade keeps the rows, not the readings
        assert conn.execute(sa.text(
            'SELECT host_id, state FROM host_power')).all() == [
            (host, 'off')]
    migration.upgrade()
    assert {'idle_watts', 'watts_at'} <= columns()
    rec = db_power.record(ctx, host)
    assert (rec.state, rec.idle_watts, rec.watts_at) == ('off', None, None)
    with engine.connect() as conn:
        context = alembic_migration.MigrationContext.configure(
            conn, opts={'compare_type': True})
        diff = autogenerate.compare_metadata(context, models.Base.metadata)
    assert diff == []
