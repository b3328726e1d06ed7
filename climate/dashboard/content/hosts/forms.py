from django.utils.translation import gettext_lazy as _
from horizon import forms
from horizon import messages

from climate.dashboard.api import climate as climate_api
from climate.dashboard import form_fields
from climate.dashboard import validation


class CreateHostForm(form_fields.EscapedHelpTexts, forms.SelfHandlingForm):
    name = forms.CharField(
        label=_('Compute host'), max_length=255,
        help_text=_("The hypervisor's host name, as Nova knows it"))
    extra_capabilities = forms.CharField(
        label=_('Extra capabilities'), required=False,
        widget=forms.Textarea(attrs={'rows': 4}),
        help_text=_('One key=value a line, e.g. gpu=true'))

    def clean_extra_capabilities(self):
        # the capabilities the lease filters read as ``$key``
        return validation.key_values(
            self.cleaned_data['extra_capabilities'])

    def handle(self, request, data):
        try:
            host = climate_api.host_create(request, data['name'],
                                           data['extra_capabilities'])
        except climate_api.ReservationError as exc:
            self.api_error(exc.message)
            return False
        messages.success(request, _('Host %s added to the reservable '
                                    'hosts.') % host.name)
        return host
