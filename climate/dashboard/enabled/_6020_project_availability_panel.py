# Project -> Reservations -> Availability ("When can I get it?").
PANEL = 'availability'
PANEL_DASHBOARD = 'project'
PANEL_GROUP = 'reservations'
ADD_PANEL = 'climate.dashboard.content.availability.panel.Availability'
