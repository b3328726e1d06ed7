import ipaddress

from django.core import exceptions as django_exceptions
from django.utils.translation import gettext_lazy as _
from horizon import forms

from climate.dashboard.api import climate as climate_api
from climate.dashboard.content import inventory
from climate.dashboard import form_fields


class CreateFloatingIPForm(form_fields.EscapedHelpTexts,
                           inventory.CreateForm):
    floating_network_id = forms.CharField(
        label=_('External network'), max_length=255,
        help_text=_("The Neutron network's id"))
    floating_ip_address = forms.CharField(
        label=_('Address'), max_length=64,
        help_text=_('An address of one of its subnets, outside their '
                    'allocation pools, e.g. 172.24.4.200'))

    success = _('Floating IP %s added.')

    def clean_floating_ip_address(self):
        text = self.cleaned_data['floating_ip_address'].strip()
        try:
            return str(ipaddress.ip_address(text))
        except ValueError:
            raise django_exceptions.ValidationError(
                _('%s is not an IP address.') % text)

    def create(self, request, data):
        return climate_api.floatingip_create(
            request, data['floating_network_id'].strip(),
            data['floating_ip_address'])
