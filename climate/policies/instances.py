from oslo_policy import policy

from climate.policies import base

PREFIX = 'climate:instances:%s'
INSTANCES = '/v1/instances'

rules = [
    policy.DocumentedRuleDefault(
        name=PREFIX % 'availability', check_str=base.PROJECT_READER,
        scope_types=['project'],
        description='Search when N instance slots of a shape fit (counts '
                    'and times only; microversion 1.3).',
        operations=[{'path': INSTANCES + '/availability',
                     'method': 'POST'}]),
]


def list_rules():
    return rules
