from django.utils.translation import gettext_lazy as _
import horizon

from climate.dashboard import policy


class Availability(horizon.Panel):
    name = _('Availability')
    slug = 'availability'
    permissions = (policy.SERVICE_PERMISSION,)
    policy_rules = policy.HOST_AVAILABILITY
