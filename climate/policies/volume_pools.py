from climate.policies import base

PREFIX = 'climate:volume_pools:%s'
POOLS = '/v1/volume-pools'
VOLUMES = '/v1/volumes'


def _rule(name, description, path, method, check=base.ADMIN):
    return base.rule(PREFIX % name, description, path, method, check)


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
    _rule('allocation:get_all', 'List the reservations holding each volume '
          'pool, with their windows and gigabytes (microversion 1.6).',
          POOLS + '/allocations', 'GET'),
    # any project reader, counts and times only
    base.rule('climate:volumes:availability',
              'Search when a volume reservation fits, with the gigabytes '
              'free (counts and times only; microversion 1.6).',
              VOLUMES + '/availability', 'POST', base.PROJECT_READER),
]


def list_rules():
    return rules
