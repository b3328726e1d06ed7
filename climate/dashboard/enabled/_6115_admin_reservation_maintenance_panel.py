# Admin -> Reservations -> Maintenance (/v1/maintenance-windows, 1.16).
PANEL = 'reservation_maintenance'
PANEL_DASHBOARD = 'admin'
PANEL_GROUP = 'reservations'
ADD_PANEL = ('climate.dashboard.content.maintenance.panel.'
             'ReservationMaintenance')
