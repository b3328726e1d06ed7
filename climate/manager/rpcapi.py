"""Client side of the manager's RPC API: the API process's only way in."""

from climate import rpc


class ManagerAPI:
    """Calls into climate-manager over oslo.messaging (topic
    ``climate.manager``)."""

    def __init__(self):
        self._client = rpc.get_client()
        self._fanout = rpc.get_client(fanout=True)

    def list_leases(self, ctx, **query):
        return self._client.call(ctx, 'list_leases', query=query)

    def get_lease(self, ctx, lease_id):
        return self._client.call(ctx, 'get_lease', lease_id=lease_id)

    def create_lease(self, ctx, body):
        return self._client.call(ctx, 'create_lease', body=body)

    def update_lease(self, ctx, lease_id, body):
        return self._client.call(ctx, 'update_lease', lease_id=lease_id,
                                 body=body)

    def delete_lease(self, ctx, lease_id):
        return self._client.call(ctx, 'delete_lease', lease_id=lease_id)

    def list_plugins(self, ctx):
        return self._client.call(ctx, 'list_plugins')

    def wake_all(self, ctx):
        """Tell every manager's event engine to look for due events."""
        self._fanout.cast(ctx, 'wake')
