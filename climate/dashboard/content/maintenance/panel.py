from django.utils.translation import gettext_lazy as _
import horizon

from climate.dashboard import policy


class ReservationMaintenance(horizon.Panel):
    name = _('Maintenance')
    slug = 'reservation_maintenance'
    permissions = (policy.SERVICE_PERMISSION, policy.ADMIN_PERMISSION)
    policy_rules = policy.MAINTENANCE_LIST
