# Admin -> Reservations -> Hosts (/v1/os-hosts).
PANEL = 'reservation_hosts'
PANEL_DASHBOARD = 'admin'
PANEL_GROUP = 'reservations'
ADD_PANEL = 'climate.dashboard.content.hosts.panel.ReservationHosts'
