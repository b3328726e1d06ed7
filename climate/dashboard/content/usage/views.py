from django.utils.translation import gettext_lazy as _
from horizon import exceptions
from horizon import tables

from climate.dashboard.api import climate as climate_api
from climate.dashboard.content.usage import rows
from climate.dashboard.content.usage import tables as usage_tables
from climate.dashboard import display


class IndexView(tables.MultiTableView):
    table_classes = (usage_tables.UsageTable, usage_tables.QuotaTable)
    template_name = 'project/reservation_usage/index.html'
    page_title = _('Usage & Quotas')

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.usage = {}

    def get_usage_data(self):
        try:
            self.usage = climate_api.usage_get(self.request)
        except climate_api.ReservationError:
            exceptions.handle(self.request, _('Unable to read the usage.'))
            return []
        return rows.usage_rows(self.usage)

    def get_quotas_data(self):
        try:
            quota = climate_api.quota_get(self.request)
        except climate_api.ReservationError:
            exceptions.handle(self.request, _('Unable to read the quotas.'))
            return []
        return rows.quota_rows(quota)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context['period_start'] = display.short_date(self.usage.get('start'))
        context['period_end'] = display.short_date(self.usage.get('end'))
        context['bars'] = rows.usage_bars(self.usage)
        return context
