"""Usage's SQL on MariaDB and PostgreSQL: every project's usage over
random periods equals a brute-force recomputation over the ledger and the
usage records, and so are the quota checks' reads of the project index
and billing's reads (climate.tests.unit.db.usage_checks; SQLite runs the same checks in the
unit tests)."""

from climate import context
from climate.db import api as db_api
from climate.db import migration
from climate.tests.unit.db import usage_checks


def test_usage_equals_a_brute_force_recomputation(database):
    db_api.configure(connection=database.url)
    try:
        migration.upgrade()
        ctx = context.admin_context()
        usage_checks.populate(ctx, 11, leases=200)
        usage_checks.check(ctx, 11)
        usage_checks.check_quota_reads(ctx, 11)
        usage_checks.check_billing_reads(ctx, 11)
    finally:
        db_api.get_engine().dispose()
