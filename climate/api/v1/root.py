"""/v1."""

import pecan

from climate.api import health
from climate.api.v1 import billing
from climate.api.v1 import floatingips
from climate.api.v1 import hosts
from climate.api.v1 import idle_policies
from climate.api.v1 import instances
from climate.api.v1 import lease_series
from climate.api.v1 import leases
from climate.api.v1 import maintenance
from climate.api.v1 import networks
from climate.api.v1 import quotas
from climate.api.v1 import usage
from climate.api.v1 import volume_pools
from climate.api.v1 import volumes
from climate.api.v1 import webhooks


class V1Controller:

    leases = leases.LeasesController()
    instances = instances.InstancesController()  # 1.3
    volumes = volumes.VolumesController()  # 1.6
    floatingips = floatingips.FloatingIPsController()  # Blazar's 1.0
    networks = networks.NetworksController()  # Blazar's (Chameleon's) 1.0
    health = health.HealthController()  # admin only
    webhooks = webhooks.WebhooksController()  # 1.7
    usage = usage.UsageController()  # 1.8
    quotas = quotas.QuotasController()  # 1.9
    billing = billing.BillingController()  # 1.10

    @pecan.expose('json')
    def index(self):
        return {'resources': [{'name': 'leases', 'links': [
            {'rel': 'self', 'href': pecan.request.path_url.rstrip('/') +
             '/leases'}]}]}


# not a Python name: Blazar's path
pecan.route(V1Controller, 'os-hosts', hosts.HostsController())
pecan.route(V1Controller, 'volume-pools',
            volume_pools.VolumePoolsController())  # 1.5
pecan.route(V1Controller, 'lease-series',
            lease_series.LeaseSeriesController())  # 1.15
pecan.route(V1Controller, 'maintenance-windows',
            maintenance.MaintenanceController())  # 1.16
pecan.route(V1Controller, 'idle-policies',
            idle_policies.IdlePoliciesController())  # 1.17
