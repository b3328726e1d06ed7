from django.urls import reverse_lazy
from django.utils.translation import gettext_lazy as _
from horizon import exceptions
from horizon import forms
from horizon import tables

from climate.dashboard.api import climate as climate_api
from climate.dashboard.content.hosts import forms as host_forms
from climate.dashboard.content.hosts import tables as host_tables


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
