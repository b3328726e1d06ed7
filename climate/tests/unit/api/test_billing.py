"""The bill of a lease that ran (microversion 1.10): what it consumed,
priced by the rate table, with its fee, as JSON and as CSV."""

import csv
import datetime
import io

from climate import dates
from climate.tests import fixtures
from climate.tests.fixtures import climate_env  # noqa: F401 - pytest fixture


def test_a_lease_that_ran_is_billed(climate_env):
    env = climate_env
    resp = env.request('POST', '/v1/volume-pools', persona='admin',
                       version='1.5', body={'name': 'bill@lvm#lvm',
                                            'total_capacity_gb': 1000})
    assert resp.status_int == 201, resp.text
    resp = env.request('PUT', '/v1/billing/rates', persona='admin',
                       version='1.10', body={
                           'currency': 'EUR', 'lease_fee': 2,
                           'hourly': {'VOLUME_GB': 36.0}})
    assert resp.status_int == 200, resp.text
    body = fixtures.lease_body('billed', 'now', fixtures.iso(3),
                               reservations=[{
                                   'resource_type': 'virtual:volume',
                                   'size_gb': 10, 'count': 1}])
    lease = env.request('POST', '/v1/leases', body=body).json['lease']
    env.wait_for_status(lease['id'], 'TERMINATED')
    start = dates.parse(lease['start_date'], 'start')
    end = dates.parse(lease['end_date'], 'end')
    seconds = (end - start).total_seconds()
    period = '?start=%s&end=%s' % (
        (start - datetime.timedelta(hours=1)).strftime('%Y-%m-%dT%H:%M:%S'),
        (end + datetime.timedelta(hours=1)).strftime('%Y-%m-%dT%H:%M:%S'))

    resp = env.request('GET', '/v1/billing' + period, version='1.10')
    assert resp.status_int == 200, resp.text
    bill = resp.json['billing']
    lines = [(x['lease_name'], x['kind'], x['resource_class'],
              x['quantity'], x['rate'], x['charge']) for x in bill['lines']]
    gb_hours = round(10 * seconds / 3600.0, 6)
    assert lines == [
        ('billed', 'lease_fee', None, 1, 2, 2),
        ('billed', 'usage', 'VOLUME', round(seconds / 3600.0, 6), 0, 0.0),
        ('billed', 'usage', 'VOLUME_GB', gb_hours, 36.0,
         round(gb_hours * 36.0, 4))]
    assert bill['total'] == round(2 + gb_hours * 36.0, 4)

    # another project's member sees none of it
    resp = env.request('GET', '/v1/billing' + period, version='1.10',
                       project='project-b')
    assert resp.json['billing']['lines'] == []

    resp = env.request('GET', '/v1/billing' + period + '&format=csv',
                       version='1.10')
    assert resp.status_int == 200, resp.text
    assert resp.content_type == 'text/csv'
    rows = list(csv.DictReader(io.StringIO(resp.text)))
    assert [(r['kind'], r['resource_class'], r['charge'], r['currency'])
            for r in rows] == [
        ('lease_fee', '', '2', 'EUR'), ('usage', 'VOLUME', '0.0', 'EUR'),
        ('usage', 'VOLUME_GB', str(round(gb_hours * 36.0, 4)), 'EUR')]
