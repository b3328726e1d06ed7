"""Policy of ``/v1/lease-series`` (microversion 1.15): a project's members
create, update and cancel its recurring series, its readers see them;
administrators see every project's."""

from climate.policies import base

PREFIX = 'climate:lease_series:%s'
SERIES = '/v1/lease-series'
ONE = SERIES + '/{series_id}'


def _rule(name, description, path, method, check):
    return base.rule(PREFIX % name, description, path, method, check)


rules = [
    _rule('list', "List the recurring lease series of the caller's "
          'project (microversion 1.15).', SERIES, 'GET',
          base.PROJECT_READER),
    _rule('list:all_projects', 'List the series of every project, or '
          'filter the list by project_id.', SERIES, 'GET', base.ADMIN),
    _rule('get', 'Show a series with its occurrences.', ONE, 'GET',
          base.PROJECT_READER),
    _rule('create', 'Create a recurring series: its occurrences within '
          'the booking horizon are booked as leases, all or nothing.',
          SERIES, 'POST', base.PROJECT_MEMBER),
    _rule('update', 'Change the times or the rule of a series from one '
          'of its occurrences on.', ONE, 'PUT', base.PROJECT_MEMBER),
    _rule('delete', 'Cancel a series: its occurrences not yet started are '
          'deleted.', ONE, 'DELETE', base.PROJECT_MEMBER),
]


def list_rules():
    return rules
