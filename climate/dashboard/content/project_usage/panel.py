from django.utils.translation import gettext_lazy as _
import horizon

from climate.dashboard import policy


class ReservationProjects(horizon.Panel):
    name = _('Project Usage')
    slug = 'reservation_projects'
    # another project's usage is the operators' (the API refuses it to
    # anyone else: climate:usage:get:all_projects)
    permissions = (policy.SERVICE_PERMISSION, policy.ADMIN_PERMISSION)
    policy_rules = policy.USAGE_ALL_PROJECTS
