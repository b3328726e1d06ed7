from django.urls import reverse_lazy
from django.utils.translation import gettext_lazy as _
from horizon import forms

from climate.dashboard.content import inventory
from climate.dashboard.content.networks import forms as network_forms
from climate.dashboard.content.networks import tables as network_tables


class IndexView(inventory.ListView):
    table_class = network_tables.NetworksTable
    page_title = _('Reservable Network Segments')
    api_list = 'network_list'
    error = _('Unable to list the network segments.')


class CreateView(forms.ModalFormView):
    form_class = network_forms.CreateNetworkForm
    template_name = 'admin/reservation_networks/create.html'
    modal_id = 'create_network_modal'
    page_title = _('Add Network Segment')
    submit_label = _('Add')
    submit_url = reverse_lazy('horizon:admin:reservation_networks:create')
    success_url = reverse_lazy('horizon:admin:reservation_networks:index')
