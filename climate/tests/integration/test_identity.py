"""Authentication and project isolation with real Keystone tokens.

climate-api runs keystonemiddleware against the harness's Keystone; the
users are the harness's ``demo`` (member of demo), ``alt`` (member of alt),
``reader`` (reader in demo) and ``admin``.

1. No token, a garbage token, a revoked token, a token whose delegation
   expired: 401.
2. A member of another project can neither list, show, update nor delete a
   lease, even knowing its id: 404, as for a lease that does not exist.
3. A reader lists and shows its project's leases and cannot write (403
   naming the rule).
4. A member cannot use admin routes; an admin sees and filters every
   project.
5. Any member of the lease's project updates and deletes it, not only its
   creator.
"""

import datetime
import time
import uuid

from keystoneauth1 import adapter
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

from climate.tests.integration.identity import assert_error
from climate.tests.integration.identity import keystone_admin  # noqa: F401


def _token(cloud, who):
    return cloud.session(who).get_token()


def test_requests_without_a_valid_token_are_401(cloud, api, keystone_admin):
    for token in (None, 'not-a-token', 'gAAAAAB' + 'x' * 180):
        resp = api.call('GET', '/v1/leases', token)
        assert_error(resp, 401)
        assert 'WWW-Authenticate' in resp.headers
        resp = api.call('POST', '/v1/leases', token,
                        {'name': 'x', 'start_date': 'now',
                         'end_date': '2090-01-01 00:00',
                         'reservations': [{'resource_type': 'noop'}]})
        assert_error(resp, 401)

    # revoked before Climate ever saw it (a token Climate validated is
    # cached by keystonemiddleware for token_cache_time)
    demo = cloud.session('demo')
    revoked = ks_session.Session(auth=v3.Password(
        auth_url=cloud.auth_url, **cloud.users['demo'])).get_token()
    keystone_admin.revoke(revoked)
    assert_error(api.call('GET', '/v1/leases', revoked), 401)

    # a token whose delegation expired: Keystone's tokens here live a day,
    # a trust-scoped one dies with its trust
    trustee = cloud.session('alt')
    access = demo.auth.get_access(demo)
    expires = (datetime.datetime.now(datetime.timezone.utc) +
               datetime.timedelta(seconds=3))
    identity = adapter.Adapter(demo, service_type='identity',
                               interface='public', region_name=cloud.region)
    trust = identity.post('/OS-TRUST/trusts', json={'trust': {
        'trustor_user_id': access.user_id,
        'trustee_user_id': trustee.get_user_id(),
        'project_id': access.project_id, 'impersonation': False,
        'roles': [{'id': r} for r in access.role_ids],
        'expires_at': expires.strftime('%Y-%m-%dT%H:%M:%S.%fZ')}}).json()
    expiring = ks_session.Session(auth=v3.Password(
        auth_url=cloud.auth_url, username='alt',
        password=cloud.users['alt']['password'], user_domain_name='Default',
        trust_id=trust['trust']['id'])).get_token()
    time.sleep(max(0.0, (expires - datetime.datetime.now(
        datetime.timezone.utc)).total_seconds()) + 1.5)
    assert_error(api.call('GET', '/v1/leases', expiring), 401)

    # a valid one still works: the refusals above were about the tokens
    assert api.call('GET', '/v1/leases', demo.get_token()).status_code == 200


def test_other_projects_lease_does_not_exist_for_a_member(cloud, api):
    demo, alt = _token(cloud, 'demo'), _token(cloud, 'alt')
    mine = api.create(demo, 'demo-lease')
    theirs = api.create(alt, 'alt-lease')
    assert mine['project_id'] == cloud.session('demo').get_project_id()
    assert mine['user_id'] == cloud.session('demo').get_user_id()

    listed = api.call('GET', '/v1/leases', alt).json()['leases']
    assert [lease['id'] for lease in listed] == [theirs['id']]
    listed = api.call('GET', '/v1/leases', demo).json()['leases']
    assert [lease['id'] for lease in listed] == [mine['id']]

    path = '/v1/leases/%s' % mine['id']
    missing = '/v1/leases/%s' % uuid.uuid4()
    for method, body in (('GET', None), ('PUT', {'name': 'stolen'}),
                         ('DELETE', None)):
        known = assert_error(api.call(method, path, alt, body), 404,
                             'LeaseNotFound')
        unknown = assert_error(api.call(method, missing, alt, body), 404,
                               'LeaseNotFound')
        # the same answer as for an id that exists nowhere
        assert (known['error_message'].replace(mine['id'], 'ID') ==
                unknown['error_message'].replace(missing.rsplit('/')[-1],
                                                 'ID'))
    # even through the 1.1 filters
    listed = api.call('GET', '/v1/leases?name=demo-lease', alt,
                      version='1.1').json()['leases']
    assert listed == []

    after = api.lease(demo, mine['id'])
    assert after['name'] == 'demo-lease' and after['updated_at'] is None


def test_reader_reads_its_project_and_cannot_write(cloud, api):
    demo, reader = _token(cloud, 'demo'), _token(cloud, 'reader')
    lease = api.create(demo, 'read-me')
    path = '/v1/leases/%s' % lease['id']

    listed = api.call('GET', '/v1/leases', reader).json()['leases']
    assert [item['id'] for item in listed] == [lease['id']]
    assert api.lease(reader, lease['id'])['name'] == 'read-me'

    for method, target, body, rule in (
            ('POST', '/v1/leases', {'name': 'by-reader', 'start_date': 'now',
                                    'end_date': '2090-01-01 00:00',
                                    'reservations': [
                                        {'resource_type': 'noop'}]},
             'create'),
            ('PUT', path, {'name': 'by-reader'}, 'update'),
            ('DELETE', path, None, 'delete')):
        assert_error(api.call(method, target, reader, body), 403,
                     'PolicyNotAuthorized',
                     "Policy doesn't allow climate:leases:%s to be "
                     "performed." % rule)
    assert [item['id'] for item in api.call(
        'GET', '/v1/leases', demo).json()['leases']] == [lease['id']]
    assert api.lease(demo, lease['id'])['updated_at'] is None


def test_admin_routes_are_for_admins(cloud, api):
    demo, alt, admin = (_token(cloud, who) for who in ('demo', 'alt',
                                                       'admin'))
    alt_project = cloud.session('alt').get_project_id()
    api.create(demo, 'demo-one')
    theirs = api.create(alt, 'alt-one')

    assert_error(api.call('GET', '/v1/leases?project_id=%s' % alt_project,
                          demo, version='1.1'), 403, 'PolicyNotAuthorized',
                 'climate:leases:list:all_projects')

    everything = api.call('GET', '/v1/leases', admin).json()['leases']
    assert {lease['name'] for lease in everything} == {'demo-one', 'alt-one'}
    filtered = api.call('GET', '/v1/leases?project_id=%s' % alt_project,
                        admin, version='1.1').json()['leases']
    assert [lease['id'] for lease in filtered] == [theirs['id']]
    # admin manages another project's lease
    resp = api.update(admin, theirs['id'],
                      {'name': 'renamed-by-admin'})
    assert resp.status_code == 200, resp.text
    assert resp.json()['lease']['project_id'] == alt_project


def test_any_member_of_the_project_updates_and_deletes(cloud, api,
                                                       keystone_admin):
    demo = cloud.session('demo')
    colleague_id, colleague = keystone_admin.temporary_user('demo')
    lease = api.create(demo.get_token(), 'shared')
    assert lease['trust_id']

    resp = api.update(colleague.get_token(), lease['id'],
                      {'name': 'shared-2'})
    assert resp.status_code == 200, resp.text
    updated = resp.json()['lease']
    assert updated['name'] == 'shared-2'
    # still the creator's lease and trust
    assert updated['user_id'] == demo.get_user_id() != colleague_id
    assert updated['trust_id'] == lease['trust_id']

    resp = api.call('DELETE', '/v1/leases/%s' % lease['id'],
                    colleague.get_token())
    assert resp.status_code == 204, resp.text
    assert keystone_admin.trust(lease['trust_id']) is None
