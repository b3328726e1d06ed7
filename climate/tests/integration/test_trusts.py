"""Lease trusts against the harness's Keystone.

1. A lease gets a trust from its creator to Climate's service user: the
   creator's roles in the project, impersonation on; redeeming it acts as
   the creator.  Deleting the lease deletes the trust.
2. A trust Keystone refuses (a token from an application credential may not
   delegate) is a 403 with Keystone's reason, and nothing is written.
3. A create that fails after the trust was made (name taken) leaves no trust.
4. A lease ends and gives everything back, and its trust is deleted, when
   it ends normally, when its creator was disabled meanwhile, and when its
   trust was deleted behind Climate's back.
"""

import uuid

from keystoneauth1 import adapter
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

from climate.clients import keystone
from climate import states
from climate.tests.integration.identity import assert_error
from climate.tests.integration.identity import iso_in
from climate.tests.integration.identity import keystone_admin  # noqa: F401

SHORT = 6  # seconds a lease that must end during a test lasts


def _short_lease(api, token, name):
    return api.create(token, name, start='now', end=iso_in(SHORT))


def _assert_ended(api, admin_token, lease):
    ended = api.wait_status(admin_token, lease['id'], states.TERMINATED)
    assert {e['event_type'] for e in ended['events']} >= {'start_lease',
                                                          'end_lease'}
    assert {e['status'] for e in ended['events']} == {states.DONE}
    assert [r['status'] for r in ended['reservations']] == [
        states.RES_DELETED]
    assert ended['status_reason'] is None
    return ended


def test_lease_trust_delegates_the_creators_roles(cloud, api, keystone_admin,
                                                  climate_conf):
    demo = cloud.session('demo')
    lease = api.create(demo.get_token(), 'trusted')
    trust = keystone_admin.trust(lease['trust_id'])
    assert trust is not None
    climate_user = keystone_admin.user_id(cloud.users['climate']['username'])
    assert trust['trustor_user_id'] == demo.get_user_id()
    assert trust['trustee_user_id'] == climate_user
    assert trust['project_id'] == demo.get_project_id()
    assert trust['impersonation'] is True
    assert trust['expires_at'] is None
    assert 'member' in keystone_admin.trust_roles(lease['trust_id'])

    # what a plugin gets: Climate's credentials acting as the creator
    sess = keystone.trust_session(lease['trust_id'], climate_conf)
    access = sess.auth.get_access(sess)
    assert access.user_id == demo.get_user_id()
    assert access.project_id == demo.get_project_id()

    resp = api.call('DELETE', '/v1/leases/%s' % lease['id'],
                    demo.get_token())
    assert resp.status_code == 204, resp.text
    assert keystone_admin.trust(lease['trust_id']) is None


def test_refused_trust_is_403_with_keystones_reason_and_writes_nothing(
        cloud, api, keystone_admin):
    # a user of its own: other runs may hold trusts of demo meanwhile
    user_id, user = keystone_admin.temporary_user('demo')
    identity = adapter.Adapter(user, service_type='identity',
                               interface='public', region_name=cloud.region)
    credential = identity.post(
        '/users/%s/application_credentials' % user_id,
        json={'application_credential': {
            'name': 'climate-it-' + uuid.uuid4().hex[:8]}}).json()[
        'application_credential']
    try:
        delegated = ks_session.Session(auth=v3.ApplicationCredential(
            auth_url=cloud.auth_url,
            application_credential_id=credential['id'],
            application_credential_secret=credential['secret']))
        token = delegated.get_token()
        # the token itself is good: it may read
        assert api.call('GET', '/v1/leases', token).status_code == 200

        resp = api.call('POST', '/v1/leases', token,
                        {'name': 'delegated', 'start_date': '2090-01-01 00:00',
                         'end_date': '2090-01-02 00:00',
                         'reservations': [{'resource_type': 'noop'}]})
        body = assert_error(resp, 403, 'TrustRefused')
        assert 'Delegated tokens cannot manage trusts' in body[
            'error_message']
        assert user.get_project_id() in body['error_message']
    finally:
        identity.delete('/users/%s/application_credentials/%s' % (
            user_id, credential['id']))
    admin = cloud.session('admin').get_token()
    assert api.call('GET', '/v1/leases', admin).json()['leases'] == []
    assert keystone_admin.trusts_of(user_id) == []


def test_failed_create_leaves_no_trust_behind(cloud, api, keystone_admin):
    user_id, user = keystone_admin.temporary_user('demo')
    first = api.create(user.get_token(), 'once')
    resp = api.call('POST', '/v1/leases', user.get_token(),
                    {'name': 'once', 'start_date': '2090-01-01 00:00',
                     'end_date': '2090-01-02 00:00',
                     'reservations': [{'resource_type': 'noop'}]})
    assert_error(resp, 409, 'LeaseNameAlreadyExists')
    trusts = keystone_admin.trusts_of(user_id)
    assert [t['id'] for t in trusts] == [first['trust_id']]


def test_trust_is_deleted_when_the_lease_ends(cloud, api, keystone_admin):
    demo = cloud.session('demo')
    lease = _short_lease(api, demo.get_token(), 'ends')
    assert keystone_admin.trust(lease['trust_id']) is not None
    ended = _assert_ended(api, cloud.session('admin').get_token(), lease)
    assert ended['trust_id'] is None
    assert keystone_admin.trust(lease['trust_id']) is None


def test_lease_of_a_disabled_creator_still_ends(cloud, api, keystone_admin):
    user_id, creator = keystone_admin.temporary_user('demo')
    lease = _short_lease(api, creator.get_token(), 'creator-leaves')
    assert lease['user_id'] == user_id
    assert keystone_admin.trust(lease['trust_id']) is not None
    keystone_admin.set_enabled(user_id, False)

    ended = _assert_ended(api, cloud.session('admin').get_token(), lease)
    assert ended['trust_id'] is None
    assert keystone_admin.trust(lease['trust_id']) is None


def test_lease_whose_trust_was_deleted_still_ends(cloud, api, keystone_admin):
    demo = cloud.session('demo')
    lease = _short_lease(api, demo.get_token(), 'trust-gone')
    keystone_admin.delete_trust(lease['trust_id'])

    ended = _assert_ended(api, cloud.session('admin').get_token(), lease)
    assert ended['trust_id'] is None  # gone is gone: nothing left to retry


def test_sweeper_deletes_spent_and_orphan_trusts(cloud, api, keystone_admin,
                                                 climate_config):
    """A trust Keystone could not delete when its lease ended goes at the
    next pass; a trust no lease names goes after two passes; a live lease's
    trust stays."""
    import pymysql
    from oslo_config import cfg

    from climate import conf as climate_conf_opts  # noqa: F401 - options
    from climate import context as climate_context
    from climate.db import api as db_api
    from climate.manager.workers import trust_sweeper

    conf = cfg.CONF
    conf(['--config-file', str(climate_config)], project='climate',
         default_config_files=[])
    conf.set_override('sweep_orphan_trusts', True, 'manager')
    db_api.configure(connection=cloud.db_url(cloud.climate_db))
    try:
        demo = cloud.session('demo')
        token = demo.get_token()
        live = api.create(token, 'sweep-live')
        spent_lease = api.create(token, 'sweep-spent')
        orphan = keystone.create_trust(demo, conf)
        # as if Keystone had been down when this lease ended
        db = pymysql.connect(host='127.0.0.1', user='root',
                             database=cloud.climate_db, autocommit=True)
        with db.cursor() as cur:
            cur.execute("UPDATE leases SET status = 'TERMINATED' "
                        "WHERE id = %s", (spent_lease['id'],))
        db.close()

        sweeper = trust_sweeper.TrustSweeper(conf)
        first = sweeper.run_once()
        assert first == [spent_lease['trust_id']]
        assert keystone_admin.trust(spent_lease['trust_id']) is None
        assert db_api.leases_with_spent_trust(
            climate_context.admin_context()) == []
        # the orphan was seen unused once: deleted at the second pass
        assert keystone_admin.trust(orphan) is not None
        assert sweeper.run_once() == [orphan]
        assert keystone_admin.trust(orphan) is None
        assert keystone_admin.trust(live['trust_id']) is not None
    finally:
        conf.clear_override('sweep_orphan_trusts', 'manager')
        db_api.get_engine().dispose()
        conf.reset()
