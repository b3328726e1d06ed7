from django.utils.translation import gettext_lazy as _
import horizon

from climate.dashboard import policy


class ReservationHosts(horizon.Panel):
    name = _('Hosts')
    slug = 'reservation_hosts'
    # the inventory is the operators': members never see it
    permissions = (policy.SERVICE_PERMISSION, policy.ADMIN_PERMISSION)
    policy_rules = policy.HOST_LIST
