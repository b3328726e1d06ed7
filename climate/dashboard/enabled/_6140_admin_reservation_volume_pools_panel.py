# Admin -> Reservations -> Volume Pools (/v1/volume-pools, microversion 1.5).
PANEL = 'reservation_volume_pools'
PANEL_DASHBOARD = 'admin'
PANEL_GROUP = 'reservations'
ADD_PANEL = 'climate.dashboard.content.volume_pools.panel.ReservationVolumePools'
