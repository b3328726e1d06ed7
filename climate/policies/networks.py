from climate.policies import base

PREFIX = 'climate:networks:%s'
NETWORKS = '/v1/networks'


def _rule(name, description, path, method, check=base.ADMIN):
    return base.rule(PREFIX % name, description, path, method, check)


rules = [
    _rule('get_all', 'List the reservable network segments.', NETWORKS,
          'GET'),
    _rule('get', 'Show a reservable network segment.',
          NETWORKS + '/{network_id}', 'GET'),
    _rule('post', 'Register a network segment for reservations.', NETWORKS,
          'POST'),
    _rule('put', 'Change the extra capabilities or reservable flag of a '
          'network segment.', NETWORKS + '/{network_id}', 'PUT'),
    _rule('delete', 'Remove a network segment from the inventory.',
          NETWORKS + '/{network_id}', 'DELETE'),
]


def list_rules():
    return rules
