from climate.policies import base

PREFIX = 'climate:usage:%s'
USAGE = '/v1/usage'

rules = [
    base.rule(PREFIX % 'get', "Show a project's reserved resource-hours "
              'over a period (microversion 1.8).', USAGE, 'GET',
              base.PROJECT_READER),
    base.rule(PREFIX % 'get:all_projects', "Show another project's usage "
              '(the project_id parameter).', USAGE, 'GET'),
    base.rule(PREFIX % 'capacity', 'Show reserved against reservable '
              'capacity by class over time, for every project (the '
              'planning view; microversion 1.8).', USAGE + '/capacity',
              'GET'),
    base.rule(PREFIX % 'energy', 'Show what powering unbooked hosts off '
              'saved over a period, step by step and per host (the energy '
              'report; microversion 1.12).', USAGE + '/energy', 'GET'),
]


def list_rules():
    return rules
