# Admin -> Reservations -> Floating IPs (/v1/floatingips).
PANEL = 'reservation_floatingips'
PANEL_DASHBOARD = 'admin'
PANEL_GROUP = 'reservations'
ADD_PANEL = 'climate.dashboard.content.floatingips.panel.ReservationFloatingIPs'
