"""``virtual:instance``, pre-created mode (seed 000), on real Nova.

Through Climate's API (microversion 1.4) as the project's user:

1. an existing server (``server_id``) is SHELVED_OFFLOADED right after the
   create, unshelved at the start onto the host its flavor's capacity is
   booked on (the reservation's aggregate names it, ``ClimateFilter`` lets
   it through), and deleted at the end (``on_end: delete``);
2. a boot request (``server``) is booted as the user through the lease's
   trust, shelved, woken at the start, and shelved again at the end
   (``on_end: shelve``);
3. a server its user deletes before the start is a visible error on the
   reservation (``server_error``, ``missing_resources``), not a failed
   start.

nova-scheduler runs ``ClimateFilter`` (the ``cloud`` fixture loads it).
"""

import time

import pytest

from climate.tests.functional.procs import wait_for
from climate.tests.integration import compute as compute_mod
from climate.tests.integration.identity import iso_in
from climate.tests.integration.test_instance_reservations import (  # noqa
    Compute, clean_placement, conf, placement, register_hosts)

WAIT = compute_mod.WAIT
VERSION = '1.4'
#: Seconds from the create to the start: room to see the server shelved.
LEAD = 20


@pytest.fixture
def compute(cloud):
    return Compute(cloud)


def _status(compute, server_id):
    s = compute.admin.servers.get(server_id)
    return (s.status, getattr(s, 'OS-EXT-STS:task_state', None))


def wait_server(compute, server_id, status, timeout=WAIT):
    return wait_for(lambda: _status(compute, server_id) == (status, None),
                    timeout, message=f'server {server_id} {status}')


def create(api, token, name, reservation, start, end):
    body = {'name': name, 'start_date': start, 'end_date': end,
            'events': [], 'reservations': [
                dict(reservation, resource_type='virtual:instance')]}
    resp = api.call('POST', '/v1/leases', token, body, version=VERSION)
    assert resp.status_code == 201, resp.text
    return resp.json()['lease']


def end_now(api, token, lease):
    return api.end_now(token, lease['id'], timeout=120)


def test_an_existing_server_is_shelved_then_woken_on_its_host(
        cloud, api, tokens, compute):
    t0 = time.monotonic()
    names = cloud.info['compute_hosts'][:3]
    register_hosts(api, tokens['admin'], names)
    server = compute.boot_active('demo', 1)[0]

    # 1.3 clients do not have the fields
    resp = api.call('POST', '/v1/leases', tokens['demo'], {
        'name': 'old', 'start_date': iso_in(LEAD), 'end_date': iso_in(600),
        'reservations': [{'resource_type': 'virtual:instance',
                          'server_id': server.id}]}, version='1.3')
    assert resp.status_code == 400 and 'microversion 1.4' in resp.text

    lease = create(api, tokens['demo'], 'pre-existing',
                   {'server_id': server.id}, iso_in(LEAD), iso_in(600))
    rsv = lease['reservations'][0]
    rid = rsv['id']
    assert (rsv['server_id'], rsv['on_end'], rsv['amount']) == (
        server.id, 'delete', 1)
    assert rsv['flavor_id'] == compute.admin.flavors.get(
        compute.flavor).name
    wait_server(compute, server.id, 'SHELVED_OFFLOADED')
    shelved = time.monotonic()

    lease = api.wait_status(tokens['demo'], lease['id'], 'ACTIVE',
                            timeout=LEAD + 120)
    rsv = lease['reservations'][0]
    assert rsv['server_status'] == 'ACTIVE', rsv
    assert rsv['server_error'] is None
    woken = compute.admin.servers.get(server.id)
    assert woken.status == 'ACTIVE'
    agg = compute.aggregate(rid)
    assert agg.hosts == [compute.host_of(woken)]
    assert agg.metadata['climate:server'] == server.id
    assert agg.metadata['climate:owner'] == compute.project_id('demo')
    active = time.monotonic()

    end_now(api, tokens['demo'], lease)
    assert compute.gone(server.id)
    assert compute.aggregate(rid) is None
    print(f'\npre-created (server_id): shelved {shelved - t0:.1f} s after '
          f'the boot, ACTIVE on {agg.hosts[0]} {active - shelved:.1f} s '
          f'later (start {LEAD} s after the create), end '
          f'{time.monotonic() - active:.1f} s')


def test_a_boot_request_is_booted_as_the_user_and_shelved_at_the_end(
        cloud, api, tokens, compute):
    names = cloud.info['compute_hosts'][:3]
    register_hosts(api, tokens['admin'], names)
    lease = create(api, tokens['demo'], 'pre-boot', {
        'server': {'name': 'climate-it-boot', 'imageRef': compute.image,
                   'flavorRef': compute.flavor, 'networks': 'none'},
        'on_end': 'shelve'}, iso_in(LEAD), iso_in(600))
    rid = lease['reservations'][0]['id']
    rsv = lease['reservations'][0]
    assert rsv['server_id'], rsv
    server = compute.admin.servers.get(rsv['server_id'])
    # the user's own server, booted through the lease's trust
    assert server.tenant_id == compute.project_id('demo')
    assert server.metadata['climate:reservation'] == rid
    wait_server(compute, server.id, 'SHELVED_OFFLOADED')

    lease = api.wait_status(tokens['demo'], lease['id'], 'ACTIVE',
                            timeout=LEAD + 120)
    assert lease['reservations'][0]['server_status'] == 'ACTIVE'
    host = compute.host_of(compute.admin.servers.get(server.id))
    assert compute.aggregate(rid).hosts == [host]

    lease = end_now(api, tokens['demo'], lease)
    assert lease['reservations'][0]['server_status'] == 'SHELVED'
    wait_server(compute, server.id, 'SHELVED_OFFLOADED')
    assert compute.aggregate(rid) is None


def test_a_server_deleted_before_the_start_is_a_visible_error(
        cloud, api, tokens, compute):
    names = cloud.info['compute_hosts'][:3]
    register_hosts(api, tokens['admin'], names)
    server = compute.boot_active('demo', 1)[0]
    lease = create(api, tokens['demo'], 'pre-gone',
                   {'server_id': server.id}, iso_in(LEAD), iso_in(600))
    wait_server(compute, server.id, 'SHELVED_OFFLOADED')
    compute.nova('demo').servers.delete(server.id)
    wait_for(lambda: compute.gone(server.id), WAIT, message='deleted')

    lease = api.wait_status(tokens['demo'], lease['id'], 'ACTIVE',
                            timeout=LEAD + 120)
    rsv = lease['reservations'][0]
    assert rsv['server_error'] == (
        f'Server {server.id} was deleted before the lease started.')
    assert rsv['missing_resources'] is True and lease['degraded'] is True
    end_now(api, tokens['demo'], lease)
    assert compute.aggregate(rsv['id']) is None


def test_on_end_snapshot_keeps_an_image_and_deletes_the_server(
        cloud, api, tokens, compute):
    names = cloud.info['compute_hosts'][:3]
    register_hosts(api, tokens['admin'], names)
    server = compute.boot_active('demo', 1)[0]
    lease = create(api, tokens['demo'], 'pre-snap',
                   {'server_id': server.id, 'on_end': 'snapshot'},
                   iso_in(LEAD), iso_in(600))
    rid = lease['reservations'][0]['id']
    lease = api.wait_status(tokens['demo'], lease['id'], 'ACTIVE',
                            timeout=LEAD + 120)
    assert lease['reservations'][0]['server_status'] == 'ACTIVE'
    lease = end_now(api, tokens['demo'], lease)
    rsv = lease['reservations'][0]
    images = compute.images_named(f'reservation-{rid}')
    assert [i['id'] for i in images] == [rsv['snapshot_id']], images
    assert compute.gone(server.id)
    for image in images:
        compute.image_api.delete(f"/v2/images/{image['id']}")


def test_a_lease_deleted_before_its_start_takes_the_server_it_booted(
        cloud, api, tokens, compute):
    names = cloud.info['compute_hosts'][:3]
    register_hosts(api, tokens['admin'], names)
    lease = create(api, tokens['demo'], 'pre-dropped', {
        'server': {'name': 'climate-it-dropped', 'imageRef': compute.image,
                   'flavorRef': compute.flavor, 'networks': 'none'}},
        iso_in(3600), iso_in(7200))
    server_id = lease['reservations'][0]['server_id']
    assert server_id
    resp = api.call('DELETE', f"/v1/leases/{lease['id']}", tokens['demo'])
    assert resp.status_code == 204, resp.text
    wait_for(lambda: compute.gone(server_id), WAIT, message='deleted')
