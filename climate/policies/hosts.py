from climate.policies import base

PREFIX = 'climate:oshosts:%s'
HOSTS = '/v1/os-hosts'


def _rule(name, description, path, method, check=base.ADMIN):
    return base.rule(PREFIX % name, description, path, method, check)


rules = [
    _rule('get_all', 'List the reservable hosts.', HOSTS, 'GET'),
    _rule('get_all_summary',
          'List the hosts without seeing the inventory: a caller refused '
          'climate:oshosts:get_all gets one entry standing for the pool of '
          'reservable hosts (none if it is empty), so that Heat\'s '
          'OS::Blazar::Lease, which checks that the host list is not empty '
          'with the user\'s token, works for project users.  Set it to '
          '"rule:admin_api" for Blazar\'s 403.', HOSTS, 'GET',
          base.PROJECT_READER),
    _rule('get', 'Show a host.', HOSTS + '/{host_id}', 'GET'),
    _rule('post', 'Add a host to the inventory.', HOSTS, 'POST'),
    _rule('put', "Change a host's extra capabilities.",
          HOSTS + '/{host_id}', 'PUT'),
    _rule('delete', 'Remove a host from the inventory.',
          HOSTS + '/{host_id}', 'DELETE'),
    _rule('allocation:get_all', 'List the reservations holding each host.',
          HOSTS + '/allocations', 'GET'),
    _rule('allocation:get', 'Show the reservations holding a host.',
          HOSTS + '/{host_id}/allocation', 'GET'),
    _rule('power:get_all', "List every host's power state as the power "
          'planner keeps it (microversion 1.12).', HOSTS + '/power', 'GET'),
    _rule('power:get', "Show a host's power state, its history over a "
          'period and the energy its power-offs saved (microversion 1.12).',
          HOSTS + '/{host_id}/power', 'GET'),
    _rule('properties:get', 'List host properties (private ones too).',
          HOSTS + '/properties', 'GET'),
    _rule('properties:patch', 'Make a host property private or public.',
          HOSTS + '/properties/{property_name}', 'PATCH'),
    _rule('availability', 'Search when enough matching hosts are free '
          '(counts and times only; microversion 1.2).',
          HOSTS + '/availability', 'POST', base.PROJECT_READER),
    _rule('timeline', 'Free matching hosts over a time range (counts '
          'only; microversion 1.2).', HOSTS + '/timeline', 'POST',
          base.PROJECT_READER),
]


def list_rules():
    return rules
