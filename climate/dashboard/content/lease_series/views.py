from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from horizon import exceptions
from horizon import tables
from horizon.utils import memoized

from climate.dashboard.api import climate as climate_api
from climate.dashboard.content.lease_series import tables as series_tables
from climate.dashboard import display

INDEX_URL = 'horizon:project:lease_series:index'


class IndexView(tables.DataTableView):
    table_class = series_tables.SeriesTable
    template_name = 'project/lease_series/index.html'
    page_title = _('Lease Series')

    def get_data(self):
        try:
            return climate_api.series_list(self.request)
        except climate_api.ReservationError:
            exceptions.handle(self.request, _('Unable to list the series.'))
            return []


class DetailView(tables.MultiTableView):
    table_classes = (series_tables.OccurrencesTable,
                     series_tables.SkippedTable)
    template_name = 'project/lease_series/detail.html'
    page_title = '{{ series.name }}'

    @memoized.memoized_method
    def get_series(self):
        try:
            return climate_api.series_get(self.request,
                                          self.kwargs['series_id'])
        except climate_api.ReservationError:
            exceptions.handle(self.request, _('Unable to read the series.'),
                              redirect=reverse(INDEX_URL))

    def get_occurrences_data(self):
        rows = []
        for occ in self.get_series().occurrences or []:
            row = climate_api.Row(occ.get('lease_id') or occ.get('occurrence'),
                                  occ)
            row.fields['url'] = reverse('horizon:project:leases:detail',
                                        args=[occ.get('lease_id')]) \
                if occ.get('lease_id') else None
            rows.append(row)
        return rows

    def get_skipped_data(self):
        return [climate_api.Row(item.get('occurrence'), item)
                for item in self.get_series().skipped or []]

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        series = self.get_series()
        context['series'] = series
        context['status'] = dict(series_tables.STATUS_DISPLAY).get(
            series.status, series.status)
        context['next_start'] = display.short_date(series.next_start_date)
        context['first_start'] = display.short_date(series.start_date)
        context['first_end'] = display.short_date(series.end_date)
        context['url'] = reverse(INDEX_URL)
        return context
