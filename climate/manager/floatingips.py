"""The manager's RPC endpoint for ``/v1/floatingips`` (Blazar's 1.0 API):
the inventory is ``climate.plugins.virtual_floatingip.inventory``; "not
enabled" (404) when ``[manager] plugins`` lacks
``virtual.floatingip.plugin``."""

from climate.manager import inventory
from climate.plugins.virtual_floatingip import inventory as fip_inventory

user_errors = inventory.user_errors


class FloatingIPsEndpoint(inventory.InventoryEndpoint):
    """What the API may call about the registered floating IPs."""

    resource_type = 'virtual:floatingip'
    kind = 'Floating IP'
    entry_point = 'virtual.floatingip.plugin'

    def make_inventory(self, plugin):
        return fip_inventory.Inventory(plugin)

    @user_errors
    def floatingip_list(self, ctx):
        return self.inventory.list(ctx)

    @user_errors
    def floatingip_get(self, ctx, floatingip_id):
        return self.inventory.get(ctx, floatingip_id)

    @user_errors
    def floatingip_create(self, ctx, body):
        return self.inventory.create(ctx, body)

    @user_errors
    def floatingip_delete(self, ctx, floatingip_id):
        self.inventory.delete(ctx, floatingip_id)
