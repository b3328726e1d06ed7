# Admin -> Reservations -> Project Usage (/v1/usage and /v1/quotas of
# every project).
PANEL = 'reservation_projects'
PANEL_DASHBOARD = 'admin'
PANEL_GROUP = 'reservations'
ADD_PANEL = ('climate.dashboard.content.project_usage.panel.'
             'ReservationProjects')
