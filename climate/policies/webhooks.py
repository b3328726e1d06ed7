"""Policy of ``/v1/webhooks`` (microversion 1.7): a project's members
manage its webhooks, its readers see them and their delivery logs;
administrators see every project's."""

from climate.policies import base

PREFIX = 'climate:webhooks:%s'
WEBHOOKS = '/v1/webhooks'
WEBHOOK = WEBHOOKS + '/{webhook_id}'


def _rule(name, description, path, method, check):
    return base.rule(PREFIX % name, description, path, method, check)


rules = [
    _rule('list', "List the webhooks of the caller's project "
          '(microversion 1.7).', WEBHOOKS, 'GET', base.PROJECT_READER),
    _rule('list:all_projects', 'List the webhooks of every project, or '
          'filter the list by project_id.', WEBHOOKS, 'GET', base.ADMIN),
    _rule('get', 'Show a webhook (never its secret).', WEBHOOK, 'GET',
          base.PROJECT_READER),
    _rule('create', "Register a webhook for the caller's project's lease "
          'notices.', WEBHOOKS, 'POST', base.PROJECT_MEMBER),
    _rule('delete', 'Remove a webhook and its delivery log.', WEBHOOK,
          'DELETE', base.PROJECT_MEMBER),
    _rule('deliveries', "Read a webhook's delivery log.",
          WEBHOOK + '/deliveries', 'GET', base.PROJECT_READER),
]


def list_rules():
    return rules
