# Project -> Reservations -> Usage & Quotas.
PANEL = 'reservation_usage'
PANEL_DASHBOARD = 'project'
PANEL_GROUP = 'reservations'
ADD_PANEL = 'climate.dashboard.content.usage.panel.ReservationUsage'
