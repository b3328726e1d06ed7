"""Helpers of the identity tests: Climate's API with real Keystone tokens,
and Keystone as its admin sees it (temporary users, trusts).

Tests make their own users when they disable or delete one: the harness's
``demo``/``alt``/``reader`` may be in use by another test run at the same
time.
"""

import datetime
import time
import uuid

import pytest
import requests
from keystoneauth1 import adapter
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

WAIT = 150  # seconds a lease may take to start and end after it is due


def iso_in(seconds):
    when = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(
        seconds=seconds)
    return when.strftime('%Y-%m-%dT%H:%M:%SZ')


def lease_body(name, start='2090-01-01 00:00', end='2090-01-02 00:00'):
    return {'name': name, 'start_date': start, 'end_date': end,
            'reservations': [{'resource_type': 'noop'}], 'events': []}


class Api:
    """climate-api over HTTP; every call names the token it uses."""

    def __init__(self, url):
        self.url = url

    def call(self, method, path, token=None, body=None, version=None,
             headers=None):
        all_headers = dict(headers or {})
        if token is not None:
            all_headers['X-Auth-Token'] = token
        if version is not None:
            all_headers['OpenStack-API-Version'] = 'reservation %s' % version
        return requests.request(method, self.url + path, json=body,
                                headers=all_headers, timeout=60)

    def create(self, token, name, **dates):
        resp = self.call('POST', '/v1/leases', token,
                         lease_body(name, **dates))
        assert resp.status_code == 201, resp.text
        return resp.json()['lease']

    def lease(self, token, lease_id):
        resp = self.call('GET', '/v1/leases/%s' % lease_id, token)
        assert resp.status_code == 200, resp.text
        return resp.json()['lease']

    def update(self, token, lease_id, body, busy_for=60):
        """PUT the lease.  A lease one of whose events is running answers
        409 LeaseBusy ("try again in a moment"): asked again, as a client
        would, for up to ``busy_for`` seconds.  Any other answer is
        returned as it is."""
        deadline = time.monotonic() + busy_for
        while True:
            resp = self.call('PUT', '/v1/leases/%s' % lease_id, token, body)
            if resp.status_code != 409 or \
                    'LeaseBusy' not in resp.text or \
                    time.monotonic() > deadline:
                return resp
            time.sleep(0.5)

    def end_now(self, token, lease_id, timeout=120, busy_for=60):
        """Move the lease's end two seconds ahead and wait until it is
        TERMINATED."""
        resp = self.update(token, lease_id, {'end_date': iso_in(2)},
                           busy_for=busy_for)
        assert resp.status_code == 200, resp.text
        return self.wait_status(token, lease_id, 'TERMINATED',
                                timeout=timeout)

    def wait_status(self, token, lease_id, status, timeout=WAIT):
        deadline = time.monotonic() + timeout
        while True:
            lease = self.lease(token, lease_id)
            if lease['status'] == status:
                return lease
            if time.monotonic() > deadline:
                pytest.fail('lease %s still %s after %d s (reason: %s), not %s'
                            % (lease_id, lease['status'], timeout,
                               lease['status_reason'], status))
            time.sleep(0.3)


def assert_error(resp, status, name=None, text=None):
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert body['error_code'] == status
    if name is not None:
        assert body['error_name'] == name, body
    if text is not None:
        assert text in body['error_message'], body
    return body


class Keystone:
    """Keystone through the harness's admin."""

    def __init__(self, cloud):
        self.cloud = cloud
        self.identity = adapter.Adapter(
            cloud.session('admin'), service_type='identity',
            interface='public', region_name=cloud.region)
        self._users = []

    def project_id(self, name):
        return self._id_of('projects', name)

    def _id_of(self, kind, name):
        found = self.identity.get('/%s' % kind, params={'name': name})
        return found.json()[kind][0]['id']

    def role_id(self, name):
        return self._id_of('roles', name)

    def user_id(self, name):
        return self._id_of('users', name)

    def temporary_user(self, project, role='member'):
        """A new user with ``role`` in ``project``; returns (id, session).
        Deleted by :meth:`cleanup`."""
        name = 'climate-it-' + uuid.uuid4().hex[:10]
        password = uuid.uuid4().hex
        user = self.identity.post('/users', json={'user': {
            'name': name, 'password': password, 'domain_id': 'default',
            'enabled': True}}).json()['user']
        self._users.append(user['id'])
        self.identity.put('/projects/%s/users/%s/roles/%s' % (
            self.project_id(project), user['id'], self.role_id(role)))
        sess = ks_session.Session(auth=v3.Password(
            auth_url=self.cloud.auth_url, username=name, password=password,
            user_domain_id='default', project_name=project,
            project_domain_id='default'))
        return user['id'], sess

    def set_enabled(self, user_id, enabled):
        self.identity.patch('/users/%s' % user_id,
                            json={'user': {'enabled': enabled}})

    def trust(self, trust_id):
        """The trust as Keystone shows it, or None once it is gone."""
        resp = self.identity.get('/OS-TRUST/trusts/%s' % trust_id,
                                 raise_exc=False)
        if resp.status_code == 404:
            return None
        assert resp.status_code == 200, resp.text
        return resp.json()['trust']

    def trust_roles(self, trust_id):
        resp = self.identity.get('/OS-TRUST/trusts/%s/roles' % trust_id)
        return {r['name'] for r in resp.json()['roles']}

    def trusts_of(self, trustor_id):
        return self.identity.get(
            '/OS-TRUST/trusts',
            params={'trustor_user_id': trustor_id}).json()['trusts']

    def delete_trust(self, trust_id):
        self.identity.delete('/OS-TRUST/trusts/%s' % trust_id)

    def revoke(self, token):
        self.identity.delete('/auth/tokens',
                             headers={'X-Subject-Token': token})

    def cleanup(self):
        for user_id in self._users:
            self.identity.delete('/users/%s' % user_id, raise_exc=False)
        self._users = []


@pytest.fixture
def keystone_admin(cloud):
    ks = Keystone(cloud)
    try:
        yield ks
    finally:
        ks.cleanup()
