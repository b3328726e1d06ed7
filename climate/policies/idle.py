"""Policy of ``/v1/idle-policies`` (microversion 1.17): administrators
set a project's idle reclaim policy; the project's readers see theirs."""

from climate.policies import base

PREFIX = 'climate:idle_policies:%s'
POLICIES = '/v1/idle-policies'
ONE = POLICIES + '/{project_id}'


def _rule(name, description, path, method, check):
    return base.rule(PREFIX % name, description, path, method, check)


rules = [
    _rule('list', "List every project's idle policy (microversion 1.17).",
          POLICIES, 'GET', base.ADMIN),
    _rule('get', "Show a project's idle policy (its own, or the "
          "operator's default).", ONE, 'GET', base.PROJECT_READER),
    _rule('set', "Set a project's idle policy: its started leases nothing "
          'uses are warned, then ended early.', ONE, 'PUT', base.ADMIN),
    _rule('delete', "Remove a project's own idle policy.", ONE, 'DELETE',
          base.ADMIN),
]


def list_rules():
    return rules
