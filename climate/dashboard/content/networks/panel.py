from django.utils.translation import gettext_lazy as _
import horizon

from climate.dashboard import policy


class ReservationNetworks(horizon.Panel):
    name = _('Network Segments')
    slug = 'reservation_networks'
    # the inventory is the operators': members never see it
    permissions = (policy.SERVICE_PERMISSION, policy.ADMIN_PERMISSION)
    policy_rules = policy.NETWORK_LIST
