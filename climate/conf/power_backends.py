"""Options of the power backends (``[power]``), the protocols that power
reservable hosts off and on (``climate.plugins.physical_host.power``).

They share the group ``[power]`` with the options of the power plan
(which hosts sleep when): oslo.config lets several modules register
options in one group, so each module registers its own by the group's
name.
"""

from oslo_config import cfg

POWER_GROUP = 'power'

power_backend_opts = [
    cfg.StrOpt('backend', default='static',
               choices=['static', 'ironic', 'redfish'],
               help='How hosts are powered off and on. "static": the '
                    'states are only recorded, nothing is called (the '
                    'embedded default). "ironic": the node power state '
                    'through the Bare Metal API, as Climate\'s service '
                    'user. "redfish": the ComputerSystem of each host\'s '
                    'BMC, through the sushy library (the "power" extra).'),
    cfg.IntOpt('action_timeout', default=300, min=0,
               help='Seconds a power action may take before it is given '
                    'up and retried later. A Redfish graceful shutdown '
                    'still on after this long is forced off (and gets as '
                    'long again). 0: ask and do not wait.'),
    cfg.BoolOpt('manage_nova_service', default=True,
                help='With [hosts] inventory = nova and a backend other '
                     'than static: disable the host\'s nova-compute '
                     'service (reason "climate: powered off until ...") '
                     'before powering it off, refuse to power off a host '
                     'that runs servers, and enable the service again '
                     'once the host is on. A service disabled for another '
                     'reason is never touched.'),
    cfg.StrOpt('ironic_api_version', default='1.46',
               help='Bare Metal API microversion the ironic backend '
                    'sends. What it uses (nodes by name, the fields '
                    'filter) needs 1.8 or later; the default is served by '
                    'every Ironic since Rocky.'),
    cfg.StrOpt('ironic_region_name',
               help='Region of the Bare Metal endpoint in the Keystone '
                    'catalog (any region when unset).'),
    cfg.StrOpt('ironic_interface', default='public',
               choices=['public', 'internal', 'admin'],
               help='Catalog interface of the Bare Metal endpoint.'),
    cfg.StrOpt('ironic_endpoint_override',
               help='Use this URL for the Bare Metal API instead of the '
                    'one in the catalog.'),
    cfg.StrOpt('redfish_username',
               help='User name on the hosts\' BMCs (one account for '
                    'every BMC).'),
    cfg.StrOpt('redfish_password', secret=True,
               help='Password of redfish_username.'),
    cfg.StrOpt('redfish_verify', default='true',
               help='TLS verification of the BMCs: "true", "false", or '
                    'the path of a CA bundle.'),
    cfg.DictOpt('redfish_systems', default={},
                help='Host name (hypervisor_hostname) to the URL of its '
                     'Redfish ComputerSystem, e.g. '
                     '"node1:https://bmc1/redfish/v1/Systems/1", for hosts '
                     'without a redfish_system or bmc_address extra '
                     'capability.'),
]


def register_opts(conf):
    conf.register_opts(power_backend_opts, group=POWER_GROUP)


def list_opts():
    return [(POWER_GROUP, list(power_backend_opts))]
