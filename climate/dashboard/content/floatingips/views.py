from django.urls import reverse_lazy
from django.utils.translation import gettext_lazy as _
from horizon import forms

from climate.dashboard.content.floatingips import forms as fip_forms
from climate.dashboard.content.floatingips import tables as fip_tables
from climate.dashboard.content import inventory


class IndexView(inventory.ListView):
    table_class = fip_tables.FloatingIPsTable
    page_title = _('Reservable Floating IPs')
    api_list = 'floatingip_list'
    error = _('Unable to list the floating IPs.')


class CreateView(forms.ModalFormView):
    form_class = fip_forms.CreateFloatingIPForm
    template_name = 'admin/reservation_floatingips/create.html'
    modal_id = 'create_floatingip_modal'
    page_title = _('Add Floating IP')
    submit_label = _('Add')
    submit_url = reverse_lazy('horizon:admin:reservation_floatingips:create')
    success_url = reverse_lazy('horizon:admin:reservation_floatingips:index')
