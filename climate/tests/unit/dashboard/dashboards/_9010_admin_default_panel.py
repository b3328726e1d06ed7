# The admin dashboard's default panel (Horizon's is not loaded here).
PANEL = 'reservation_hosts'
PANEL_DASHBOARD = 'admin'
PANEL_GROUP = 'reservations'
DEFAULT_PANEL = 'reservation_hosts'
