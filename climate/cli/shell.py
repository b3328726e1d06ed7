"""The ``climate`` application: osc-lib's shell with Climate's commands.

Authentication is the ecosystem's: ``--os-cloud``/``OS_CLOUD`` and
clouds.yaml, ``OS_*`` variables and ``--os-*`` options, read by
openstacksdk's config loader and turned into a keystoneauth session by
osc-lib; the endpoint comes from the catalog (service type
``reservation``) unless ``--os-endpoint`` names it.

Without any credentials (no cloud, no auth URL, no token) the client talks
to the embedded default without authentication: ``--os-endpoint``, or
``http://127.0.0.1:1234``.  ``--os-auth-type none`` (or ``noauth``) asks for
that explicitly.  The identity a noauth API should assume can be sent with
``--noauth-project-id``/``--noauth-user-id``/``--noauth-roles``.
"""

import sys

from cliff import commandmanager
from osc_lib.api import auth
from osc_lib import shell
from osc_lib import utils

from climate.cli import client as climate_client
from climate import version

DEFAULT_ENDPOINT = 'http://127.0.0.1:1234'
COMMAND_GROUP = 'climate.cli'
NOAUTH = 'none'
NOAUTH_ALIASES = ('noauth', 'none')
NOAUTH_HEADERS = (('noauth_project_id', 'X-Project-Id'),
                  ('noauth_user_id', 'X-User-Id'),
                  ('noauth_roles', 'X-Roles'))


def _rewrite_noauth_alias(argv):
    """Let ``--os-auth-type noauth`` through keystoneauth's choices."""
    out = list(argv)
    for index, arg in enumerate(out):
        if arg == '--os-auth-type=noauth':
            out[index] = '--os-auth-type=none'
        elif (arg == '--os-auth-type' and index + 1 < len(out) and
              out[index + 1] == 'noauth'):
            out[index + 1] = NOAUTH
    return out


class ClimateShell(shell.OpenStackShell):
    """Command-line interface to the Climate reservation service."""

    def __init__(self, stdin=None, stdout=None, stderr=None):
        super().__init__(
            description=__doc__.strip().splitlines()[0],
            version=version.version_string(),
            command_manager=commandmanager.CommandManager(COMMAND_GROUP),
            stdin=stdin, stdout=stdout, stderr=stderr,
            deferred_help=True)
        self._client = None

    def build_option_parser(self, description, version, argparse_kwargs=None):
        parser = super().build_option_parser(description, version,
                                             argparse_kwargs)
        parser = auth.build_auth_plugins_option_parser(parser)
        parser.add_argument(
            '--os-reservation-api-version', metavar='<X.Y>',
            dest='reservation_api_version',
            default=utils.env('OS_RESERVATION_API_VERSION'),
            help='Send this API microversion on every request instead of '
                 'the one each command needs (Env: '
                 'OS_RESERVATION_API_VERSION)')
        for dest, header in NOAUTH_HEADERS:
            option = '--' + dest.replace('_', '-')
            env = 'CLIMATE_' + dest.upper()
            parser.add_argument(
                option, metavar='<%s>' % dest.split('_', 1)[1],
                dest=dest, default=utils.env(env),
                help='With no authentication: the %s header to send (the '
                     'API uses its [noauth] default otherwise) (Env: %s)' %
                     (header, env))
        return parser

    def run(self, argv):
        return super().run(_rewrite_noauth_alias(argv))

    def _final_defaults(self):
        super()._final_defaults()
        opts = self.options
        if (opts.auth_type or '').lower() in NOAUTH_ALIASES:
            opts.auth_type = NOAUTH
        if opts.auth_type == NOAUTH:
            self._auth_type = NOAUTH
        elif opts.endpoint and opts.token:
            self._auth_type = 'admin_token'
        elif opts.cloud or opts.auth_url or opts.token or opts.auth_type:
            self._auth_type = 'password'
        else:
            # nothing says where a Keystone is: the embedded default
            self._auth_type = NOAUTH
            opts.auth_type = NOAUTH
        if opts.auth_type == NOAUTH and not opts.endpoint:
            opts.endpoint = DEFAULT_ENDPOINT

    @property
    def client(self):
        """The API client of this run, built on first use."""
        if self._client is None:
            self._client = self._make_client()
        return self._client

    def _make_client(self):
        manager = self.client_manager
        manager.setup_auth()
        noauth = manager.auth_plugin_name == NOAUTH
        headers = {}
        if noauth:
            endpoint = self.options.endpoint
            for dest, header in NOAUTH_HEADERS:
                if getattr(self.options, dest, None):
                    headers[header] = getattr(self.options, dest)
        else:
            try:
                endpoint = manager.get_endpoint_for_service_type(
                    climate_client.SERVICE_TYPE,
                    region_name=manager.region_name,
                    interface=manager.interface)
            except Exception as exc:
                if type(exc).__name__ != 'EndpointNotFound':
                    raise
                endpoint = None
            if not endpoint:
                raise climate_client.ClientError(
                    'The service catalog has no %r endpoint (interface %s%s)'
                    '; is Climate registered in Keystone?' % (
                        climate_client.SERVICE_TYPE, manager.interface,
                        ', region %s' % manager.region_name
                        if manager.region_name else ''))
        return climate_client.Client(
            manager.session, endpoint, interface=manager.interface,
            region_name=manager.region_name,
            api_version=self.options.reservation_api_version,
            headers=headers,
            user_agent='climate-cli/%s' % version.version_string())


def main(argv=None):
    if argv is None:
        argv = sys.argv[1:]
    return ClimateShell().run(argv)


if __name__ == '__main__':
    sys.exit(main())
