from django.urls import reverse_lazy
from django.utils.translation import gettext_lazy as _
from horizon import forms

from climate.dashboard.content import inventory
from climate.dashboard.content.volume_pools import forms as pool_forms
from climate.dashboard.content.volume_pools import tables as pool_tables


class IndexView(inventory.ListView):
    table_class = pool_tables.VolumePoolsTable
    page_title = _('Reservable Volume Pools')
    api_list = 'volume_pool_list'
    error = _('Unable to list the volume pools.')


class CreateView(forms.ModalFormView):
    form_class = pool_forms.CreatePoolForm
    template_name = 'admin/reservation_volume_pools/create.html'
    modal_id = 'create_volume_pool_modal'
    page_title = _('Add Volume Pool')
    submit_label = _('Add')
    submit_url = reverse_lazy('horizon:admin:reservation_volume_pools:create')
    success_url = reverse_lazy('horizon:admin:reservation_volume_pools:index')
