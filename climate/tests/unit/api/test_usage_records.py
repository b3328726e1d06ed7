"""What a lease consumed outlives its bookings: the END event and the
delete of an active lease copy what it held until then into the usage
records, in the transaction that releases it, and ``GET /v1/usage`` keeps
showing it (microversion 1.8)."""

import datetime
import time

from climate import dates
from climate.db import models
from climate.tests import fixtures
from climate.tests.fixtures import climate_env  # noqa: F401 - pytest fixture

V = '1.8'


def _pool(env):
    resp = env.request('POST', '/v1/volume-pools', persona='admin',
                       version='1.5', body={'name': 'node@lvm#lvm',
                                            'total_capacity_gb': 1000})
    assert resp.status_int in (201, 409), resp.text


def _volume_lease(env, name, start, end, size_gb=10):
    body = fixtures.lease_body(name, start, end, reservations=[
        {'resource_type': 'virtual:volume', 'size_gb': size_gb,
         'count': 1}])
    resp = env.request('POST', '/v1/leases', body=body)
    assert resp.status_int == 201, resp.text
    return resp.json['lease']


def _records(env, lease_id):
    return sorted((r.resource_class, r.amount, r.start_date, r.end_date)
                  for r in env.rows(models.UsageRecord)
                  if r.lease_id == lease_id)


def _usage(env, lease_id, start, end):
    resp = env.request('GET', '/v1/usage?by_lease=true&start=%s&end=%s' % (
        start.strftime('%Y-%m-%dT%H:%M:%S'),
        end.strftime('%Y-%m-%dT%H:%M:%S')), version=V)
    assert resp.status_int == 200, resp.text
    found = [x for x in resp.json['usage']['leases']
             if x['lease_id'] == lease_id]
    assert len(found) == 1, resp.json
    return found[0]


def test_an_ended_lease_keeps_what_it_consumed(climate_env):
    env = climate_env
    _pool(env)
    lease = _volume_lease(env, 'ends', 'now', fixtures.iso(3))
    start = dates.parse(lease['start_date'], 'start_date')
    end = dates.parse(lease['end_date'], 'end_date')
    env.wait_for_status(lease['id'], 'TERMINATED')
    assert not [b for b in env.bookings()
                if b[5] == lease['reservations'][0]['id']]
    # every booking copied whole: the event ran after the end
    assert _records(env, lease['id']) == [
        ('VOLUME', 1, start, end), ('VOLUME_GB', 10, start, end)]
    shown = _usage(env, lease['id'], start - datetime.timedelta(hours=1),
                   end + datetime.timedelta(hours=1))
    assert shown['status'] == 'TERMINATED'
    gb = [t for t in shown['totals'] if t['resource_class'] == 'VOLUME_GB']
    seconds = (end - start).total_seconds()
    assert gb[0]['past'] == round(10 * seconds / 3600.0, 6)
    assert gb[0]['future'] == 0.0


def test_a_deleted_active_lease_consumed_until_its_deletion(climate_env):
    env = climate_env
    _pool(env)
    lease = _volume_lease(env, 'deleted', 'now', '2099-01-01 00:00')
    env.wait_for_status(lease['id'], 'ACTIVE')
    time.sleep(1.1)  # a second held, at least
    before = dates.utcnow()
    resp = env.request('DELETE', '/v1/leases/' + lease['id'])
    assert resp.status_int == 204, resp.text
    after = dates.utcnow()
    start = dates.parse(lease['start_date'], 'start_date')
    records = _records(env, lease['id'])
    assert [r[:3] for r in records] == [('VOLUME', 1, start),
                                        ('VOLUME_GB', 10, start)]
    # cut at the deletion, not at the lease's end in 2099
    for record in records:
        assert before <= record[3] <= after
    shown = _usage(env, lease['id'], start, start + datetime.timedelta(
        days=1))
    assert shown['status'] == 'DELETED'
    assert [t['future'] for t in shown['totals']] == [0.0, 0.0]
    assert all(t['past'] > 0 for t in shown['totals'])


def test_a_deleted_pending_lease_consumed_nothing(climate_env):
    env = climate_env
    _pool(env)
    lease = _volume_lease(env, 'pending', '2090-01-01 00:00',
                          '2090-01-02 00:00')
    resp = env.request('DELETE', '/v1/leases/' + lease['id'])
    assert resp.status_int == 204, resp.text
    assert _records(env, lease['id']) == []
