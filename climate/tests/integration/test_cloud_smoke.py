"""Smoke of the plumbing between Climate and a real OpenStack.

1. A demo user's Keystone token reaches Climate's API through keystonemiddleware.
2. With its service credentials, Climate lists Nova's hypervisors and manages an aggregate.
3. A trust from a user lets Climate boot and delete a server in that user's project.
4. Climate deletes a trust even when its trustor has been disabled meanwhile.
"""

import time
import uuid

import pytest
import requests
from keystoneauth1 import adapter
from keystoneauth1 import exceptions as ks_exc

from climate.clients import keystone
from climate.clients import nova

WAIT = 120  # seconds any single server transition may take on the fake driver


def _wait(what, predicate, timeout=WAIT):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f'timed out after {timeout} s waiting for {what}')
        time.sleep(0.3)


def test_demo_token_reaches_api_through_keystonemiddleware(cloud, climate_services):
    leases = climate_services.url + '/v1/leases'
    assert requests.get(leases, timeout=30).status_code == 401

    demo = cloud.session('demo')
    resp = requests.get(leases, headers={'X-Auth-Token': demo.get_token()}, timeout=30)
    assert resp.status_code == 200, resp.text
    assert isinstance(resp.json()['leases'], list)

    # the same, finding Climate through the catalog (type "reservation")
    reservation = adapter.Adapter(demo, service_type='reservation', interface='public',
                                  region_name=cloud.region)
    assert reservation.get_endpoint() == cloud.info['climate']['url']
    assert reservation.get('/leases').json()['leases'] == resp.json()['leases']

    bad = requests.get(leases, headers={'X-Auth-Token': 'not-a-token'}, timeout=30)
    assert bad.status_code == 401


def test_service_credentials_list_hypervisors_and_manage_aggregate(cloud, climate_conf):
    client = nova.service_client(climate_conf)

    hypervisors = client.hypervisors.list()
    names = sorted(h.hypervisor_hostname for h in hypervisors)
    assert set(cloud.info['compute_hosts']) <= set(names)
    assert len({h.id for h in hypervisors}) == len(hypervisors)  # distinct hypervisors
    assert all(h.vcpus > 0 and h.memory_mb > 0 for h in hypervisors)

    host = cloud.info['compute_hosts'][0]
    name = 'climate-it-' + uuid.uuid4().hex[:8]
    aggregate = client.aggregates.create(name, None)
    try:
        client.aggregates.set_metadata(aggregate, {'climate:test': 'smoke'})
        aggregate = client.aggregates.add_host(aggregate, host)
        assert aggregate.hosts == [host]
        assert aggregate.metadata['climate:test'] == 'smoke'
        aggregate = client.aggregates.remove_host(aggregate, host)
        assert aggregate.hosts == []
    finally:
        client.aggregates.delete(aggregate)
    assert name not in {a.name for a in client.aggregates.list()}


def test_trust_scoped_session_boots_server_in_user_project(cloud, climate_conf):
    demo = cloud.session('demo')
    demo_user, demo_project = demo.get_user_id(), demo.get_project_id()

    trust_id = keystone.create_trust(demo, climate_conf)
    try:
        trust_sess = keystone.trust_session(trust_id, climate_conf)
        access = trust_sess.auth.get_access(trust_sess)
        assert access.trust_id == trust_id
        assert access.user_id == demo_user  # impersonation: Climate acts as the user
        assert access.project_id == demo_project

        client = nova.trust_client(trust_id, climate_conf)
        flavor = client.flavors.find(name=cloud.info['flavors'][0])
        image = adapter.Adapter(trust_sess, service_type='image', interface='public',
                                region_name=cloud.region).get(
            '/v2/images', params={'name': cloud.info['image']}).json()['images'][0]
        server = client.servers.create('climate-it-' + uuid.uuid4().hex[:8],
                                       image=image['id'], flavor=flavor.id, nics='none')

        def active():
            s = client.servers.get(server.id)
            assert s.status != 'ERROR', getattr(s, 'fault', s.status)
            return s if s.status == 'ACTIVE' else None
        booted = _wait(f'server {server.id} ACTIVE', active)
        assert booted.tenant_id == demo_project
        assert booted.user_id == demo_user

        # the user sees it in their own project
        demo_nova = nova.client(demo, climate_conf)
        assert server.id in {s.id for s in demo_nova.servers.list()}

        client.servers.delete(server.id)

        def deleted():
            try:
                client.servers.get(server.id)
            except Exception as e:  # novaclient NotFound
                return getattr(e, 'code', None) == 404
            return False
        _wait(f'server {server.id} deleted', deleted)
    finally:
        keystone.delete_trust(trust_id, conf=climate_conf)

    with pytest.raises(ks_exc.Unauthorized):
        keystone.trust_session(trust_id, climate_conf).get_token()
    keystone.delete_trust(trust_id, conf=climate_conf)  # already gone: harmless


def test_trust_deleted_when_trustor_is_disabled(cloud, climate_conf):
    """End-of-lease cleanup never depends on the user: with the trustor disabled the trust
    cannot be redeemed, and Climate's service session deletes it."""
    alt = cloud.session('alt')
    alt_user = alt.get_user_id()
    trust_id = keystone.create_trust(alt, climate_conf)
    identity = adapter.Adapter(cloud.session('admin'), service_type='identity',
                               interface='public', region_name=cloud.region)
    identity.patch(f'/users/{alt_user}', json={'user': {'enabled': False}})
    try:
        with pytest.raises((ks_exc.Unauthorized, ks_exc.Forbidden)):
            keystone.trust_session(trust_id, climate_conf).get_token()
        keystone.delete_trust(trust_id, conf=climate_conf)
    finally:
        identity.patch(f'/users/{alt_user}', json={'user': {'enabled': True}})
    assert identity.get(f'/OS-TRUST/trusts/{trust_id}', raise_exc=False).status_code == 404
