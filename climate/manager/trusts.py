"""Keystone trusts of leases: made from the user's token, dropped at the end.

With ``auth_strategy = keystone`` every new lease gets a trust from the user
who creates it to Climate's service user: the user's roles in the lease's
project, with impersonation, no expiry (it is deleted when the lease ends or
is deleted, and a lease can be prolonged).  Plugins that must act as the
user later (waking or booting instances, creating stacks) redeem it through
``ResourcePlugin.user_session``; reclaiming never needs it.

The manager, not the API, creates the trust: only the manager knows whether
the lease's transaction committed, so only it can delete the trust of a
create that failed without ever deleting the trust of a lease that exists
(an API that timed out waiting for the manager cannot tell).  The user's
token travels to it in the request context, as in other OpenStack services.

Without Keystone (``noauth``, the embedded default) no trust is made and the
lease's ``trust_id`` stays null.
"""

from keystoneauth1 import exceptions as ks_exc
from oslo_config import cfg
from oslo_log import log as logging

from climate.clients import keystone
from climate.conf import api as api_conf
from climate import exceptions

LOG = logging.getLogger(__name__)
CONF = cfg.CONF

# Keystone could not be reached, or answered that it cannot serve now.
_UNREACHABLE = (ks_exc.ConnectionError, ks_exc.DiscoveryFailure,
                ks_exc.EndpointNotFound)


def enabled(conf=None):
    """Whether leases get trusts: only when the API authenticates with
    Keystone (a noauth request carries no token to delegate from)."""
    return (conf or CONF).auth_strategy == api_conf.AUTH_KEYSTONE


def _keystone_reason(exc):
    """Keystone's own explanation of an HTTP error, without our wrapping."""
    response = getattr(exc, 'response', None)
    if response is not None:
        try:
            message = response.json()['error']['message']
        except (ValueError, KeyError, TypeError):
            message = None
        if message:
            return str(message).rstrip('.') + '.'
    return str(getattr(exc, 'message', None) or exc)


def _auth_url(conf):
    try:
        return conf[keystone.GROUP].auth_url
    except (cfg.NoSuchOptError, KeyError):
        return None


def _unavailable(conf, what, exc):
    return exceptions.ServiceUnavailable(
        reason='Keystone (%s) could not be reached to %s (%s); nothing was '
               'created, try again later.' % (_auth_url(conf) or 'auth_url',
                                              what, exc))


def _is_server_side(exc):
    return (isinstance(exc, _UNREACHABLE) or
            (isinstance(exc, ks_exc.HttpError) and
             (exc.http_status or 500) >= 500))


def _raise_refusal(conf, ctx, exc, what, reading_token=False):
    """Turn Keystone's HTTP answer to the user's request into ours."""
    if _is_server_side(exc):
        raise _unavailable(conf, what, exc)
    if exc.http_status == 401 or (reading_token and exc.http_status == 404):
        # reading it, a 404 is a token Keystone no longer knows (expired,
        # revoked); creating the trust, a role the user does not hold
        raise exceptions.NotAuthenticated(
            'Keystone no longer accepts your token: %s' %
            _keystone_reason(exc))
    cls = (exceptions.TrustRefused if exc.http_status == 403
           else exceptions.TrustNotCreated)
    raise cls(project_id=ctx.project_id, reason=_keystone_reason(exc))


def create(ctx, conf=None):
    """Create the trust of a new lease from the caller's token.

    :returns: the trust id, or None when trusts are not in use.
    :raises climate.exceptions.ServiceUnavailable: Keystone unreachable or
        failing, or Climate's service credentials unusable (503).
    :raises climate.exceptions.NotAuthenticated: Keystone no longer accepts
        the caller's token (401).
    :raises climate.exceptions.TrustRefused: Keystone forbids this user to
        delegate (403), with Keystone's reason.
    :raises climate.exceptions.TrustNotCreated: Keystone rejected the trust
        otherwise, e.g. a role the user does not hold (409), with its reason.
    """
    conf = conf or CONF
    if not enabled(conf):
        return None
    if not ctx.auth_token or not ctx.project_id:
        raise exceptions.NotAuthenticated(
            'Creating a lease needs a Keystone token scoped to a project: '
            'Climate delegates from it.')
    # Climate's own identity first: a failure there is the operator's
    # (credentials, [service_auth]), never the user's.
    try:
        keystone.service_user_id(conf)
    except ks_exc.MissingAuthPlugin as exc:
        raise exceptions.ServiceUnavailable(
            reason='Climate has no service credentials to hold trusts: %s'
                   % exc)
    except ks_exc.HttpError as exc:
        if _is_server_side(exc):
            raise _unavailable(conf, "authenticate Climate's service user",
                               exc)
        LOG.error('Keystone refused Climate service credentials: %s', exc)
        raise exceptions.ServiceUnavailable(
            reason="Keystone refused Climate's service credentials "
                   "([service_auth]); the lease was not created.")
    except _UNREACHABLE as exc:
        raise _unavailable(conf, "authenticate Climate's service user", exc)

    try:
        # the user's token as it is: its user, project and role ids are
        # what the trust delegates
        user_sess = keystone.user_session(ctx.auth_token, ctx.project_id,
                                          conf)
    except _UNREACHABLE as exc:
        raise _unavailable(conf, 'check your token', exc)
    except ValueError as exc:
        raise exceptions.NotAuthenticated(
            'Your token cannot create a lease in project %s: %s' % (
                ctx.project_id, exc))
    except ks_exc.HttpError as exc:
        _raise_refusal(conf, ctx, exc, 'check your token',
                       reading_token=True)
    try:
        trust_id = keystone.create_trust(user_sess, conf,
                                         project_id=ctx.project_id)
    except _UNREACHABLE as exc:
        raise _unavailable(conf, 'create the trust of the lease', exc)
    except ks_exc.HttpError as exc:
        _raise_refusal(conf, ctx, exc, 'create the trust of the lease')
    LOG.info('Trust %s created from user %s in project %s',
             trust_id, ctx.user_id, ctx.project_id)
    return trust_id


def delete(trust_id, lease_id, conf=None, sess=None):
    """Delete a lease's trust; True when it is gone (or already was).

    Never raises: the end or deletion of a lease must not fail because of
    its trust.  ``sess`` (by default Climate's service session, which
    Keystone lets delete any trust when the service user is an admin) is
    tried first; then the trust deletes itself through a trust-scoped
    session while its trustor can still redeem it, and Climate's service
    session is asked again when the trustor is disabled or the trust
    expired.
    """
    if not trust_id:
        return True
    conf = conf or CONF
    if sess is None:
        # Climate's own session holds a token already; redeeming the trust
        # costs a password authentication (~0.3 s on the test cloud).  A
        # service user Keystone does not let delete trusts falls back below.
        try:
            sess = keystone.service_session(conf)
        except Exception as exc:
            LOG.debug('No service session to delete trust %s: %s',
                      trust_id, exc)
    if sess is not None:
        try:
            keystone.delete_trust(trust_id, sess=sess, conf=conf)
            return True
        except Exception as exc:  # the default sessions may still work
            LOG.debug('Deleting trust %s with the given session failed: %s',
                      trust_id, exc)
    try:
        keystone.delete_trust(trust_id, conf=conf)
    except Exception as exc:
        LOG.warning('Could not delete trust %s of lease %s: %s', trust_id,
                    lease_id, exc)
        return False
    LOG.info('Trust %s of lease %s deleted', trust_id, lease_id)
    return True
