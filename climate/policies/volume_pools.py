from oslo_policy import policy

from climate.policies import base

PREFIX = 'climate:volume_pools:%s'
POOLS = '/v1/volume-pools'


def _rule(name, description, path, method, check=base.ADMIN):
    return policy.DocumentedRuleDefault(
        name=PREFIX % name, check_str=check, scope_types=['project'],
        description=description,
        operations=[{'path': path, 'method': method}])


rules = [
    _rule('get_all', 'List the volume pools (microversion 1.5).', POOLS,
          'GET'),
    _rule('get', 'Show a volume pool.', POOLS + '/{pool_id}', 'GET'),
    _rule('post', 'Add a volume pool to the static inventory.', POOLS,
          'POST'),
    _rule('put', "Change a volume pool's reservable flag, capabilities "
          '(and, static inventory, its capacity).', POOLS + '/{pool_id}',
          'PUT'),
    _rule('delete', 'Remove a volume pool from the static inventory.',
          POOLS + '/{pool_id}', 'DELETE'),
]


def list_rules():
    return rules
