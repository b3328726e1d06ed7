from climate.policies import base

PREFIX = 'climate:instances:%s'
INSTANCES = '/v1/instances'

rules = [
    base.rule(PREFIX % 'availability',
              'Search when N instance slots of a shape fit (counts and '
              'times only; microversion 1.3).',
              INSTANCES + '/availability', 'POST', base.PROJECT_READER),
]


def list_rules():
    return rules
