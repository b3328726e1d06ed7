"""Horizon requests of test users, for the API wrapper's real calls.

The Climate API of the tests runs with noauth (identity headers); the
wrapper sends a Keystone token.  ``TokenIdentity`` stands where
keystonemiddleware would: it reads the token and sets the headers of the
user the token names, ``<persona>:<project>`` (a fixtures.PERSONAS key).
"""

import types

from climate.tests import fixtures

REGION = 'RegionOne'


class TokenIdentity:
    """WSGI middleware: X-Auth-Token ``member:project-a`` -> that
    user's identity headers; a request without a token gets none."""

    def __init__(self, app):
        self.app = app
        self.tokens = []

    def __call__(self, environ, start_response):
        token = environ.pop('HTTP_X_AUTH_TOKEN', None)
        self.tokens.append(token)
        if token:
            persona, _sep, project = token.partition(':')
            for name, value in fixtures.identity(persona, project).items():
                environ['HTTP_' + name.upper().replace('-', '_')] = value
        return self.app(environ, start_response)


def catalog(url):
    """A Keystone v3 service catalog with the reservation service."""
    return [{'type': 'reservation', 'name': 'climate', 'endpoints': [
        {'interface': interface, 'region': REGION, 'region_id': REGION,
         'url': url} for interface in ('public', 'internal', 'admin')]}]


def request(url, persona='member', project='project-a'):
    """What the wrapper reads of a Horizon request: the user's token,
    project, catalog and region."""
    user = types.SimpleNamespace(
        token=types.SimpleNamespace(id='%s:%s' % (persona, project)),
        project_id=project, tenant_id=project,
        service_catalog=catalog(url), services_region=REGION)
    return types.SimpleNamespace(user=user)
