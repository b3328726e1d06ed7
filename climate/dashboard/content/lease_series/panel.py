from django.utils.translation import gettext_lazy as _
import horizon

from climate.dashboard import policy


class LeaseSeries(horizon.Panel):
    name = _('Lease Series')
    slug = 'lease_series'
    permissions = (policy.SERVICE_PERMISSION,)
    policy_rules = policy.SERIES_LIST
