# Admin -> Reservations -> Health (/v1/health).
PANEL = 'reservation_health'
PANEL_DASHBOARD = 'admin'
PANEL_GROUP = 'reservations'
ADD_PANEL = 'climate.dashboard.content.health.panel.ReservationHealth'
