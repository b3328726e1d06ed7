from django.utils.translation import gettext_lazy as _
import horizon

from climate.dashboard import policy


class ReservationUsage(horizon.Panel):
    name = _('Usage & Quotas')
    slug = 'reservation_usage'
    permissions = (policy.SERVICE_PERMISSION,)
    policy_rules = policy.USAGE
