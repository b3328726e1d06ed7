from django.utils.translation import gettext_lazy as _
from horizon import forms

from climate.dashboard.api import climate as climate_api
from climate.dashboard.content import inventory
from climate.dashboard import form_fields
from climate.dashboard import validation


class CreatePoolForm(form_fields.EscapedHelpTexts, inventory.CreateForm):
    name = forms.CharField(
        label=_('Pool name'), max_length=255,
        help_text=_("Cinder's host@backend#pool, or a name of your own"))
    total_capacity_gb = forms.IntegerField(
        label=_('Total capacity (GB)'), min_value=1)
    backend = forms.CharField(
        label=_('Backend'), required=False, max_length=255,
        help_text=_('Default: the backend of host@backend#pool, or the '
                    'name'))
    reserved_percentage = forms.IntegerField(
        label=_('Reserved percentage'), required=False, min_value=0,
        max_value=100, help_text=_('Kept out of the reservable capacity; '
                                   'default 0'))
    max_over_subscription_ratio = forms.FloatField(
        label=_('Over-subscription ratio'), required=False, min_value=0.01,
        help_text=_('Default 1.0'))
    reservable = forms.BooleanField(label=_('Reservable'), required=False,
                                    initial=True)
    capabilities = forms.CharField(
        label=_('Capabilities'), required=False,
        widget=forms.Textarea(attrs={'rows': 4}),
        help_text=_('One key=value a line, e.g. volume_types=fast,slow'))

    success = _('Volume pool %s added.')

    def clean_capabilities(self):
        return validation.key_values(self.cleaned_data['capabilities'])

    def create(self, request, data):
        body = {'name': data['name'],
                'total_capacity_gb': data['total_capacity_gb'],
                'reservable': bool(data['reservable'])}
        for key in ('backend', 'reserved_percentage',
                    'max_over_subscription_ratio'):
            if data.get(key) not in (None, ''):
                body[key] = data[key]
        if data['capabilities']:
            body['capabilities'] = data['capabilities']
        return climate_api.volume_pool_create(request, body)
