"""Options of the OpenStack clients Climate uses (see ``climate.clients``).

``[service_auth]`` holds Climate's own service credentials in keystoneauth1's standard form
(``auth_type = password``, ``auth_url``, ``username``, ``password``, ``project_name``, domain
names, plus the session options such as ``cafile`` and ``timeout``). The same credentials,
combined with a trust id, act for a user through a Keystone trust.

``[nova]`` tells how to reach Nova's API, ``[placement]`` Placement's (the
``nova`` host inventory reads host capacity there; instance reservations
keep their per-reservation inventories there), ``[cinder]`` Cinder's
(volume reservations with ``[volumes] inventory = cinder``), ``[neutron]``
Neutron's (floating IP reservations with ``[floatingips] inventory =
neutron``), ``[heat]`` Heat's (stack reservations with ``[stacks]
inventory = heat``).
"""

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

from climate.conf import groups

SERVICE_AUTH_GROUP = 'service_auth'
NOVA_GROUP = 'nova'
PLACEMENT_GROUP = 'placement'
CINDER_GROUP = 'cinder'
NEUTRON_GROUP = 'neutron'
HEAT_GROUP = 'heat'

service_auth_group = cfg.OptGroup(
    SERVICE_AUTH_GROUP, title='Climate service credentials',
    help='Keystone credentials of the Climate service user, used for its own calls to '
         'other services and, with a trust, to act for a user. Standard keystoneauth1 '
         'options: auth_type (e.g. password), auth_url, username, password, '
         'project_name, user_domain_name, project_domain_name, ...')


def endpoint_opts(service):
    """How to reach ``service`` (its name, for the help texts):
    ``region_name``, ``interface``, ``endpoint_override`` and
    ``connect_retries``, as a keystoneauth Adapter takes them."""
    return [
        cfg.StrOpt('region_name',
                   help='Region of the %s endpoint in the Keystone catalog '
                        '(any region when unset).' % service),
        cfg.StrOpt('interface', default='public',
                   choices=['public', 'internal', 'admin'],
                   help='Catalog interface of the %s endpoint.' % service),
        cfg.StrOpt('endpoint_override',
                   help='Use this URL for %s instead of the one in the '
                        'catalog.' % service),
        cfg.IntOpt('connect_retries', default=3, min=0,
                   help='Retries of a %s call whose connection failed or '
                        'was reset, 0.5 s apart and doubling.' % service),
    ]


nova_group = cfg.OptGroup(NOVA_GROUP, title='Nova client options')

nova_opts = [
    cfg.StrOpt('region_name',
               help='Region of the Nova endpoint in the Keystone catalog (any region '
                    'when unset).'),
    cfg.StrOpt('interface', default='public',
               choices=['public', 'internal', 'admin'],
               deprecated_name='endpoint_type',
               help='Catalog interface of the Nova endpoint.'),
    cfg.StrOpt('api_version', default='2.60',
               help='Compute API microversion Climate speaks. 2.60 has UUID hypervisor '
                    'ids and still reports hypervisor sizes (removed at 2.88).'),
    cfg.StrOpt('endpoint_override',
               help='Use this URL for Nova instead of the one in the catalog.'),
    cfg.IntOpt('connect_retries', default=3, min=0,
               help='Retries of a Nova call whose connection failed or was '
                    'reset (a WSGI server closing an idle keep-alive '
                    'connection as it is reused), 0.5 s apart and doubling. '
                    "Climate's Nova actions are idempotent."),
]

placement_group = cfg.OptGroup(PLACEMENT_GROUP,
                               title='Placement client options')

placement_opts = endpoint_opts('Placement')

cinder_group = cfg.OptGroup(CINDER_GROUP, title='Cinder client options')

cinder_opts = [
    cfg.StrOpt('service_type', default='block-storage',
               help='Catalog service type of the Cinder v3 endpoint '
                    '(block-storage; older clouds register volumev3).'),
    cfg.StrOpt('api_version', default='3.50',
               help='Block Storage API microversion Climate speaks (3.50: '
                    'volume type access, scheduler hints, attachments API, '
                    'extending attached volumes).'),
] + endpoint_opts('Cinder')

neutron_group = cfg.OptGroup(NEUTRON_GROUP, title='Neutron client options')

neutron_opts = endpoint_opts('Neutron')

heat_group = cfg.OptGroup(HEAT_GROUP, title='Heat client options')

heat_opts = endpoint_opts('Heat')


def _service_auth_opts():
    """Session, common auth and password-plugin options, each name once."""
    opts, seen = [], set()
    for opt in (ks_loading.get_session_conf_options()
                + ks_loading.get_auth_common_conf_options()
                + ks_loading.get_auth_plugin_conf_options('password')):
        if opt.dest not in seen:
            seen.add(opt.dest)
            opts.append(opt)
    return opts


def register_opts(conf):
    """Register ``[service_auth]``, ``[nova]``, ``[placement]``,
    ``[cinder]``, ``[neutron]`` and ``[heat]`` on ``conf``.

    The auth plugin's own options (username, password, ...) are registered by
    keystoneauth1 when the plugin is loaded (``climate.clients.keystone``).
    """
    groups.register(conf, service_auth_group, [])
    ks_loading.register_session_conf_options(conf, SERVICE_AUTH_GROUP)
    ks_loading.register_auth_conf_options(conf, SERVICE_AUTH_GROUP)
    groups.register(conf, nova_group, nova_opts)
    groups.register(conf, placement_group, placement_opts)
    groups.register(conf, cinder_group, cinder_opts)
    groups.register(conf, neutron_group, neutron_opts)
    groups.register(conf, heat_group, heat_opts)


def list_opts():
    """Options for oslo-config-generator: ``[(group, [opts])]``."""
    return [(SERVICE_AUTH_GROUP, _service_auth_opts()),
            (NOVA_GROUP, list(nova_opts)),
            (PLACEMENT_GROUP, list(placement_opts)),
            (CINDER_GROUP, list(cinder_opts)),
            (NEUTRON_GROUP, list(neutron_opts)),
            (HEAT_GROUP, list(heat_opts))]
