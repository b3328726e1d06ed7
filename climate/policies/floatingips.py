from climate.policies import base

PREFIX = 'climate:floatingips:%s'
FIPS = '/v1/floatingips'


def _rule(name, description, path, method, check=base.ADMIN):
    return base.rule(PREFIX % name, description, path, method, check)


rules = [
    _rule('get_all', 'List the reservable floating IP addresses.', FIPS,
          'GET'),
    _rule('get', 'Show a reservable floating IP address.',
          FIPS + '/{floatingip_id}', 'GET'),
    _rule('post', 'Register a floating IP address of an external network '
          'for reservations.', FIPS, 'POST'),
    _rule('delete', 'Remove a floating IP address from the inventory.',
          FIPS + '/{floatingip_id}', 'DELETE'),
]


def list_rules():
    return rules
