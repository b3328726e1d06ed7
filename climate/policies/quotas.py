from climate.policies import base

PREFIX = 'climate:quotas:%s'
QUOTA = '/v1/quotas/{project_id}'

rules = [
    base.rule(PREFIX % 'get_all', 'List the projects with limits of their '
              'own, and the defaults (microversion 1.9).', '/v1/quotas',
              'GET'),
    base.rule(PREFIX % 'get', "Show a project's limits on leases and what "
              'it holds against them (microversion 1.9).', QUOTA, 'GET',
              base.PROJECT_READER),
    base.rule(PREFIX % 'put', "Set a project's own limits.", QUOTA, 'PUT'),
    base.rule(PREFIX % 'delete', "Give a project the default limits "
              'again.', QUOTA, 'DELETE'),
]


def list_rules():
    return rules
