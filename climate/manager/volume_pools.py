"""The manager's RPC endpoint for ``/v1/volume-pools``.

The inventory is ``climate.plugins.virtual_volume.inventory``; this
endpoint answers "not enabled" (404) when ``[manager] plugins`` lacks
``virtual.volume.plugin``.
"""

import oslo_messaging as messaging

from climate import exceptions
from climate.plugins.virtual_volume import inventory as pool_inventory

RESOURCE_TYPE = 'virtual:volume'

_user_errors = messaging.expected_exceptions(exceptions.ClimateException)


class VolumePoolsEndpoint:
    """What the API may call about volume pools; every method takes the
    caller's context (authorization is the API's job)."""

    target = messaging.Target(version='1.0')

    def __init__(self, plugins):
        self._plugins = plugins
        self._inventory = None

    @property
    def inventory(self):
        if self._inventory is None:
            try:
                self._plugins.get(RESOURCE_TYPE)
            except exceptions.UnsupportedResourceType:
                raise exceptions.NotFound(
                    message='Volume reservations are not enabled on this '
                            'cloud ([manager] plugins lacks '
                            'virtual.volume.plugin).')
            self._inventory = pool_inventory.Inventory()
        return self._inventory

    @_user_errors
    def volume_pool_list(self, ctx):
        return self.inventory.list(ctx)

    @_user_errors
    def volume_pool_get(self, ctx, pool_id):
        return self.inventory.get(ctx, pool_id)

    @_user_errors
    def volume_pool_create(self, ctx, body):
        return self.inventory.create(ctx, body)

    @_user_errors
    def volume_pool_update(self, ctx, pool_id, body):
        return self.inventory.update(ctx, pool_id, body)

    @_user_errors
    def volume_pool_delete(self, ctx, pool_id):
        self.inventory.delete(ctx, pool_id)
