"""``auth_strategy = noauth``: identity from request headers.

For the embedded single-user default (``climate-all`` on 127.0.0.1): there
is no Keystone, and whoever reaches the API is whoever the ``X-Project-Id``,
``X-User-Id`` and ``X-Roles`` headers say, administrator included.  Hence:

- :func:`check_exposure` refuses noauth where others may reach the API (a
  non-loopback address, or a WSGI server whose address Climate cannot
  see) unless ``[noauth] allow_remote = true`` says the operator means it;
- :class:`NoAuth` refuses identity headers that name nobody (empty) or
  cannot be stored (control characters, over 255 characters).
"""

import ipaddress
import re

from oslo_log import log as logging

from climate.api import errors
from climate.conf import api as api_conf

LOG = logging.getLogger(__name__)

#: Identity headers whose value becomes a stored id (leases.project_id,
#: leases.user_id: 255 characters).
ID_HEADERS = (('HTTP_X_PROJECT_ID', 'X-Project-Id', 'project_id'),
              ('HTTP_X_USER_ID', 'X-User-Id', 'user_id'))
MAX_ID_LENGTH = 255
_CONTROL = re.compile('[\x00-\x1f\x7f]')


class NoauthExposed(RuntimeError):
    """noauth would serve beyond loopback and nobody said it may."""


def is_loopback(host):
    """Whether ``host`` (an address or ``localhost``) is loopback only."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host.lower() in ('localhost', 'localhost.localdomain')


def check_exposure(conf, host=None):
    """Refuse noauth where anyone but this machine's users may reach it.

    ``host`` is the address the API listens on, or None when Climate runs
    as a WSGI application: the web server's address (often every address,
    or a public one behind a shared front server) is not visible to the
    application, so that case counts as exposed.

    :raises NoauthExposed: with the message to show the operator, unless
        ``[noauth] allow_remote`` is set (then a warning is logged).
    """
    if conf.auth_strategy != api_conf.AUTH_NOAUTH:
        return
    if host is not None and is_loopback(host):
        return
    where = ('as a WSGI application (the address its web server listens on '
             'is not known to Climate)' if host is None
             else 'on %s, which is not a loopback address' % host)
    if conf.noauth.allow_remote:
        LOG.warning('auth_strategy = noauth %s and [noauth] allow_remote = '
                    'true: ANYONE who reaches the API can act as any '
                    'project, including as admin.', where)
        return
    raise NoauthExposed(
        'Refusing to serve auth_strategy = noauth %s: noauth believes the '
        'X-Project-Id/X-User-Id/X-Roles headers, so anyone who reaches the '
        'API could act as any project, including as admin. Use '
        'auth_strategy = keystone, listen on a loopback address (host = '
        '127.0.0.1), or set [noauth] allow_remote = true if every client '
        'that can reach it is trusted.' % where)


class NoAuth:
    """Identity from X-Project-Id / X-User-Id / X-Roles, or the defaults of
    ``[noauth]`` for a header that is absent."""

    def __init__(self, app, conf):
        self.app = app
        self.conf = conf

    def __call__(self, environ, start_response):
        problem = self._bad_identity(environ)
        if problem:
            return errors.response(400, problem, 'BadRequest')(
                environ, start_response)
        defaults = {
            'HTTP_X_PROJECT_ID': self.conf.noauth.project_id,
            'HTTP_X_USER_ID': self.conf.noauth.user_id,
            'HTTP_X_ROLES': ','.join(self.conf.noauth.roles),
        }
        for key, value in defaults.items():
            if key not in environ:
                environ[key] = value
        environ['HTTP_X_IDENTITY_STATUS'] = 'Confirmed'
        environ.setdefault('HTTP_X_TENANT_ID', environ['HTTP_X_PROJECT_ID'])
        return self.app(environ, start_response)

    @staticmethod
    def _bad_identity(environ):
        """What is wrong with a sent identity header, or None."""
        for key, header, option in ID_HEADERS:
            if key not in environ:
                continue
            value = environ[key]
            if not value.strip():
                return ('The %s header is empty. Under auth_strategy = noauth '
                        'it names the %s of the request: send one, or leave '
                        'the header out to use [noauth] %s.' % (
                            header, option.split('_')[0], option))
            if _CONTROL.search(value):
                return 'The %s header contains a control character.' % (
                    header,)
            if len(value) > MAX_ID_LENGTH:
                return 'The %s header is longer than %d characters.' % (
                    header, MAX_ID_LENGTH)
        return None
