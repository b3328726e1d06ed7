from django.utils.translation import gettext_lazy as _
from horizon import exceptions
from horizon import tables

from climate.dashboard.api import climate as climate_api
from climate.dashboard.content.health import tables as health_tables
from climate.dashboard import display


class IndexView(tables.DataTableView):
    table_class = health_tables.ChecksTable
    template_name = 'admin/reservation_health/index.html'
    page_title = _('Reservation Service Health')

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.report = None

    def get_data(self):
        try:
            self.report = climate_api.health_get(self.request)
        except climate_api.ReservationError:
            exceptions.handle(self.request,
                              _('Unable to read the service health.'))
            return []
        checks = self.report.get('checks') or {}
        return [climate_api.Row(name, check)
                for name, check in sorted(checks.items())]

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        report = self.report or {}
        events = report.get('events') or {}
        context['healthy'] = report.get('status') == 'ok'
        context['report'] = report
        context['events'] = events
        context['oldest_overdue'] = display.short_date(
            events.get('oldest_overdue'))
        return context
