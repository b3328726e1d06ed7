# Project -> Reservations -> Leases.
PANEL = 'leases'
PANEL_DASHBOARD = 'project'
PANEL_GROUP = 'reservations'
ADD_PANEL = 'climate.dashboard.content.leases.panel.Leases'
