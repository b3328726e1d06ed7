"""python-blazarclient against Climate: ``blazar ...`` and ``openstack
reservation ...`` (python-openstackclient with blazarclient's plugin), with
no Keystone (``--os-auth-type none --os-endpoint URL/v1``), and their
results checked against Climate's own CLI.

Blazar's clients send no identity, so the API takes its ``[noauth]``
default (an admin of project ``embedded``): these tests use that identity
for ``climate`` too.

Not covered here: ``blazar lease-create --reservation resource_type=noop``
fails inside python-blazarclient 4.6 before any request (its generic
``--reservation`` parser looks every key up in an empty table:
``KeyError: 'resource_type'``); leases are created by ``climate`` and
changed, shown and deleted by Blazar's clients.  Host leases, which the
clients do create, are in test_hosts.py.
"""

import datetime
import json

ISO = '%Y-%m-%dT%H:%M:%S'
FIELDS = ('id', 'name', 'status', 'start_date', 'end_date', 'project_id',
          'user_id', 'degraded')


def _later(**delta):
    return (datetime.datetime.now(datetime.timezone.utc).replace(
        tzinfo=None) + datetime.timedelta(**delta)).strftime(ISO)


def _create(climate_all, name, **delta):
    done = climate_all.run('lease-create', name, '--reservation',
                           'resource_type=noop,colour=red', '--start-date',
                           _later(**(delta or {'hours': 1})), '--end-date',
                           _later(hours=5), '-f', 'json')
    assert done.code == 0, done
    return json.loads(done.out)


def _climate_show(climate_all, ref):
    done = climate_all.run('lease-show', ref, '-f', 'json')
    assert done.code == 0, done
    return json.loads(done.out)


def _ok(done):
    assert done.code == 0, done
    return done


def test_blazar_lease_list_and_show(climate_all):
    lease = _create(climate_all, 'bz-show')
    blazar = json.loads(_ok(climate_all.run(
        'lease-list', '-f', 'json', script='blazar')).out)
    ours = json.loads(_ok(climate_all.run('lease-list', '-f', 'json')).out)
    assert sorted((r['id'], r['name'], r['start_date'], r['end_date'])
                  for r in blazar) == sorted(
        (r['id'], r['name'], r['start_date'], r['end_date']) for r in ours)
    assert lease['id'] in [r['id'] for r in blazar]

    for ref in ('bz-show', lease['id']):  # name or id, as in Blazar
        shown = json.loads(_ok(climate_all.run(
            'lease-show', ref, '-f', 'json', script='blazar')).out)
        mine = _climate_show(climate_all, ref)
        assert {f: shown[f] for f in FIELDS} == {f: mine[f] for f in FIELDS}
        # blazarclient prints nested values as indented JSON text
        reservations = json.loads('[%s]' % shown['reservations'].replace(
            '}\n{', '},{'))
        assert reservations == mine['reservations']


def test_blazar_lease_update_and_delete(climate_all):
    lease = _create(climate_all, 'bz-update')
    _ok(climate_all.run('lease-update', 'bz-update', '--name', 'bz-updated',
                        '--prolong-for', '1h', '--defer-by', '30m',
                        script='blazar'))
    after = _climate_show(climate_all, lease['id'])
    assert after['name'] == 'bz-updated'
    # blazarclient computes the new dates itself, to the minute
    old_end = datetime.datetime.fromisoformat(lease['end_date'])
    new_end = datetime.datetime.fromisoformat(after['end_date'])
    assert new_end == (old_end + datetime.timedelta(hours=1)).replace(
        second=0, microsecond=0)
    old_start = datetime.datetime.fromisoformat(lease['start_date'])
    new_start = datetime.datetime.fromisoformat(after['start_date'])
    assert new_start == (old_start + datetime.timedelta(minutes=30)).replace(
        second=0, microsecond=0)

    # blazarclient only passes the keys it knows (min, max, amount...)
    res_id = lease['reservations'][0]['id']
    _ok(climate_all.run('lease-update', 'bz-updated', '--reservation',
                        'id=%s,amount=3' % res_id, script='blazar'))
    assert _climate_show(climate_all, lease['id'])['reservations'][0][
        'amount'] == 3

    done = _ok(climate_all.run('lease-delete', 'bz-updated',
                               script='blazar'))
    assert 'Deleted lease: bz-updated' in done.out + done.err
    gone = climate_all.run('lease-show', lease['id'])
    assert gone.code == 1
    assert gone.err == "No lease with a name or id of '%s' exists.\n" % (
        lease['id'])


def test_blazar_lease_create_with_an_event(climate_all):
    """``blazar lease-create --event``: blazarclient sends ``event_type``
    and ``event_date``; the event is kept among the lease's events."""
    _ok(climate_all.run('host-create', 'bz-event-host', '--extra',
                        'suite=bz-event'))
    start = _later(hours=50)[:16].replace('T', ' ')
    note = _later(hours=51)[:16].replace('T', ' ')
    end = _later(hours=52)[:16].replace('T', ' ')
    _ok(climate_all.run(
        'lease-create', '--physical-reservation',
        'min=1,max=1,resource_properties=["=", "$suite", "bz-event"]',
        '--start-date', start, '--end-date', end, '--event',
        'event_type=notification,event_date=%s' % note, 'bz-event',
        script='blazar'))
    lease = _climate_show(climate_all, 'bz-event')
    assert [(e['event_type'], e['time'], e['status'])
            for e in lease['events']
            if e['event_type'] == 'notification'] == [
        ('notification', note.replace(' ', 'T') + ':00.000000', 'UNDONE')]
    _ok(climate_all.run('lease-delete', 'bz-event', script='blazar'))
    _ok(climate_all.run('host-delete', 'bz-event-host'))


def test_blazar_errors_carry_the_server_message(climate_all):
    lease = _create(climate_all, 'bz-errors')
    done = climate_all.run('lease-update', lease['id'], '--end-date',
                           '2020-01-01 00:00', script='blazar')
    assert done.code == 1
    assert ('ERROR: End date must be later than current and start date. '
            'end_date 2020-01-01 00:00:00') in done.err
    assert 'Traceback' not in done.err
    ours = climate_all.run('lease-update', lease['id'], '--end-date',
                           '2020-01-01 00:00')
    assert ours.err.startswith('End date must be later than current and '
                               'start date. end_date 2020-01-01 00:00:00, ')
    assert ' (HTTP 400) (Request-ID: req-' in ours.err


def test_openstack_reservation_lease(climate_all):
    lease = _create(climate_all, 'osc-lease')
    listed = json.loads(_ok(climate_all.run(
        'reservation', 'lease', 'list', '-f', 'json',
        script='openstack')).out)
    ours = json.loads(_ok(climate_all.run('lease-list', '-f', 'json')).out)
    assert sorted(r['id'] for r in listed) == sorted(r['id'] for r in ours)

    shown = json.loads(_ok(climate_all.run(
        'reservation', 'lease', 'show', 'osc-lease', '-f', 'json',
        script='openstack')).out)
    mine = _climate_show(climate_all, 'osc-lease')
    assert {f: shown[f] for f in FIELDS} == {f: mine[f] for f in FIELDS}

    _ok(climate_all.run('reservation', 'lease', 'set', '--name', 'osc-2',
                        '--prolong-for', '2h', 'osc-lease',
                        script='openstack'))
    after = _climate_show(climate_all, lease['id'])
    assert after['name'] == 'osc-2'
    assert datetime.datetime.fromisoformat(after['end_date']) == (
        datetime.datetime.fromisoformat(lease['end_date']) +
        datetime.timedelta(hours=2)).replace(second=0, microsecond=0)

    _ok(climate_all.run('reservation', 'lease', 'delete', 'osc-2',
                        script='openstack'))
    assert climate_all.run('lease-show', lease['id']).code == 1


def _created(done):
    """blazarclient's ``-f json`` create: a line, then the JSON."""
    assert done.out.startswith('Created a new '), done
    return json.loads(done.out.split('\n', 1)[1])


def test_blazar_floatingip_commands_and_lease(climate_all):
    """``blazar floatingip-create/-list/-show/-delete`` on /v1/floatingips,
    and a ``virtual:floatingip`` lease made by ``blazar lease-create``
    (python-blazarclient parses its fields, ``required_floatingips`` as
    JSON)."""
    made = _created(_ok(climate_all.run(
        'floatingip-create', 'bz-fip-net', '172.24.4.20', '-f', 'json',
        script='blazar')))
    assert (made['floating_network_id'], made['floating_ip_address'],
            made['reservable']) == ('bz-fip-net', '172.24.4.20', True)
    listed = json.loads(_ok(climate_all.run(
        'floatingip-list', '-f', 'json', script='blazar')).out)
    assert {'id': made['id'], 'floating_ip_address': '172.24.4.20',
            'floating_network_id': 'bz-fip-net'} in listed
    ours = json.loads(_ok(climate_all.run(
        'floatingip-show', made['id'], '-f', 'json')).out)
    shown = json.loads(_ok(climate_all.run(
        'floatingip-show', made['id'], '-f', 'json', script='blazar')).out)
    assert {k: shown[k] for k in ('id', 'floating_ip_address',
                                  'floating_network_id', 'reservable',
                                  'created_at')} == {
        k: ours[k] for k in ('id', 'floating_ip_address',
                             'floating_network_id', 'reservable',
                             'created_at')}

    _ok(climate_all.run(
        'lease-create', '--reservation',
        'resource_type=virtual:floatingip,network_id=bz-fip-net,amount=1,'
        'required_floatingips=["172.24.4.20"]', '--start-date',
        '2090-01-01 00:00', '--end-date', '2090-01-01 02:00', 'bz-fip',
        script='blazar'))
    res = _climate_show(climate_all, 'bz-fip')['reservations'][0]
    assert (res['resource_type'], res['network_id'], res['amount'],
            res['required_floatingips'], res['floatingips']) == (
        'virtual:floatingip', 'bz-fip-net', 1, ['172.24.4.20'],
        ['172.24.4.20'])

    done = climate_all.run('floatingip-delete', made['id'], script='blazar')
    assert done.code == 1
    assert ("ERROR: Can't delete floating IP %s. Floating IP id %s is "
            'allocated by reservations.' % (made['id'], made['id'])
            ) in done.err
    _ok(climate_all.run('lease-delete', 'bz-fip', script='blazar'))
    done = _ok(climate_all.run('floatingip-delete', made['id'],
                               script='blazar'))
    assert 'Deleted floatingip: %s' % made['id'] in done.out
    done = climate_all.run('floatingip-show', made['id'], script='blazar')
    assert done.code == 1
    assert 'ERROR: Floating IP %s not found.' % made['id'] in done.err


def test_openstack_reservation_floatingip(climate_all):
    made = _created(_ok(climate_all.run(
        'reservation', 'floatingip', 'create', 'osc-fip-net', '172.24.4.21',
        '-f', 'json', script='openstack')))
    listed = json.loads(_ok(climate_all.run(
        'reservation', 'floatingip', 'list', '-f', 'json',
        script='openstack')).out)
    assert made['id'] in [f['id'] for f in listed]
    _ok(climate_all.run('reservation', 'floatingip', 'delete', made['id'],
                        script='openstack'))
    assert climate_all.run('floatingip-show', made['id']).code == 1
