"""MariaDB and PostgreSQL render listed leases as climate.lease.views
does (climate.db.lease_json): same fields, same values, same order."""

from climate.db import api as db_api
from climate.db import migration
from climate.tests.unit.db import lease_json_parity


def test_listed_leases_render_as_the_views_do(database):
    db_api.configure(connection=database.url)
    try:
        migration.upgrade()
        lease_json_parity.check(seed=6)
    finally:
        db_api.get_engine().dispose()
