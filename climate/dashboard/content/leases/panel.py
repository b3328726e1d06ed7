from django.utils.translation import gettext_lazy as _
import horizon

from climate.dashboard import policy


class Leases(horizon.Panel):
    name = _('Leases')
    slug = 'leases'
    permissions = (policy.SERVICE_PERMISSION,)
    policy_rules = policy.LEASE_LIST
