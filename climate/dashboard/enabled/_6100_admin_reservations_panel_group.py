# The "Reservations" group of the Admin dashboard.
from django.utils.translation import gettext_lazy as _

PANEL_GROUP = 'reservations'
PANEL_GROUP_NAME = _('Reservations')
PANEL_GROUP_DASHBOARD = 'admin'
