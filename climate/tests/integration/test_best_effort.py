"""Best-effort host leases on real Nova (``climate.manager.workers.hunts``).

None of the three hypervisors is in Climate's inventory: ``alt``'s
servers run on two of them, one of ``demo``'s (the reserving project) on
the third, which makes that one a receiver the hunt may not free.  The
conftest's Climate runs with ``[leases] best_effort_timeout = 45``
(room for two live migrations on a loaded machine).

1. Asking for 3 hosts: refused up front (409, Blazar's sentence first),
   no service disabled, no server moved.  Asking for 2: IN_PROGRESS,
   alt's servers live-migrated to the third host, both hosts registered
   (borrowed) and in the reservation's aggregate, ACTIVE; deleting the
   lease gives the borrowed hosts back.
2. A server Nova's scheduler cannot move (its flavor pins it to an
   aggregate of its host): the hunt fails until its deadline, TIMEDOUT,
   the hosts it closed re-enabled and nothing registered.
"""

import time

from climate.tests.functional.procs import wait_for
from climate.tests.integration.identity import iso_in
from climate.tests.integration.test_evacuation import boot_on
from climate.tests.integration.test_evacuation import only

V = '1.11'


def best_effort(count, name):
    return {'name': name, 'lease_type': 'best_effort',
            'end_date': iso_in(600),
            'reservations': [{'resource_type': 'physical:host',
                              'min': count, 'max': count}]}


def wait_status(api, token, lease_id, status, quiet=60, cap=300):
    """The lease (read at 1.11: TIMEDOUT is ERROR to older clients) once
    it is ``status``.

    No fixed deadline: a hunt is slow where the machine is.  The wait
    goes on while the lease says it is on its way (IN_PROGRESS, whose
    reason names the hunt's own deadline and its last pass, or
    STARTING), for ``quiet`` seconds after the last change it shows
    (status or reason), ``cap`` seconds at most; another status ends it
    at once.  A failure prints every state seen, with when."""
    began = time.monotonic()
    seen = []
    while True:
        lease = api.call('GET', '/v1/leases/%s' % lease_id, token,
                         version=V).json()['lease']
        now = time.monotonic()
        state = (lease['status'], lease['status_reason'])
        if not seen or seen[-1][1:] != state:
            seen.append((now - began,) + state)
        if lease['status'] == status:
            return lease
        moving = lease['status'] in ('IN_PROGRESS', 'STARTING')
        if not moving or now - began > cap or now - began - seen[-1][0] > \
                quiet:
            raise AssertionError(
                'lease %s not %s after %.0f s; it showed:\n%s' % (
                    lease_id, status, now - began, '\n'.join(
                        '  +%.1f s %s: %s' % item for item in seen)))
        time.sleep(0.2)


def services(compute, names):
    """{host: status} of the nova-compute services of ``names``."""
    return {s.host: s.status for s in compute.admin.services.list(
        binary='nova-compute') if s.host in names}


def inventory(api, tokens):
    return sorted(h['hypervisor_hostname'] for h in api.call(
        'GET', '/v1/os-hosts', tokens['admin']).json()['hosts'])


def test_best_effort_frees_hosts_by_live_migration(cloud, api, tokens,
                                                   compute):
    first, second, receiver = cloud.info['compute_hosts'][:3]
    moving = boot_on(compute, first, 1) + boot_on(compute, second, 1)
    # the reserving project's server makes the receiver ineligible
    demo_server = _boot_demo_on(compute, receiver)

    # more than can be freed: refused, nothing touched
    resp = api.call('POST', '/v1/leases', tokens['demo'],
                    best_effort(3, 'too-many'), version=V)
    assert resp.status_code == 409, resp.text
    message = resp.json()['error_message']
    assert message.startswith('Not enough hosts available: 0 host(s) match')
    assert 'Best effort: no 3 host(s) outside the inventory' in message
    assert set(services(compute, [first, second, receiver]).values()) == \
        {'enabled'}
    assert [compute.host_of(compute.admin.servers.get(s.id))
            for s in moving] == [first, second]
    assert inventory(api, tokens) == []

    posted = time.monotonic()
    resp = api.call('POST', '/v1/leases', tokens['demo'],
                    best_effort(2, 'two-hosts'), version=V)
    assert resp.status_code == 201, resp.text
    lease = resp.json()['lease']
    assert lease['status'] == 'IN_PROGRESS', lease
    rid = lease['reservations'][0]['id']
    lease = wait_status(api, tokens['demo'], lease['id'], 'ACTIVE')
    took = time.monotonic() - posted
    print(f'\nbest effort: 2 hosts freed (2 live migrations) and the lease '
          f'ACTIVE {took:.1f} s after the create')
    assert compute.hosts_of(rid) == sorted([first, second])
    for s in moving:
        now = compute.admin.servers.get(s.id)
        assert now.status == 'ACTIVE' and compute.host_of(now) == receiver
    assert compute.host_of(compute.admin.servers.get(demo_server.id)) == \
        receiver
    assert set(services(compute, [first, second]).values()) == {'enabled'}
    assert inventory(api, tokens) == sorted([first, second])

    # the borrowed hosts leave the inventory with the lease
    resp = api.call('DELETE', '/v1/leases/%s' % lease['id'], tokens['demo'])
    assert resp.status_code == 204, resp.text
    assert inventory(api, tokens) == []
    assert compute.aggregate(rid) is None
    assert not compute.hosts_of('freepool')


def _boot_demo_on(compute, host):
    with only(compute, host):
        [server] = compute.boot_active('demo', 1)
    assert compute.host_of(server) == host
    return server


def test_best_effort_times_out_and_gives_back(cloud, api, tokens, compute):
    first, second, receiver = cloud.info['compute_hosts'][:3]
    # a server whose flavor needs an aggregate only its host is in: Nova's
    # scheduler refuses every target the planner (which cannot know) picks
    pinned = compute.admin.flavors.create('climate-it-pinned', 512, 1, 1)
    pinned.set_keys({'aggregate_instance_extra_specs:climate_it': 'pin'})
    agg = compute.admin.aggregates.create('climate-it-pin', None)
    compute.admin.aggregates.add_host(agg.id, first)
    compute.admin.aggregates.set_metadata(agg.id, {'climate_it': 'pin'})
    default_flavor = compute.flavor
    [stuck] = boot_on(compute, first, 1, flavor=pinned.id)
    [loose] = boot_on(compute, second, 1, flavor=default_flavor)
    _boot_demo_on(compute, receiver)

    resp = api.call('POST', '/v1/leases', tokens['demo'],
                    best_effort(2, 'in-vain'), version=V)
    assert resp.status_code == 201, resp.text
    lease = resp.json()['lease']
    assert lease['status'] == 'IN_PROGRESS', lease
    # closed while it hunts
    wait_for(lambda: services(compute, [first])[first] == 'disabled', 20,
             interval=0.2, message='the hunted host closed')
    lease = wait_status(api, tokens['demo'], lease['id'], 'TIMEDOUT')
    assert 'best effort' in lease['status_reason'], lease
    assert first in lease['status_reason'], lease
    assert set(services(compute, [first, second]).values()) == {'enabled'}
    assert inventory(api, tokens) == []
    assert compute.host_of(compute.admin.servers.get(stuck.id)) == first
    assert compute.admin.servers.get(loose.id).status == 'ACTIVE'
    assert all(r['status'] == 'deleted' for r in lease['reservations'])
