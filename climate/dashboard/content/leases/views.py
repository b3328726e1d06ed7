import datetime
import urllib.parse

from django.urls import reverse
from django.urls import reverse_lazy
from django.utils.translation import gettext_lazy as _
from horizon import exceptions
from horizon import forms
from horizon import tables
from horizon import tabs
from horizon import views
from horizon.utils import functions as horizon_functions
from horizon.utils import memoized

from climate import dates
from climate.dashboard.api import climate as climate_api
from climate.dashboard.content.hosts import calendar
from climate.dashboard.content.leases import forms as lease_forms
from climate.dashboard.content.leases import links
from climate.dashboard.content.leases import tables as lease_tables
from climate.dashboard.content.leases import tabs as lease_tabs
from climate.dashboard.content.leases import timeline
from climate.dashboard import display

INDEX_URL = 'horizon:project:leases:index'


class IndexView(tables.DataTableView):
    table_class = lease_tables.LeasesTable
    template_name = 'horizon/common/_data_table_view.html'
    page_title = _('Leases')

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._more = False
        self._prev = False

    def has_more_data(self, table):
        return self._more

    def has_prev_data(self, table):
        return self._prev

    def _filters(self):
        info = self.get_server_filter_info(self.request)
        value = (info.get('value') or '').strip()
        if not value:
            return {}
        if info.get('field') == 'status':
            return {'status': [value.upper()]}
        return {'name': value}

    def get_data(self):
        marker = self.request.GET.get(lease_tables.MARKER)
        prev_marker = self.request.GET.get(lease_tables.PREV_MARKER)
        page_size = horizon_functions.get_page_size(self.request)
        try:
            if prev_marker:
                # the page before: the API's order turned round from the
                # first lease shown, then read back in the table's order
                leases, more_before = climate_api.lease_list(
                    self.request, marker=prev_marker, limit=page_size,
                    sort_dir='asc', **self._filters())
                leases.reverse()
                self._prev, self._more = more_before, True
            else:
                leases, self._more = climate_api.lease_list(
                    self.request, marker=marker, limit=page_size,
                    sort_dir='desc', **self._filters())
                self._prev = bool(marker)
        except climate_api.ReservationError:
            exceptions.handle(self.request, _('Unable to list the leases.'))
            return []
        return leases


class LeaseOfURL:
    """A view of the lease its URL names, read once a request."""

    @memoized.memoized_method
    def get_lease(self):
        try:
            return climate_api.lease_get(self.request,
                                         self.kwargs['lease_id'])
        except climate_api.ReservationError:
            exceptions.handle(self.request,
                              _('Unable to read the lease.'),
                              redirect=reverse(INDEX_URL))


class DetailView(LeaseOfURL, tabs.TabbedTableView):
    tab_group_class = lease_tabs.LeaseDetailTabs
    template_name = 'horizon/common/_detail.html'
    page_title = '{{ lease.name|default:lease.id }}'

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        lease = self.get_lease()
        table = lease_tables.LeasesTable(self.request)
        context['lease'] = lease
        context['url'] = reverse(INDEX_URL)
        context['actions'] = table.render_row_actions(lease)
        return context

    def get_tabs(self, request, *args, **kwargs):
        return self.tab_group_class(request, lease=self.get_lease(),
                                    **kwargs)


class CreateView(forms.ModalFormView):
    form_class = lease_forms.CreateLeaseForm
    template_name = 'project/leases/create.html'
    modal_id = 'create_lease_modal'
    page_title = _('Create Lease')
    submit_label = _('Create')
    submit_url = reverse_lazy('horizon:project:leases:create')
    success_url = reverse_lazy(INDEX_URL)

    def get_initial(self):
        # a window chosen on the availability panel, or offered by a
        # refusal, arrives as the query
        return {key: self.request.GET[key] for key in links.PREFILLABLE
                if self.request.GET.get(key)}

    def get_success_url_from_handled(self, handled):
        # a series is listed with the other series
        if isinstance(handled, climate_api.Series):
            return reverse('horizon:project:lease_series:index')
        return self.get_success_url()


class UpdateView(LeaseOfURL, forms.ModalFormView):
    form_class = lease_forms.UpdateLeaseForm
    template_name = 'project/leases/update.html'
    modal_id = 'update_lease_modal'
    page_title = _('Update Lease')
    submit_label = _('Update')
    success_url = reverse_lazy(INDEX_URL)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context['submit_url'] = reverse('horizon:project:leases:update',
                                        args=[self.kwargs['lease_id']])
        return context

    def get_form_kwargs(self):
        kwargs = super().get_form_kwargs()
        kwargs['lease'] = self.get_lease()
        return kwargs

    def get_initial(self):
        lease = self.get_lease()
        return {'lease_id': self.kwargs['lease_id'], 'name': lease.name}


class TimelineView(views.HorizonTemplateView):
    """The project's leases over a window of 1, 7, 30 or 90 days: a bar
    each, a page of :data:`timeline.LANES` at a time."""
    template_name = 'project/leases/timeline.html'
    page_title = _('Leases Timeline')

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        params = self.request.GET
        start_text = params.get('start')
        if not start_text:
            # from the start of today (UTC) by default
            start_text = display.api_date(dates.utcnow().replace(
                hour=0, minute=0, second=0, microsecond=0))
        start, end, days = calendar.window(start_text, params.get('days'))
        marker = params.get('marker')
        context.update(start_text=display.api_date(start),
                       end_text=display.api_date(end), days=days,
                       lanes=[], more=None, first=None,
                       legend=timeline.LEGEND,
                       ticks=timeline.ticks(start, end))
        try:
            leases, more = climate_api.lease_window(
                self.request, display.api_date(start), display.api_date(end),
                timeline.LANES, marker=marker)
        except climate_api.ReservationError:
            exceptions.handle(self.request, _('Unable to list the leases.'))
            return context
        shown = dict(lease_tables.STATUS_DISPLAY)
        context['lanes'] = timeline.lanes(leases, start, end, shown)
        for lane in context['lanes']:
            lane['url'] = reverse('horizon:project:leases:detail',
                                  args=[lane['id']])
        if more and leases:
            context['more'] = self._link(start, days, leases[-1].id)
        if marker:
            context['first'] = self._link(start, days)
        step = datetime.timedelta(days=days)
        context['spans'] = [(span, self._link(start, span))
                            for span in calendar.SPANS]
        context['earlier'] = self._link(start - step, days)
        context['later'] = self._link(start + step, days)
        return context

    def _link(self, start, days, marker=None):
        query = {'start': display.api_date(start), 'days': days}
        if marker:
            query['marker'] = marker
        return '%s?%s' % (reverse('horizon:project:leases:timeline'),
                          urllib.parse.urlencode(query))
