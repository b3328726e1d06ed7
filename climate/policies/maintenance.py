"""Policy of ``/v1/maintenance-windows`` (microversion 1.16): operators'
only (a window takes hosts out of every project's reach and changes
other projects' leases)."""

from climate.policies import base

PREFIX = 'climate:maintenance:%s'
WINDOWS = '/v1/maintenance-windows'
ONE = WINDOWS + '/{window_id}'


def _rule(name, description, path, method):
    return base.rule(PREFIX % name, description, path, method, base.ADMIN)


rules = [
    _rule('list', 'List the maintenance windows (microversion 1.16).',
          WINDOWS, 'GET'),
    _rule('get', 'Show a maintenance window and what it did to the leases '
          'it hit.', ONE, 'GET'),
    _rule('create', 'Plan (dry_run) or apply a maintenance window on hosts: '
          'the leases it hits moved, shortened or left.', WINDOWS, 'POST'),
    _rule('delete', 'Cancel a maintenance window: its hosts are free again.',
          ONE, 'DELETE'),
]


def list_rules():
    return rules
