"""SQLite renders listed leases as climate.manager.views does."""

from climate.manager import views
from climate.tests import fixtures
from climate.tests.unit.db import lease_json_parity


def test_listed_leases_render_as_the_views_do():
    with fixtures.ClimateEnvironment():
        lease_json_parity.check()


def test_an_empty_listing_is_an_empty_array():
    assert views.lease_page([]) == {'leases': '[]', 'count': 0,
                                    'last_id': None}
