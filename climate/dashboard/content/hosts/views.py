import datetime
import urllib.parse

from django.urls import reverse
from django.urls import reverse_lazy
from django.utils.translation import gettext_lazy as _
from horizon import exceptions
from horizon import forms
from horizon import tables
from horizon import views

from climate.dashboard.api import climate as climate_api
from climate.dashboard.content.hosts import calendar
from climate.dashboard.content.hosts import forms as host_forms
from climate.dashboard.content.hosts import tables as host_tables
from climate.dashboard import display


class IndexView(tables.DataTableView):
    table_class = host_tables.HostsTable
    template_name = 'horizon/common/_data_table_view.html'
    page_title = _('Reservable Hosts')

    def get_data(self):
        try:
            return climate_api.host_list(self.request)
        except climate_api.ReservationError:
            exceptions.handle(self.request, _('Unable to list the hosts.'))
            return []


class CreateView(forms.ModalFormView):
    form_class = host_forms.CreateHostForm
    template_name = 'admin/reservation_hosts/create.html'
    modal_id = 'create_host_modal'
    page_title = _('Add Host')
    submit_label = _('Add')
    submit_url = reverse_lazy('horizon:admin:reservation_hosts:create')
    success_url = reverse_lazy('horizon:admin:reservation_hosts:index')


class CalendarView(views.HorizonTemplateView):
    """How many reservable hosts are booked over a window: the API's
    timeline (counts, aggregated by the service) in columns."""
    template_name = 'admin/reservation_hosts/calendar.html'
    page_title = _('Hosts Calendar')

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        start, end, days = calendar.window(self.request.GET.get('start'),
                                           self.request.GET.get('days'))
        context.update(start=start, end=end, days=days, columns=[],
                       matching_hosts=None)
        try:
            answer = climate_api.host_timeline(
                self.request, display.api_date(start), display.api_date(end))
        except climate_api.ReservationError:
            exceptions.handle(self.request,
                              _('Unable to read the hosts\' timeline.'))
            return context
        cols = calendar.columns(answer)
        for col in cols:
            col['start_text'] = display.api_date(col['start'])
            col['end_text'] = display.api_date(col['end'])
        context['columns'] = cols
        context['matching_hosts'] = answer.get('matching_hosts') or 0
        context['busiest'] = max((c['most'] for c in cols), default=0)
        step = datetime.timedelta(days=days)
        context['spans'] = [
            (span, self._link(start, span)) for span in calendar.SPANS]
        context['earlier'] = self._link(start - step, days)
        context['later'] = self._link(start + step, days)
        context['start_text'] = display.api_date(start)
        context['end_text'] = display.api_date(end)
        return context

    def _link(self, start, days):
        return '%s?%s' % (
            reverse('horizon:admin:reservation_hosts:calendar'),
            urllib.parse.urlencode({'start': display.api_date(start),
                                    'days': days}))
