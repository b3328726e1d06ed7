"""/v1."""

import pecan

from climate.api import health
from climate.api.v1 import hosts
from climate.api.v1 import instances
from climate.api.v1 import leases
from climate.api.v1 import volume_pools


class V1Controller:

    leases = leases.LeasesController()
    instances = instances.InstancesController()  # 1.3
    health = health.HealthController()  # admin only

    @pecan.expose('json')
    def index(self):
        return {'resources': [{'name': 'leases', 'links': [
            {'rel': 'self', 'href': pecan.request.path_url.rstrip('/') +
             '/leases'}]}]}


# not a Python name: Blazar's path
pecan.route(V1Controller, 'os-hosts', hosts.HostsController())
pecan.route(V1Controller, 'volume-pools',
            volume_pools.VolumePoolsController())  # 1.5
