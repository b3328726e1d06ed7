"""/v1/usage (microversion 1.8): reserved resource-hours.

* ``GET /v1/usage``: one project's usage over a period (``start``,
  ``end``; per lease with ``by_lease``), the caller's own project unless
  an administrator names another (``project_id``);
* ``GET /v1/usage/capacity``, administrators: reserved against
  reservable capacity by class, step by step (``step``,
  ``resource_class``);
* ``GET /v1/usage/energy`` (microversion 1.12), administrators: what
  powering unbooked hosts off saved over a period (``start``, ``end``),
  step by step (``step``) and per host; 1.13 adds to each host the idle
  watts counted and where they come from (``idle_watts``,
  ``watts_source``).

See doc/source/usage.rst.
"""

import pecan
from pecan import rest

from climate.api import microversion
from climate.api.v1 import inventory

VERSION = microversion.Version.parse('1.8')
ENERGY_VERSION = microversion.Version.parse('1.12')
WATTS_VERSION = microversion.Version.parse('1.13')
#: What 1.13 adds to each host of the energy report.
WATTS_HOST_FIELDS = ('idle_watts', 'watts_source')
PREFIX = 'climate:usage:%s'


class CapacityController(rest.RestController):
    """``/v1/usage/capacity``."""

    @pecan.expose('json')
    def get_all(self):
        ctx = inventory.authorize(PREFIX, 'capacity', VERSION)
        query = inventory.query(('start', 'end', 'step', 'resource_class'))
        return {'capacity': inventory.rpc().usage_capacity(ctx, query)}


def _energy_shown(report):
    """The energy report as the request's microversion shows it: before
    1.13, its hosts without their watts (the manager answers 1.13's)."""
    if microversion.of(pecan.request) >= WATTS_VERSION:
        return report
    return dict(report, hosts=[inventory.without(host, WATTS_HOST_FIELDS)
                               for host in report['hosts']])


class EnergyController(rest.RestController):
    """``/v1/usage/energy``."""

    @pecan.expose('json')
    def get_all(self):
        ctx = inventory.authorize(PREFIX, 'energy', ENERGY_VERSION)
        query = inventory.query(('start', 'end', 'step'))
        return {'energy': _energy_shown(
            inventory.rpc().host_energy(ctx, query))}


class UsageController(rest.RestController):
    """``/v1/usage``."""

    capacity = CapacityController()
    energy = EnergyController()

    @pecan.expose('json')
    def get_all(self):
        ctx = inventory.authorize(PREFIX, 'get', VERSION)
        query = inventory.query(('project_id', 'start', 'end', 'by_lease'))
        if query.get('project_id', ctx.project_id) != ctx.project_id:
            inventory.authorize(PREFIX, 'get:all_projects')
        return {'usage': inventory.rpc().usage(ctx, query)}
