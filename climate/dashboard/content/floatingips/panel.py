from django.utils.translation import gettext_lazy as _
import horizon

from climate.dashboard import policy


class ReservationFloatingIPs(horizon.Panel):
    name = _('Floating IPs')
    slug = 'reservation_floatingips'
    # the inventory is the operators': members never see it
    permissions = (policy.SERVICE_PERMISSION, policy.ADMIN_PERMISSION)
    policy_rules = policy.FLOATINGIP_LIST
