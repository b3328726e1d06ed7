"""Client side of the manager's RPC API: the API process's only way in."""

from climate import rpc


class ManagerAPI:
    """Calls into climate-manager over oslo.messaging (topic
    ``climate.manager``)."""

    def __init__(self):
        self._client = rpc.get_client()
        self._fanout = rpc.get_client(fanout=True)

    def list_leases(self, ctx, **query):
        """A page of leases: ``{'leases_zlib': the JSON text of the array,
        deflated, 'count', 'last_id'}`` (``climate.manager.views.lease_page``;
        ``views.page_leases`` gives the text)."""
        return self._client.call(ctx, 'list_leases',
                                 query=dict(query, compressed=True))

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

    # -- /v1/os-hosts (climate.manager.hosts) ------------------------------

    def host_list(self, ctx):
        return self._client.call(ctx, 'host_list')

    def host_get(self, ctx, host_id):
        return self._client.call(ctx, 'host_get', host_id=host_id)

    def host_create(self, ctx, body):
        return self._client.call(ctx, 'host_create', body=body)

    def host_update(self, ctx, host_id, body):
        return self._client.call(ctx, 'host_update', host_id=host_id,
                                 body=body)

    def host_delete(self, ctx, host_id):
        return self._client.call(ctx, 'host_delete', host_id=host_id)

    def host_allocations(self, ctx, lease_id=None, reservation_id=None):
        return self._client.call(ctx, 'host_allocations', lease_id=lease_id,
                                 reservation_id=reservation_id)

    def host_allocation(self, ctx, host_id, lease_id=None,
                        reservation_id=None):
        return self._client.call(ctx, 'host_allocation', host_id=host_id,
                                 lease_id=lease_id,
                                 reservation_id=reservation_id)

    def host_properties(self, ctx, detail=False, include_private=False):
        return self._client.call(ctx, 'host_properties', detail=detail,
                                 include_private=include_private)

    def host_property_update(self, ctx, name, body):
        return self._client.call(ctx, 'host_property_update', name=name,
                                 body=body)

    def host_availability(self, ctx, query):
        return self._client.call(ctx, 'host_availability', query=query)

    def host_timeline(self, ctx, query):
        return self._client.call(ctx, 'host_timeline', query=query)

    def wake_all(self, ctx):
        """Tell every manager's event engine to look for due events."""
        self._fanout.cast(ctx, 'wake')
