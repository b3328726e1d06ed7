"""The REST API through climate-api, RabbitMQ and two climate-managers."""

import datetime


from climate.tests.functional import procs

WAIT = 60


def _status(client, lease_id):
    return client.get_lease(lease_id)['status']


def test_lease_lifecycle_over_rabbitmq(climate):
    cluster = climate.start(managers=2)
    client = climate.client()
    other = climate.client(project='ft-other', roles='member,reader')

    # create, show, list
    far = procs.utcnow() + datetime.timedelta(days=1)
    later = client.create_lease('later', far, far + datetime.timedelta(
        hours=1), reservations=[{'resource_type': 'noop', 'colour': 'blue'}])
    assert later['status'] == 'PENDING'
    assert later['project_id'] == 'ft-project'
    [res] = later['reservations']
    assert res['resource_type'] == 'noop' and res['colour'] == 'blue'
    assert sorted(e['event_type'] for e in later['events']) == [
        'before_end_lease', 'end_lease', 'start_lease']
    shown = client.get_lease(later['id'])
    assert shown['id'] == later['id'] and shown['name'] == 'later'
    listed = client.list_leases()['leases']
    assert [lease['id'] for lease in listed] == [later['id']]
    # another project sees nothing of it
    assert other.list_leases()['leases'] == []
    response = other.request('GET', '/v1/leases/%s' % later['id'],
                             expect=(404,))
    assert later['id'] in response.json()['error_message']

    # bad input: 400 naming the field, nothing written
    response = client.request('POST', '/v1/leases', expect=(400,), json={
        'name': 'bad', 'start_date': 'now', 'end_date': 'tomorrow-ish',
        'reservations': [{'resource_type': 'noop'}], 'events': []})
    assert 'end_date' in response.text
    # a taken name: 409 from the unique key, nothing written
    response = client.request('POST', '/v1/leases', expect=(409,), json=(
        procs.lease_body('later', far, far + datetime.timedelta(hours=1))))
    assert 'later' in response.json()['error_message']
    assert len(client.list_leases()['leases']) == 1
    assert climate.database.scalar('SELECT count(*) FROM events') == 3

    # a lease starting now becomes ACTIVE; a short one ends TERMINATED
    now = procs.utcnow()
    active = client.create_lease('now', 'now', now + datetime.timedelta(
        hours=2))
    short = client.create_lease('short', 'now',
                                now + datetime.timedelta(seconds=4))
    procs.wait_for(lambda: _status(client, active['id']) == 'ACTIVE', WAIT,
                   message=lambda: 'lease ACTIVE: %s' % client.get_lease(
                       active['id']))
    procs.wait_for(lambda: _status(client, short['id']) == 'TERMINATED',
                   WAIT, message=lambda: 'lease TERMINATED: %s' %
                   client.get_lease(short['id']))
    short = client.get_lease(short['id'])
    assert {e['event_type']: e['status'] for e in short['events']} == {
        'start_lease': 'DONE', 'end_lease': 'DONE',
        'before_end_lease': 'DONE'}
    assert short['reservations'][0]['status'] == 'deleted'
    active = client.get_lease(active['id'])
    assert active['reservations'][0]['status'] == 'active'
    assert active['status_reason'] is None

    # 1.1: pagination with a next link
    paged = climate.client(version='1.1')
    page = paged.list_leases(limit=2, sort_key='name')
    assert [lease['name'] for lease in page['leases']] == ['later', 'now']
    next_href = page['leases_links'][0]['href']
    assert 'marker=' in next_href
    rest = paged.session.get(next_href, timeout=30).json()
    assert [lease['name'] for lease in rest['leases']] == ['short']

    # delete: an active lease is reclaimed, then gone
    for lease in (later, active, short):
        client.delete_lease(lease['id'])
        client.request('GET', '/v1/leases/%s' % lease['id'], expect=(404,))
    assert client.list_leases()['leases'] == []

    db = climate.database
    actions = {(row.lease_id, row.action) for row in db.query(
        'SELECT lease_id, action FROM noop_actions')}
    assert (active['id'], 'on_end') in actions  # reclaimed at delete
    assert (later['id'], 'on_start') not in actions
    assert db.scalar('SELECT count(*) FROM leases') == 0
    assert db.scalar('SELECT count(*) FROM events') == 0
    assert all(proc.alive() for proc in cluster.procs)


def test_delete_with_json_accept_header(climate):
    climate.start(managers=1)
    client = climate.client()
    client.session.headers['Accept'] = 'application/json'
    lease = client.create_lease('accept-json', '2099-01-01 00:00',
                                '2099-01-02 00:00')
    client.delete_lease(lease['id'])
