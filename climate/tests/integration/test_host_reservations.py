"""Host reservations end to end: Climate's API, manager and real Nova.

Climate runs with ``[hosts] inventory = nova``; nova-scheduler runs
``ClimateFilter`` (the ``cloud`` fixture brings the harness up with it).

1. The issue's scenario: 3 hosts registered, a lease for 2 starting now,
   the project's servers with the hint on the reserved hosts, others never
   there, another project's hint refused, the end reclaiming everything.
2. Nova's API down when the lease starts: the start is retried with
   backoff and shows its error; once Nova is back it completes, and the
   end leaves nothing behind.
"""

import time

from climate.tests.functional.procs import wait_for
from climate.tests.integration.conftest import harness
from climate.tests.integration.identity import assert_error
from climate.tests.integration.identity import iso_in

LEASE_SECONDS = 40


def register(api, token, names):
    hosts = []
    for name in names:
        resp = api.call('POST', '/v1/os-hosts', token, {'name': name})
        assert resp.status_code == 201, resp.text
        hosts.append(resp.json()['host'])
    return hosts


def host_lease(count, end_in, name):
    return {'name': name, 'start_date': 'now', 'end_date': iso_in(end_in),
            'reservations': [{'resource_type': 'physical:host',
                              'min': count, 'max': count,
                              'hypervisor_properties': '',
                              'resource_properties': ''}],
            'events': []}


def create_lease(api, token, body):
    resp = api.call('POST', '/v1/leases', token, body)
    assert resp.status_code == 201, resp.text
    return resp.json()['lease']


def test_reserved_hosts_on_nova(cloud, api, tokens, compute):
    names = cloud.info['compute_hosts'][:3]
    register(api, tokens['admin'], names)
    assert compute.hosts_of('freepool') == sorted(names)

    posted = time.monotonic()
    lease = create_lease(api, tokens['demo'],
                         host_lease(2, LEASE_SECONDS, 'two-hosts'))
    # the lease exists and its start ('now') is due: the start begins here
    started = time.monotonic()
    rid = lease['reservations'][0]['id']

    reserved = wait_for(lambda: len(compute.hosts_of(rid) or []) == 2 and
                        compute.hosts_of(rid), 30, interval=0.02,
                        message='both hosts in the reservation aggregate')
    done = time.monotonic()
    print(f'\ncreate (with its Keystone trust) {started - posted:.2f} s, '
          f'then both hosts in the aggregate {done - started:.2f} s later')
    # Both figures are printed, not asserted: on a loaded CI machine they
    # measure the machine.  The start's lag is held by benchmarks/bench_lag
    # and the create by bench_post; the bound above says the start ran when
    # due, not at a later sweep.
    # and out of the freepool right after
    free = wait_for(lambda: len(compute.hosts_of('freepool')) == 1 and
                    compute.hosts_of('freepool'), 10, interval=0.05,
                    message='the freepool without the reserved hosts')
    assert sorted(reserved + free) == sorted(names)
    agg = compute.aggregate(rid)
    assert agg.metadata['climate:owner'] == compute.project_id('demo')
    lease = api.wait_status(tokens['demo'], lease['id'], 'ACTIVE', timeout=30)

    # the lease's project with the hint: on a reserved host; without it:
    # never there; another project's hint: no valid host
    mine, plain = compute.check_filter(rid, reserved, 2)

    # a reserved host cannot leave the inventory
    host_id = next(h['id'] for h in api.call(
        'GET', '/v1/os-hosts', tokens['admin']).json()['hosts']
        if h['hypervisor_hostname'] == reserved[0])
    assert_error(api.call('DELETE', f'/v1/os-hosts/{host_id}',
                          tokens['admin']), 409)

    api.wait_status(tokens['demo'], lease['id'], 'TERMINATED',
                    timeout=LEASE_SECONDS + 60)
    for s in mine:
        assert compute.gone(s.id)
    for s in plain:
        assert compute.admin.servers.get(s.id).status == 'ACTIVE'
    compute.assert_released(rid, names)


def test_inventory_refuses_busy_or_unknown_hypervisors(cloud, api, tokens,
                                                       compute):
    assert_error(api.call('POST', '/v1/os-hosts', tokens['admin'],
                          {'name': 'no-such-hypervisor'}), 404)
    server = compute.boot_active('demo', 1)[0]
    busy = compute.host_of(server)
    assert_error(api.call('POST', '/v1/os-hosts', tokens['admin'],
                          {'name': busy}), 409, name='HostHasServers')
    assert compute.aggregate('freepool') is None or \
        busy not in compute.hosts_of('freepool')
    compute.admin.servers.delete(server.id)
    wait_for(lambda: compute.gone(server.id), 60, message='server deleted')
    [host] = register(api, tokens['admin'], [busy])
    assert host['hypervisor_hostname'] == busy
    assert busy in compute.hosts_of('freepool')
    resp = api.call('DELETE', '/v1/os-hosts/%s' % host['id'], tokens['admin'])
    assert resp.status_code == 204, resp.text
    assert busy not in compute.hosts_of('freepool')


def test_start_survives_nova_api_outage(cloud, api, tokens, compute):
    names = cloud.info['compute_hosts'][:2]
    register(api, tokens['admin'], names)
    status, out = harness('stop', 'nova-api', timeout=120)
    assert status == 0, out
    try:
        lease = create_lease(api, tokens['demo'],
                             host_lease(1, 120, 'through-an-outage'))
        rid = lease['reservations'][0]['id']

        def failed_twice():
            seen = api.lease(tokens['demo'], lease['id'])
            start = next(e for e in seen['events']
                         if e['event_type'] == 'start_lease')
            return seen if start['attempts'] >= 2 and start['last_error'] \
                else None
        seen = wait_for(failed_twice, 60, message='two failed start attempts')
        start = next(e for e in seen['events']
                     if e['event_type'] == 'start_lease')
        assert 'Nova' in start['last_error'], start
        assert seen['status'] != 'ACTIVE'
        assert 'start_lease attempt' in (seen['status_reason'] or ''), seen
        assert 'Nova' in seen['status_reason']
    finally:
        status, out = harness('start', timeout=300)
        assert status == 0, out

    lease = api.wait_status(tokens['demo'], lease['id'], 'ACTIVE',
                            timeout=300)
    assert not lease['status_reason'], lease
    held = compute.hosts_of(rid)
    assert held is not None and len(held) == 1
    assert compute.hosts_of('freepool') == sorted(set(names) - set(held))

    resp = api.update(tokens['demo'], lease['id'],
                      {'end_date': iso_in(3)})
    assert resp.status_code == 200, resp.text
    api.wait_status(tokens['demo'], lease['id'], 'TERMINATED', timeout=120)
    compute.assert_released(rid, names)


def test_healing_replaces_a_host_whose_compute_goes_down(cloud, api, tokens,
                                                         compute):
    """nova-compute disabled under an active reservation: replaced from the
    freepool; with no spare left the lease is degraded until it is back."""
    names = cloud.info['compute_hosts'][:3]
    hosts = {h['hypervisor_hostname']: h
             for h in register(api, tokens['admin'], names)}
    lease = create_lease(api, tokens['demo'], host_lease(1, 600, 'healed'))
    rid = lease['reservations'][0]['id']
    api.wait_status(tokens['demo'], lease['id'], 'ACTIVE', timeout=30)
    [first] = wait_for(lambda: compute.hosts_of(rid), 30,
                       message='the reserved host in the aggregate')
    services = {s.host: s for s in compute.admin.services.list(
        binary='nova-compute') if s.host in names}

    def reservation():
        return api.lease(tokens['demo'], lease['id'])['reservations'][0]

    def host_row(name):
        resp = api.call('GET', '/v1/os-hosts/%s' % hosts[name]['id'],
                        tokens['admin'])
        assert resp.status_code == 200, resp.text
        return resp.json()['host']

    try:
        compute.admin.services.disable_log_reason(services[first].id,
                                                  'climate healing test')

        def replaced():
            held = compute.hosts_of(rid) or []
            return len(held) == 1 and held != [first] and held
        [second] = wait_for(replaced, 60,
                            message='the down host replaced in the aggregate')
        assert first in compute.hosts_of('freepool')
        # Nova is changed inside the healing transaction, which commits next
        wait_for(lambda: reservation()['resources_changed'], 10,
                 message='resources_changed on the reservation')
        assert api.lease(tokens['demo'], lease['id'])['degraded'] is False
        assert host_row(first)['reservable'] is False

        # nothing left to replace it with: flagged, not failed
        for name in names:
            if name != first:
                compute.admin.services.disable_log_reason(
                    services[name].id, 'climate healing test')
        wait_for(lambda: reservation()['missing_resources'], 60,
                 message='missing_resources on the reservation')
        seen = api.lease(tokens['demo'], lease['id'])
        assert seen['degraded'] is True and seen['status'] == 'ACTIVE'
    finally:
        for name in names:
            compute.admin.services.enable(services[name].id)

    wait_for(lambda: not reservation()['missing_resources'], 60,
             message='missing_resources cleared')
    assert api.lease(tokens['demo'], lease['id'])['degraded'] is False
    assert wait_for(lambda: host_row(first)['reservable'], 30,
                    message='the first host reservable again')
    assert compute.hosts_of(rid) == [second]

    resp = api.update(tokens['demo'], lease['id'],
                      {'end_date': iso_in(3)})
    assert resp.status_code == 200, resp.text
    api.wait_status(tokens['demo'], lease['id'], 'TERMINATED', timeout=120)
    compute.assert_released(rid, names)


def test_before_end_snapshot_then_end(cloud, api, tokens, compute):
    """``before_end: snapshot``: the project's servers on the reserved
    hosts are snapshotted (images the project owns) before the end deletes
    them."""
    names = cloud.info['compute_hosts'][:1]
    register(api, tokens['admin'], names)
    body = host_lease(1, 45, 'snapshotted')
    body['reservations'][0]['before_end'] = 'snapshot'
    body['before_end_date'] = iso_in(15)
    lease = create_lease(api, tokens['demo'], body)
    rid = lease['reservations'][0]['id']
    assert lease['reservations'][0]['before_end'] == 'snapshot'
    api.wait_status(tokens['demo'], lease['id'], 'ACTIVE', timeout=30)
    [server] = compute.boot_active('demo', 1, hint=rid)

    def before_end_done():
        seen = api.lease(tokens['demo'], lease['id'])
        event = next(e for e in seen['events']
                     if e['event_type'] == 'before_end_lease')
        return event['status'] == 'DONE' and seen
    seen = wait_for(before_end_done, 60, message='the before_end event')
    assert seen['status'] == 'ACTIVE'
    images = compute.images_named(f'climate-{rid}-{server.id}')
    assert len(images) == 1, images
    assert images[0]['owner'] == compute.project_id('demo')
    assert compute.admin.servers.get(server.id).status == 'ACTIVE'

    api.wait_status(tokens['demo'], lease['id'], 'TERMINATED', timeout=120)
    assert compute.gone(server.id)
    compute.assert_released(rid, names)
    compute.image_api.delete(f"/v2/images/{images[0]['id']}")
