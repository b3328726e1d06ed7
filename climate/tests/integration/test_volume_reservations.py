"""``virtual:volume`` on the harness's real Cinder, through Climate's API.

The cloud fixture brings Cinder up with two fake back ends of finite pools
(``fake1`` 100 GB, ``fake2`` 200 GB; ``CINDER_BACKENDS_GB``) and
cinder-scheduler running ``ClimateCinderFilter``; Climate's manager reads
the pools from Cinder (``[volumes] inventory = cinder``, every 2 s).

1. Capacity: a reservation of 30 GB (at most 3 volumes) on ``fake1``.
   During the lease the project's creates with the reservation's type
   (and the hint) land there up to 30 GB and 3 volumes, no further;
   another project's hint and the admin's use of the type are refused;
   creates without the reservation fill what is left of ``fake1`` (70 GB)
   and no more, while the reservation can still use its unused part of a
   pool that is otherwise full.  At the end (``delete``) the reservation's
   volumes and type are gone, the others stay.
2. Pre-created volumes: made as the user at the start (one from an image,
   one attached to a server during the lease), ``snapshot`` at the end
   (each volume detached, uploaded to an image of the project, deleted)
   beside a reservation whose volume is ``retain``-ed (kept, retyped).
3. cinder-api stopped at the start: the start is retried, the lease says
   why, and completes once Cinder is back.
"""

import json
import time
import uuid

import pytest
from cinderclient import client as cinder_client

from climate.tests.functional.procs import wait_for
from climate.tests.integration.conftest import harness
from climate.tests.integration.identity import iso_in

WAIT = 60           # seconds one volume may take to settle on the fake driver
#: Seconds from a lease's create to its start: room to see nothing before.
LEAD = 6


def _fake(n):
    return f'#fake{n}'


class Cinder:
    """Cinder as the harness's users see it."""

    def __init__(self, cloud):
        self.cloud = cloud
        self.clients = {}
        self.admin = self.client('admin')

    def client(self, who):
        if who not in self.clients:
            self.clients[who] = cinder_client.Client(
                '3.50', session=self.cloud.session(who),
                region_name=self.cloud.region, connect_retries=3)
        return self.clients[who]

    def project_id(self, who):
        return self.cloud.session(who).get_project_id()

    def pool(self, backend):
        """The full name of the pool of back end ``fake<n>``."""
        return next(p.name for p in self.admin.pools.list()
                    if p.name.endswith(_fake(backend)))

    def free(self, pool):
        found = {p.name: p for p in self.admin.pools.list(detailed=True)}
        return found[pool].free_capacity_gb

    def wait_free(self, pool, gb):
        """Until cinder-scheduler knows ``gb`` free on ``pool`` (deletes
        reach it with the back end's next report, every few seconds)."""
        wait_for(lambda: self.free(pool) == gb, 30, interval=0.5,
                 message=lambda: f'{gb} GB free on {pool} (now '
                                 f'{self.free(pool)})')

    def get(self, vid):
        return self.admin.volumes.get(vid)

    def create(self, who, size, **kw):
        """A volume of ``who``, waited for until available or error;
        returned as the admin sees it (with its host)."""
        volume = self.client(who).volumes.create(
            size, name='climate-it-' + uuid.uuid4().hex[:6], **kw)
        return wait_for(lambda: (lambda v: v if v.status in (
            'available', 'error') else None)(self.get(volume.id)), WAIT,
            interval=0.3, message=f'volume {volume.id} settled')

    def delete(self, *volumes):
        for v in volumes:
            self.admin.volumes.delete(v.id)
        for v in volumes:
            wait_for(lambda v=v: self.gone(v.id), WAIT, interval=0.3,
                     message=f'volume {v.id} deleted')

    def gone(self, vid):
        from cinderclient import exceptions as cinder_exc
        try:
            self.admin.volumes.get(vid)
        except cinder_exc.NotFound:
            return True
        return False

    def of_reservation(self, rid):
        """Every volume Climate made for reservation ``rid``."""
        return self.admin.volumes.list(search_opts={
            'all_tenants': 1, 'metadata': {'climate:reservation': rid}})

    def vtype(self, rid):
        found = [t for t in self.admin.volume_types.list(is_public=None)
                 if t.name == 'reservation:' + rid]
        return found[0] if found else None


def host(volume):
    return getattr(volume, 'os-vol-host-attr:host', None)


@pytest.fixture
def cinder(cloud):
    return Cinder(cloud)


@pytest.fixture
def pools(api, tokens, cinder):
    """Climate's volume pools, once its manager has read them from Cinder
    (Climate's tables were just emptied)."""
    names = {cinder.pool(1), cinder.pool(2)}

    def synced():
        resp = api.call('GET', '/v1/volume-pools', tokens['admin'],
                        version='1.5')
        assert resp.status_code == 200, resp.text
        found = {p['name']: p for p in resp.json()['volume_pools']}
        return found if names <= set(found) else None
    found = wait_for(synced, 30, interval=0.5,
                     message='the volume pools read from Cinder')
    assert found[cinder.pool(1)]['capacity_gb'] == 100
    assert found[cinder.pool(2)]['capacity_gb'] == 200
    return found


def volume_lease(api, token, name, reservations, start, end):
    resp = api.call('POST', '/v1/leases', token, {
        'name': name, 'start_date': start, 'end_date': end, 'events': [],
        'reservations': [dict(r, resource_type='virtual:volume')
                         for r in reservations]})
    assert resp.status_code == 201, resp.text
    return resp.json()['lease']


def by_action(lease):
    """The lease's ``snapshot`` and ``retain`` reservations."""
    found = {r['on_end']: r for r in lease['reservations']}
    return found['snapshot'], found['retain']


def end_now(api, token, lease):
    return api.end_now(token, lease['id'], timeout=120)


def test_reserved_capacity_on_real_cinder(cloud, api, tokens, cinder, pools):
    t0 = time.monotonic()
    fake1 = cinder.pool(1)
    demo = cinder.project_id('demo')
    lease = volume_lease(api, tokens['demo'], 'disks', [{
        'size_gb': 30, 'count': 3,
        'resource_properties': json.dumps(['=', '$backend', 'fake1'])}],
        'now', iso_in(600))
    rid = lease['reservations'][0]['id']
    lease = api.wait_status(tokens['demo'], lease['id'], 'ACTIVE', timeout=60)
    rsv = lease['reservations'][0]
    assert rsv['pool'] == fake1
    assert (rsv['size_gb'], rsv['count'], rsv['volume_ids']) == (30, 3, [])
    rtype = 'reservation:' + rid
    vtype = cinder.vtype(rid)
    specs = vtype.get_keys()
    assert not vtype.is_public
    assert {k: specs[k] for k in (
        'climate:reservation', 'climate:owner', 'climate:pool',
        'climate:reserved_gb', 'climate:max_volumes',
        'volume_backend_name')} == {
        'climate:reservation': rid, 'climate:owner': demo,
        'climate:pool': fake1, 'climate:reserved_gb': '30',
        'climate:max_volumes': '3', 'volume_backend_name': 'fake1'}
    assert specs['climate:start'] < specs['climate:end']
    started = time.monotonic()

    # the project's creates on the reservation: up to 30 GB ...
    a = cinder.create('demo', 10, volume_type=rtype,
                      scheduler_hints={'reservation': rid})
    b = cinder.create('demo', 19, volume_type=rtype)
    assert (a.status, b.status) == ('available', 'available')
    assert host(a) == host(b) == fake1
    over = cinder.create('demo', 2, volume_type=rtype)
    assert over.status == 'error' and host(over) is None
    d = cinder.create('demo', 1, volume_type=rtype)
    assert (d.status, host(d)) == ('available', fake1)        # 30 of 30
    # ... and 3 volumes: 21 GB in 3 volumes, a fourth is refused
    cinder.delete(a, over)
    e = cinder.create('demo', 1, volume_type=rtype)
    assert e.status == 'available'
    fourth = cinder.create('demo', 1, volume_type=rtype)
    assert fourth.status == 'error'
    # another project's hint; the admin, who sees the private type
    alt = cinder.create('alt', 1, scheduler_hints={'reservation': rid})
    admin = cinder.create('admin', 1, volume_type=rtype)
    assert (alt.status, admin.status) == ('error', 'error')
    cinder.delete(fourth, alt, admin)
    reserved_done = time.monotonic()

    # creates without the reservation (a public type of fake1's): the
    # 70 GB of fake1 not reserved, no more
    pinned = cinder.admin.volume_types.create('climate-it-fake1')
    pinned.set_keys({'volume_backend_name': 'fake1'})
    cinder.wait_free(fake1, 100 - 21)
    g = cinder.create('demo', 60, volume_type=pinned.name)
    assert (g.status, host(g)) == ('available', fake1)
    h = cinder.create('alt', 11, volume_type=pinned.name)
    assert h.status == 'error'                  # 60 + 11 > 100 - 30
    i = cinder.create('alt', 10, volume_type=pinned.name)
    assert (i.status, host(i)) == ('available', fake1)
    # fake1 holds 21 + 70 GB; the reservation's 9 GB left are its own
    cinder.delete(h, e)
    cinder.wait_free(fake1, 100 - 20 - 70)
    j = cinder.create('demo', 10, volume_type=rtype)
    assert (j.status, host(j)) == ('available', fake1)
    full = cinder.create('demo', 1, volume_type=pinned.name)
    assert full.status == 'error'
    cinder.delete(full)
    unreserved_done = time.monotonic()

    end_now(api, tokens['demo'], lease)
    ended = time.monotonic()
    for v in (b, d, j):
        assert cinder.gone(v.id), v.id
    assert cinder.vtype(rid) is None
    assert cinder.get(g.id).status == cinder.get(i.id).status == 'available'
    print(f'\nvolume capacity: ACTIVE {started - t0:.1f} s after the '
          f'create, reserved creates {reserved_done - started:.1f} s, '
          f'unreserved {unreserved_done - reserved_done:.1f} s, end '
          f'{ended - unreserved_done:.1f} s')


def test_precreated_volumes_snapshot_and_retain(cloud, api, tokens, cinder,
                                                pools):
    from climate.tests.integration.compute import Compute
    t0 = time.monotonic()
    compute = Compute(cloud)
    demo = cinder.project_id('demo')
    start, due = iso_in(LEAD), time.monotonic() + LEAD
    lease = volume_lease(api, tokens['demo'], 'made-for-me', [
        {'on_end': 'snapshot', 'volumes': [
            {'name': 'data', 'size_gb': 2},
            {'name': 'system', 'size_gb': 1, 'image_id': compute.image}]},
        {'on_end': 'retain', 'volumes': [{'name': 'keep', 'size_gb': 1}]},
    ], start, iso_in(600))
    snap, keep = by_action(lease)
    assert (snap['size_gb'], snap['count']) == (3, 2)
    assert not cinder.of_reservation(snap['id'])
    # a server to attach one of them to, meanwhile
    server = compute.boot_active('demo', 1)[0]

    lease = api.wait_status(tokens['demo'], lease['id'], 'ACTIVE',
                            timeout=LEAD + 60)
    active = time.monotonic()
    # (the start date is to the second: up to 1 s early)
    assert active - due < 45, 'volumes made %.1f s after the start' % (
        active - due)
    snap, keep = by_action(lease)
    made = {v.id: v for v in cinder.of_reservation(snap['id'])}
    assert sorted(made) == sorted(snap['volume_ids'])
    assert sorted(v.name for v in made.values()) == ['data', 'system']
    for v in made.values():
        assert v.status == 'available'
        assert v.volume_type == 'reservation:' + snap['id']
        # the user's own volumes, made through the lease's trust
        assert getattr(v, 'os-vol-tenant-attr:tenant_id') == demo
        assert host(v) == snap['pool']
    assert [v.name for v in made.values() if v.bootable == 'true'] == [
        'system']
    [kept] = cinder.of_reservation(keep['id'])
    assert kept.status == 'available'
    data = next(v for v in made.values() if v.name == 'data')
    compute.nova('demo').volumes.create_server_volume(server.id, data.id)
    wait_for(lambda: cinder.get(data.id).status == 'in-use', WAIT,
             message='volume attached')

    lease = end_now(api, tokens['demo'], lease)
    ended = time.monotonic()
    snap, keep = by_action(lease)
    # snapshot: every volume uploaded to an image of the project, deleted
    for vid in made:
        assert cinder.gone(vid), vid
    images = compute.image_api.get('/v2/images', params={
        'climate:reservation': snap['id']}).json()['images']
    assert sorted(i['id'] for i in images) == sorted(snap['image_ids'])
    assert sorted(i['climate:volume'] for i in images) == sorted(made)
    for image in images:
        assert image['name'] == (
            f"reservation-{snap['id']}-{image['climate:volume']}")
        assert (image['owner'], image['status'], image['visibility']) == (
            demo, 'active', 'private')
    # retain: the volume stays, of the default type, without Climate's
    # metadata; both types are gone
    kept = cinder.get(kept.id)
    assert kept.status == 'available'
    assert kept.volume_type == '__DEFAULT__'
    assert 'climate:reservation' not in kept.metadata
    assert cinder.vtype(snap['id']) is None
    assert cinder.vtype(keep['id']) is None
    print(f'\npre-created: 3 volumes available and the lease ACTIVE '
          f'{active - due:.1f} s after its start ({active - t0:.1f} s after '
          f'the create, a server booted meanwhile); end (detach, 2 uploads, '
          f'retype) {ended - active:.1f} s')


def test_start_waits_for_cinder(cloud, api, tokens, cinder, pools):
    """cinder-api stopped at the start: attempts fail naming Cinder, the
    lease says so; once it is back the volume is made."""
    status, out = harness('stop', 'cinder-api', timeout=120)
    assert status == 0, out
    try:
        lease = volume_lease(api, tokens['demo'], 'through-an-outage', [
            {'volumes': [{'name': 'late', 'size_gb': 1}]}],
            'now', iso_in(600))
        rid = lease['reservations'][0]['id']

        def failed_twice():
            seen = api.lease(tokens['demo'], lease['id'])
            start = next(e for e in seen['events']
                         if e['event_type'] == 'start_lease')
            return seen if start['attempts'] >= 2 and start['last_error'] \
                else None
        seen = wait_for(failed_twice, 60, interval=0.5,
                        message='two failed start attempts')
        start = next(e for e in seen['events']
                     if e['event_type'] == 'start_lease')
        assert 'Cinder' in start['last_error'], start
        assert seen['status'] != 'ACTIVE'
        assert 'start_lease attempt' in (seen['status_reason'] or ''), seen
        assert 'Cinder' in seen['status_reason']
    finally:
        status, out = harness('start', timeout=300)
        assert status == 0, out
    back = time.monotonic()
    lease = api.wait_status(tokens['demo'], lease['id'], 'ACTIVE',
                            timeout=120)
    assert not lease['status_reason'], lease
    [volume] = cinder.of_reservation(rid)
    assert volume.status == 'available'
    assert lease['reservations'][0]['volume_ids'] == [volume.id]
    print(f'\nACTIVE {time.monotonic() - back:.1f} s after cinder-api was '
          f'back')
    end_now(api, tokens['demo'], lease)
    assert cinder.gone(volume.id)
