# The "Reservations" group of the Project dashboard, which Climate's
# project panels join.  It also installs the app (translations, static
# files): every other file of this folder needs this one, and no other
# adds the app again (Django refuses an app listed twice).
from django.utils.translation import gettext_lazy as _

PANEL_GROUP = 'reservations'
PANEL_GROUP_NAME = _('Reservations')
PANEL_GROUP_DASHBOARD = 'project'
ADD_INSTALLED_APPS = ['climate.dashboard']
