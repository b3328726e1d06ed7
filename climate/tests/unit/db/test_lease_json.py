"""SQLite renders listed leases as climate.lease.views does."""

from climate.lease import views
from climate.tests import fixtures
from climate.tests.unit.db import lease_json_parity


def test_listed_leases_render_as_the_views_do():
    with fixtures.ClimateEnvironment():
        lease_json_parity.check()


def test_an_empty_listing_is_an_empty_array():
    assert views.lease_page([]) == {'leases': '[]', 'count': 0,
                                    'last_id': None}


def test_a_compressed_page_reads_as_the_plain_one():
    rows = [('id-%d' % i, '{"id": "id-%d", "name": "é 🌩"}' % (i,))
            for i in range(3)]
    plain = views.lease_page(rows)
    compressed = views.lease_page(rows, compressed=True)
    assert set(compressed) == {'leases_zlib', 'count', 'last_id'}
    assert views.page_leases(compressed) == views.page_leases(plain) == (
        plain['leases'])
    assert compressed['count'] == 3 and compressed['last_id'] == 'id-2'
