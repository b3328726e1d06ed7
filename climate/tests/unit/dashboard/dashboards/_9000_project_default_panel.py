# The project dashboard needs a default panel; Horizon's (overview) is not
# loaded here.
PANEL = 'leases'
PANEL_DASHBOARD = 'project'
PANEL_GROUP = 'reservations'
DEFAULT_PANEL = 'leases'
