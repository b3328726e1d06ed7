"""Keystone sessions: Climate's own, a user's, and Keystone trusts.

A lease that acts for its project at start time holds a trust: the user (trustor) delegates
their roles in the project to Climate's service user (trustee), with impersonation, so that
what Climate creates belongs to the user's project and is attributed to the user. Climate then
authenticates with its own ``[service_auth]`` credentials plus the trust id.
"""

import datetime
import threading

from keystoneauth1 import access as ks_access
from keystoneauth1 import adapter
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from keystoneauth1.identity import access as ks_access_plugin
from keystoneauth1 import token_endpoint

from climate.clients import get_conf
from climate.conf import clients as clients_conf

GROUP = clients_conf.SERVICE_AUTH_GROUP

# Scope options a trust-scoped authentication must not carry: a token has one scope.
_NO_SCOPE = dict(project_id=None, project_name=None, project_domain_id=None,
                 project_domain_name=None, domain_id=None, domain_name=None,
                 system_scope=None)

_lock = threading.Lock()
_service_sessions = {}


def _load_auth(conf, **overrides):
    auth = ks_loading.load_auth_from_conf_options(conf, GROUP, **overrides)
    if auth is None:
        raise ks_exc.MissingAuthPlugin(
            f'[{GROUP}] auth_type is not set: Climate has no service credentials')
    return auth


def _session(conf, auth):
    return ks_loading.load_session_from_conf_options(conf, GROUP, auth=auth)


def service_session(conf=None):
    """Climate's own session, authenticated with ``[service_auth]``.

    One session per configuration object, shared (keystoneauth sessions are thread-safe and
    re-authenticate when the token expires).
    """
    conf = get_conf(conf)
    with _lock:
        sess = _service_sessions.get(id(conf))
        if sess is None:
            sess = _service_sessions[id(conf)] = _session(conf, _load_auth(conf))
        return sess


def reset_service_sessions():
    """Forget the cached service sessions (for tests, or after a configuration reload)."""
    with _lock:
        _service_sessions.clear()


def service_user_id(conf=None):
    """Id of Climate's service user: the trustee of every trust Climate holds."""
    sess = service_session(conf)
    return sess.get_user_id()


def user_session(token, project_id=None, conf=None):
    """A session that acts with the user's own ``token``, as it is.

    Typically the ``X-Auth-Token`` keystonemiddleware accepted.  The token
    is looked at once (Keystone lets a token's owner read it), which gives
    the user, project and role ids the session's ``auth.get_access`` then
    returns; it is never exchanged for a new one, so tokens Keystone will
    not re-scope (application credentials, trusts) still get Keystone's own
    verdict on what they try.  Uses ``[service_auth] auth_url`` and its
    TLS/timeout settings.

    :raises keystoneauth1.exceptions.ClientException: Keystone unreachable
        or refusing the token (e.g. NotFound for an expired one).
    :raises ValueError: the token is not scoped to ``project_id``.
    """
    conf = get_conf(conf)
    auth_url = _load_auth(conf).auth_url
    plain = _session(conf, token_endpoint.Token(auth_url, token))
    resp = _identity(plain).get('/auth/tokens',
                                headers={'X-Subject-Token': token})
    access = ks_access.create(resp=resp, auth_token=token)
    if project_id is not None and access.project_id != project_id:
        raise ValueError(f'the token is scoped to project {access.project_id}, '
                         f'not {project_id}')
    return _session(conf, ks_access_plugin.AccessInfoPlugin(access, auth_url=auth_url))


def _identity(sess):
    return adapter.Adapter(sess, service_type='identity', interface='public',
                           min_version='3', max_version='3.latest')


def create_trust(user_sess, conf=None, project_id=None, role_ids=None, expires_at=None):
    """Create a trust from the user of ``user_sess`` to Climate's service user; return its id.

    The trust delegates ``role_ids`` (default: every role the user's token has in the
    project) in ``project_id`` (default: the token's project), with impersonation, and
    may be redelegated (Keystone's ``max_redelegation_count``). Keystone
    wants ids here: a non-admin trustor cannot look roles or users up by name.
    ``expires_at`` is an aware or UTC ``datetime`` (optional).
    """
    conf = get_conf(conf)
    access = user_sess.auth.get_access(user_sess)
    trust = {
        'trustor_user_id': access.user_id,
        'trustee_user_id': service_user_id(conf),
        'project_id': project_id or access.project_id,
        'impersonation': True,
        # Heat, given a token of this trust to make a lease's stack,
        # makes a trust of its own from it (for its deferred actions):
        # Keystone allows that only from a trust that may be redelegated
        'allow_redelegation': True,
        'roles': [{'id': r} for r in (role_ids or access.role_ids)],
    }
    if expires_at is not None:
        if expires_at.utcoffset() is not None:
            expires_at = expires_at.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        trust['expires_at'] = expires_at.strftime('%Y-%m-%dT%H:%M:%S.%fZ')
    resp = _identity(user_sess).post('/OS-TRUST/trusts', json={'trust': trust})
    return resp.json()['trust']['id']


def trusts_held(conf=None):
    """Ids of the trusts whose trustee is Climate's service user."""
    conf = get_conf(conf)
    sess = service_session(conf)
    resp = _identity(sess).get('/OS-TRUST/trusts', params={
        'trustee_user_id': sess.get_user_id()})
    return {trust['id'] for trust in resp.json()['trusts']}


def trust_session(trust_id, conf=None):
    """A session of Climate's service user scoped to ``trust_id``: it acts as the trustor.

    Needs a password-type ``[service_auth]`` (the trust is redeemed with Climate's own
    credentials); each call authenticates anew.
    """
    conf = get_conf(conf)
    return _session(conf, _load_auth(conf, trust_id=trust_id, **_NO_SCOPE))


def delete_trust(trust_id, sess=None, conf=None):
    """Delete a trust; a trust that is already gone is not an error.

    By default the trust deletes itself through a trust-scoped session (with impersonation
    its token is the trustor's, whom Keystone lets delete it); when that session cannot
    authenticate (trust gone or expired, trustor disabled), Climate's service session deletes
    it, which needs a service user that Keystone's policy lets delete trusts (role admin).
    Pass ``sess`` to use that session alone, e.g. the trustor's own.
    """
    conf = get_conf(conf)
    if sess is not None:
        candidates = [sess]
    else:
        candidates = [trust_session(trust_id, conf), service_session(conf)]
    for i, candidate in enumerate(candidates):
        try:
            _identity(candidate).delete(f'/OS-TRUST/trusts/{trust_id}')
            return
        except ks_exc.NotFound:
            return
        except (ks_exc.Unauthorized, ks_exc.Forbidden):
            if i == len(candidates) - 1:
                raise
