from oslo_policy import policy

from climate.policies import base

PREFIX = 'climate:leases:%s'

rules = [
    policy.DocumentedRuleDefault(
        name=PREFIX % 'list', check_str=base.PROJECT_READER,
        scope_types=['project'],
        description="List the leases of the caller's project.",
        operations=[{'path': '/v1/leases', 'method': 'GET'}]),
    policy.DocumentedRuleDefault(
        name=PREFIX % 'list:all_projects', check_str=base.ADMIN,
        scope_types=['project'],
        description='List leases of every project, or filter the list '
                    'by project_id.',
        operations=[{'path': '/v1/leases', 'method': 'GET'}]),
    policy.DocumentedRuleDefault(
        name=PREFIX % 'get', check_str=base.PROJECT_READER,
        scope_types=['project'],
        description='Show a lease.',
        operations=[{'path': '/v1/leases/{lease_id}', 'method': 'GET'}]),
    policy.DocumentedRuleDefault(
        name=PREFIX % 'create', check_str=base.PROJECT_MEMBER,
        scope_types=['project'],
        description="Create a lease in the caller's project.",
        operations=[{'path': '/v1/leases', 'method': 'POST'}]),
    policy.DocumentedRuleDefault(
        name=PREFIX % 'update', check_str=base.PROJECT_MEMBER,
        scope_types=['project'],
        description='Update a lease.',
        operations=[{'path': '/v1/leases/{lease_id}', 'method': 'PUT'}]),
    policy.DocumentedRuleDefault(
        name=PREFIX % 'delete', check_str=base.PROJECT_MEMBER,
        scope_types=['project'],
        description='Delete a lease.',
        operations=[{'path': '/v1/leases/{lease_id}', 'method': 'DELETE'}]),
    policy.DocumentedRuleDefault(
        name=PREFIX % 'confirm', check_str=base.PROJECT_MEMBER,
        scope_types=['project'],
        description='Confirm a temporary hold: it becomes its lease '
                    '(microversion 1.14).',
        operations=[{'path': '/v1/leases/{lease_id}/confirm',
                     'method': 'POST'}]),
]


def list_rules():
    return rules
