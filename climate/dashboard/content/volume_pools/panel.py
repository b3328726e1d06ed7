from django.utils.translation import gettext_lazy as _
import horizon

from climate.dashboard import policy


class ReservationVolumePools(horizon.Panel):
    name = _('Volume Pools')
    slug = 'reservation_volume_pools'
    # the inventory is the operators': members never see it
    permissions = (policy.SERVICE_PERMISSION, policy.ADMIN_PERMISSION)
    policy_rules = policy.VOLUME_POOL_LIST
