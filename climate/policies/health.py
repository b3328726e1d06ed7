from oslo_policy import policy

from climate.policies import base

rules = [
    policy.DocumentedRuleDefault(
        name='climate:health:get', check_str=base.ADMIN,
        scope_types=['project'],
        description='Show the detailed health of the service: database and '
                    'message bus reachability, event backlog.  '
                    '/healthcheck, for load balancers, needs no rule.',
        operations=[{'path': '/v1/health', 'method': 'GET'}]),
]


def list_rules():
    return rules
