"""The manager's RPC endpoint for ``/v1/volume-pools`` (1.5; their
allocations, 1.6) and ``/v1/volumes/availability`` (1.6).

The inventory is ``climate.plugins.virtual_volume.inventory``, the
allocations ``climate.plugins.virtual_volume.allocations``, the search
``climate.plugins.virtual_volume.availability``; this endpoint answers
"not enabled" (404) when ``[manager] plugins`` lacks
``virtual.volume.plugin``.
"""

from climate.manager import inventory
from climate.plugins.virtual_volume import allocations
from climate.plugins.virtual_volume import availability
from climate.plugins.virtual_volume import inventory as pool_inventory

_user_errors = inventory.user_errors


class VolumePoolsEndpoint(inventory.InventoryEndpoint):
    """What the API may call about volume pools and volume capacity."""

    resource_type = 'virtual:volume'
    kind = 'Volume'
    entry_point = 'virtual.volume.plugin'

    def make_inventory(self, plugin):
        return pool_inventory.Inventory()

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

    @_user_errors
    def volume_pool_allocations(self, ctx, lease_id=None,
                                reservation_id=None):
        self.plugin()
        return allocations.allocations(ctx, lease_id, reservation_id)

    @_user_errors
    def volume_availability(self, ctx, query):
        """The earliest windows where the volume reservation asked for
        fits (``climate.plugins.virtual_volume.availability``)."""
        return availability.search(self.plugin(), ctx, query)
