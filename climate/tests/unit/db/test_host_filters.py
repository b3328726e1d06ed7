"""SQL and Python agree on the host filter language (SQLite)."""

from climate.tests import fixtures
from climate.tests.unit.db import filter_parity


def test_sql_filters_select_what_evaluate_accepts():
    with fixtures.ClimateEnvironment():
        filter_parity.check()
