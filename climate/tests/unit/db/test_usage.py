"""Usage's SQL (climate.db.usage) on SQLite against a brute-force
recomputation; the functional tests run the same check on MariaDB and
PostgreSQL (climate/tests/functional/test_usage_sql.py)."""

import pytest
import sqlalchemy as sa

from climate.db import api as db_api
from climate.db import models
from climate.db import usage as db_usage
from climate.tests.unit.db import usage_checks


@pytest.mark.parametrize('seed', [1, 2])
def test_usage_equals_a_brute_force_recomputation(ctx, seed):
    usage_checks.populate(ctx, seed)
    usage_checks.check(ctx, seed)


@pytest.mark.parametrize('seed', [5, 6])
def test_quota_reads_equal_a_brute_force(ctx, seed):
    usage_checks.populate(ctx, seed)
    usage_checks.check_quota_reads(ctx, seed)


@pytest.mark.parametrize('seed', [7, 8])
def test_billing_reads_equal_a_brute_force(ctx, seed):
    usage_checks.populate(ctx, seed)
    usage_checks.check_billing_reads(ctx, seed)


def test_records_keep_what_was_held_until_the_cut(ctx):
    usage_checks.populate(ctx, 3, leases=20)
    now = usage_checks.NOW
    with db_api.reader(ctx) as session:
        records = session.execute(sa.select(models.UsageRecord)).scalars()
        records = list(records)
    assert records
    for rec in records:
        # only what was held before its lease's end or deletion
        assert rec.start_date < rec.end_date <= now


def test_a_booking_not_started_leaves_no_record(ctx):
    usage_checks.populate(ctx, 4, leases=20)
    with db_api.writer(ctx) as session:
        before = session.execute(sa.select(sa.func.count()).select_from(
            models.UsageRecord)).scalar()
        # a lease not started yet: its bookings start with it or later
        future = session.execute(sa.select(models.Lease.id).where(
            models.Lease.start_date >= usage_checks.NOW,
            models.Lease.status == 'ACTIVE')).scalars().first()
        assert future is not None
        db_usage.record_consumed(session, future, usage_checks.NOW)
        after = session.execute(sa.select(sa.func.count()).select_from(
            models.UsageRecord)).scalar()
    assert before == after
