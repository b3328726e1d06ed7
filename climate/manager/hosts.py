"""The manager's RPC endpoint for ``/v1/os-hosts``, and periodic healing.

The inventory lives in the ``physical:host`` plugin
(``climate.plugins.physical_host.inventory``); this endpoint finds the
loaded plugin and answers "not enabled" (404) when ``[manager] plugins``
lacks it.
"""

import oslo_messaging as messaging
from oslo_log import log as logging

from climate import context as climate_context
from climate import exceptions
from climate.manager import host_power
from climate.manager.workers import periodic
from climate.plugins.physical_host import inventory as host_inventory

LOG = logging.getLogger(__name__)
RESOURCE_TYPE = 'physical:host'

_user_errors = messaging.expected_exceptions(exceptions.ClimateException)


class HostsEndpoint:
    """What the API may call about hosts; every method takes the caller's
    context (authorization is the API's job)."""

    target = messaging.Target(version='1.0')

    def __init__(self, plugins):
        self._plugins = plugins
        self._inventory = None

    def _plugin(self):
        """The loaded host plugin; NotFound (404) when none is."""
        return self._plugins.enabled(RESOURCE_TYPE, 'Host',
                                     'physical.host.plugin')

    @property
    def inventory(self):
        if self._inventory is None:
            self._inventory = host_inventory.Inventory(self._plugin())
        return self._inventory

    @_user_errors
    def host_list(self, ctx):
        return self.inventory.list(ctx)

    @_user_errors
    def host_pool_summary(self, ctx):
        return self.inventory.pool_summary(ctx)

    @_user_errors
    def host_get(self, ctx, host_id):
        return self.inventory.get(ctx, host_id)

    @_user_errors
    def host_create(self, ctx, body):
        return self.inventory.create(ctx, body)

    @_user_errors
    def host_update(self, ctx, host_id, body):
        return self.inventory.update(ctx, host_id, body)

    @_user_errors
    def host_delete(self, ctx, host_id):
        self.inventory.delete(ctx, host_id)

    @_user_errors
    def host_allocations(self, ctx, lease_id=None, reservation_id=None):
        return self.inventory.allocations(ctx, lease_id, reservation_id)

    @_user_errors
    def host_allocation(self, ctx, host_id, lease_id=None,
                        reservation_id=None):
        return self.inventory.allocation(ctx, host_id, lease_id,
                                         reservation_id)

    @_user_errors
    def host_power_list(self, ctx):
        self._plugin()
        return host_power.power_list(ctx)

    @_user_errors
    def host_power_get(self, ctx, host_id, query):
        self._plugin()
        return host_power.power_get(ctx, host_id, query)

    @_user_errors
    def host_energy(self, ctx, query):
        self._plugin()
        return host_power.energy_report(ctx, query)

    @_user_errors
    def host_properties(self, ctx, detail=False, include_private=False):
        return self.inventory.properties(ctx, detail, include_private)

    @_user_errors
    def host_property_update(self, ctx, name, body):
        return self.inventory.set_property(ctx, name, body)

    @_user_errors
    def host_availability(self, ctx, query):
        return self.inventory.availability(ctx, query)

    @_user_errors
    def host_timeline(self, ctx, query):
        return self.inventory.timeline(ctx, query)


class Healer(periodic.PeriodicTask):
    """Calls ``heal`` of every plugin that has a ``heal_interval``, every
    shortest such interval.  Several managers may heal at once: plugins
    lock what they repair."""

    name = 'climate-healer'

    def __init__(self, plugins):
        super().__init__()
        self._plugins = [p for p in plugins
                         if getattr(p, 'heal_interval', 0)]

    def interval(self):
        return min((p.heal_interval for p in self._plugins), default=0)

    def run_once(self):
        """One healing pass of every plugin; returns the changed ids."""
        changed = []
        for plugin in self._plugins:
            ctx = climate_context.admin_context()
            try:
                changed.extend(plugin.heal(ctx))
            except exceptions.CloudUnavailable as exc:
                # an outage, said once per pass: the next pass retries
                LOG.warning('Healing by %s waits for the cloud: %s',
                            plugin.resource_type, exc)
            except Exception:
                LOG.exception('Healing by %s failed', plugin.resource_type)
        if changed:
            LOG.info('Healing changed reservations %s', ', '.join(changed))
        return changed
