from oslo_policy import policy

ADMIN = 'rule:admin_api'
PROJECT_MEMBER = 'rule:project_member_or_admin'
PROJECT_READER = 'rule:project_reader_or_admin'

rules = [
    policy.RuleDefault(
        'context_is_admin', 'role:admin',
        description='Who is an administrator: sees every project.'),
    policy.RuleDefault('admin_api', 'role:admin',
                       description='Administrators.'),
    policy.RuleDefault(
        'project_member_api', 'role:member and project_id:%(project_id)s',
        description='Members of the project that owns the target.'),
    policy.RuleDefault(
        'project_reader_api', 'role:reader and project_id:%(project_id)s',
        description='Readers of the project that owns the target.'),
    policy.RuleDefault(
        'project_member_or_admin',
        'rule:project_member_api or rule:admin_api',
        description='Project members, or administrators.'),
    policy.RuleDefault(
        'project_reader_or_admin',
        'rule:project_reader_api or rule:admin_api',
        description='Project readers, or administrators.'),
]


def rule(name, description, path, method, check=ADMIN):
    """A project-scoped rule of one operation, with its documentation."""
    return policy.DocumentedRuleDefault(
        name=name, check_str=check, scope_types=['project'],
        description=description,
        operations=[{'path': path, 'method': method}])


def list_rules():
    return rules
