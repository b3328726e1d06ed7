from django.utils.translation import gettext_lazy as _
import horizon

from climate.dashboard import policy


class ReservationHealth(horizon.Panel):
    name = _('Health')
    slug = 'reservation_health'
    permissions = (policy.SERVICE_PERMISSION, policy.ADMIN_PERMISSION)
    policy_rules = policy.HEALTH
