"""The Climate policy rules the panels check before showing a panel or an
action (Horizon's ``policy_rules``).

They are the rules of Climate's own policy (``climate/policies``) under
the ``reservation`` scope: an operator who gives Horizon Climate's policy
file (``POLICY_FILES['reservation']``) hides what the API would refuse.
Without that file Horizon allows them, and the API still decides.
"""

SCOPE = 'reservation'


def rules(*names):
    """Horizon ``policy_rules`` of Climate rule names."""
    return tuple((SCOPE, 'climate:%s' % name) for name in names)


LEASE_LIST = rules('leases:list')
LEASE_GET = rules('leases:get')
LEASE_CREATE = rules('leases:create')
LEASE_UPDATE = rules('leases:update')
LEASE_DELETE = rules('leases:delete')
LEASE_CONFIRM = rules('leases:confirm')
SERIES_LIST = rules('lease_series:list')
SERIES_GET = rules('lease_series:get')
SERIES_CREATE = rules('lease_series:create')
SERIES_DELETE = rules('lease_series:delete')
HOST_AVAILABILITY = rules('oshosts:availability')
HOST_LIST = rules('oshosts:get_all')
HOST_TIMELINE = rules('oshosts:timeline')
HOST_CREATE = rules('oshosts:post')
HOST_DELETE = rules('oshosts:delete')
VOLUME_POOL_LIST = rules('volume_pools:get_all')
VOLUME_POOL_CREATE = rules('volume_pools:post')
VOLUME_POOL_DELETE = rules('volume_pools:delete')
FLOATINGIP_LIST = rules('floatingips:get_all')
FLOATINGIP_CREATE = rules('floatingips:post')
FLOATINGIP_DELETE = rules('floatingips:delete')
NETWORK_LIST = rules('networks:get_all')
NETWORK_CREATE = rules('networks:post')
NETWORK_DELETE = rules('networks:delete')
MAINTENANCE_LIST = rules('maintenance:list')
MAINTENANCE_CREATE = rules('maintenance:create')
MAINTENANCE_DELETE = rules('maintenance:delete')
HEALTH = rules('health:get')
USAGE = rules('usage:get')
USAGE_ALL_PROJECTS = rules('usage:get:all_projects')
QUOTA = rules('quotas:get')
QUOTA_LIST = rules('quotas:get_all')

#: what a panel of the reservation service needs in the user's catalog
SERVICE_PERMISSION = 'openstack.services.reservation'
ADMIN_PERMISSION = 'openstack.roles.admin'
