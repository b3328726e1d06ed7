"""The host filter language in SQL on MariaDB and PostgreSQL selects
exactly what its Python evaluation accepts (numbers as numbers, text byte
by byte: case and accents count, whatever the server's collation)."""

from climate.db import api as db_api
from climate.db import migration
from climate.tests.unit.db import filter_parity


def test_sql_filters_select_what_evaluate_accepts(database):
    db_api.configure(connection=database.url)
    try:
        migration.upgrade()
        filter_parity.check(seed=12, rounds=200)
    finally:
        db_api.get_engine().dispose()
