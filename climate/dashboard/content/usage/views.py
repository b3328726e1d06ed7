from django.utils.translation import gettext_lazy as _
from horizon import exceptions
from horizon import tables

from climate.dashboard.api import climate as climate_api
from climate.dashboard.content.usage import rows
from climate.dashboard.content.usage import tables as usage_tables
from climate.dashboard import display


class IndexView(tables.MultiTableView):
    """One project's usage and quotas: the user's own (an administrator's
    view of another project names it: ``project_id``)."""
    table_classes = (usage_tables.UsageTable, usage_tables.QuotaTable)
    template_name = 'project/reservation_usage/index.html'
    page_title = _('Usage & Quotas')

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.usage = {}
        self.quota = {}

    def project_id(self):
        """The project shown; None: the user's."""
        return None

    def get_usage_data(self):
        try:
            self.usage = climate_api.usage_get(
                self.request, project_id=self.project_id())
        except climate_api.ReservationError:
            exceptions.handle(self.request, _('Unable to read the usage.'))
            return []
        return rows.usage_rows(self.usage)

    def get_quotas_data(self):
        try:
            self.quota = climate_api.quota_get(self.request,
                                               self.project_id())
        except climate_api.ReservationError:
            exceptions.handle(self.request, _('Unable to read the quotas.'))
            return []
        return rows.quota_rows(self.quota)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context['period_start'] = display.short_date(self.usage.get('start'))
        context['period_end'] = display.short_date(self.usage.get('end'))
        context['bars'] = rows.usage_bars(self.usage)
        context['quota_bars'] = rows.quota_bars(self.quota)
        return context
