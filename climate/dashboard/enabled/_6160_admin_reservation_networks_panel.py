# Admin -> Reservations -> Network Segments (/v1/networks).
PANEL = 'reservation_networks'
PANEL_DASHBOARD = 'admin'
PANEL_GROUP = 'reservations'
ADD_PANEL = 'climate.dashboard.content.networks.panel.ReservationNetworks'
