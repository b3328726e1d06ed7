"""The manager's RPC endpoint for ``/v1/networks``: the inventory is
``climate.plugins.network.inventory``; "not enabled" (404) when
``[manager] plugins`` lacks ``network.plugin``."""

from climate.manager import inventory
from climate.plugins.network import inventory as network_inventory

user_errors = inventory.user_errors


class NetworksEndpoint(inventory.InventoryEndpoint):
    """What the API may call about the registered network segments."""

    resource_type = 'network'
    kind = 'Network'
    entry_point = 'network.plugin'

    def make_inventory(self, plugin):
        return network_inventory.Inventory(plugin)

    @user_errors
    def network_list(self, ctx):
        return self.inventory.list(ctx)

    @user_errors
    def network_get(self, ctx, network_id):
        return self.inventory.get(ctx, network_id)

    @user_errors
    def network_create(self, ctx, body):
        return self.inventory.create(ctx, body)

    @user_errors
    def network_update(self, ctx, network_id, body):
        return self.inventory.update(ctx, network_id, body)

    @user_errors
    def network_delete(self, ctx, network_id):
        self.inventory.delete(ctx, network_id)
