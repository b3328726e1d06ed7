"""Policy in code: every rule Climate checks, with its default."""

import itertools

from climate.policies import base
from climate.policies import billing
from climate.policies import floatingips
from climate.policies import health
from climate.policies import hosts
from climate.policies import idle
from climate.policies import instances
from climate.policies import lease_series
from climate.policies import leases
from climate.policies import maintenance
from climate.policies import networks
from climate.policies import quotas
from climate.policies import usage
from climate.policies import volume_pools
from climate.policies import webhooks


def list_rules():
    return list(itertools.chain(base.list_rules(), leases.list_rules(),
                                lease_series.list_rules(),
                                maintenance.list_rules(),
                                idle.list_rules(),
                                hosts.list_rules(), instances.list_rules(),
                                volume_pools.list_rules(),
                                floatingips.list_rules(),
                                networks.list_rules(),
                                webhooks.list_rules(),
                                usage.list_rules(),
                                quotas.list_rules(),
                                billing.list_rules(),
                                health.list_rules()))
