"""What the admin inventories (volume pools, floating IPs, network
segments) share: their list views, their delete action and their create
forms' handling, the API's refusal shown as the API words it."""

from django.utils.translation import gettext_lazy as _
from horizon import exceptions
from horizon import forms
from horizon import messages
from horizon import tables

from climate.dashboard.api import climate as climate_api
from climate.dashboard import display


class DeleteInventory(tables.DeleteAction):
    """Deletes through ``climate_api.<api_delete>(request, id)``; the API
    refuses what a booking not yet over holds, and the page says its
    reason."""

    api_delete = None

    def delete(self, request, obj_id):
        try:
            getattr(climate_api, self.api_delete)(request, obj_id)
        except climate_api.ReservationError as exc:
            messages.error(request, exc.message)
            raise


class InventoryFilter(tables.FilterAction):
    # the whole inventory is one listing: filtered in the page
    filter_type = 'query'


class ListView(tables.DataTableView):
    """``climate_api.<api_list>(request)``, or the API's refusal said."""
    template_name = 'horizon/common/_data_table_view.html'
    api_list = None
    error = _('Unable to list the inventory.')

    def get_data(self):
        try:
            return getattr(climate_api, self.api_list)(self.request)
        except climate_api.ReservationError:
            exceptions.handle(self.request, self.error)
            return []


class CreateForm(forms.SelfHandlingForm):
    """``create(request, data)`` makes the item; the API's refusal stays
    in the form with its sentence."""

    success = _('%s added.')

    def create(self, request, data):
        raise NotImplementedError

    def handle(self, request, data):
        try:
            item = self.create(request, data)
        except climate_api.ReservationError as exc:
            self.api_error(exc.message)
            return False
        messages.success(request, self.success % item.name)
        return item


def yes_no(value):
    if value is None:
        return display.MISSING
    return _('Yes') if value else _('No')
