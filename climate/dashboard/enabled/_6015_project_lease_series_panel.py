# Project -> Reservations -> Lease Series (/v1/lease-series, 1.15).
PANEL = 'lease_series'
PANEL_DASHBOARD = 'project'
PANEL_GROUP = 'reservations'
ADD_PANEL = 'climate.dashboard.content.lease_series.panel.LeaseSeries'
