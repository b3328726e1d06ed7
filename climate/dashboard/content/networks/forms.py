from django.utils.translation import gettext_lazy as _
from horizon import forms

from climate.dashboard.api import climate as climate_api
from climate.dashboard.content import inventory
from climate.dashboard import form_fields
from climate.dashboard import validation

#: the highest segment id of each type (flat has none)
SEGMENT_MAX = {'vlan': 4094, 'vxlan': 16777215}


class CreateNetworkForm(form_fields.EscapedHelpTexts, inventory.CreateForm):
    network_type = forms.ThemableChoiceField(
        label=_('Type'), choices=(('vlan', 'VLAN'), ('vxlan', 'VXLAN'),
                                  ('flat', _('Flat'))))
    physical_network = forms.CharField(
        label=_('Physical network'), required=False, max_length=255,
        help_text=_('Required for VLAN and flat segments, none for VXLAN, '
                    'e.g. physnet1'))
    segment_id = forms.IntegerField(
        label=_('Segment id'), required=False, min_value=1,
        help_text=_('1-4094 for VLAN, 1-16777215 for VXLAN, none for '
                    'flat'))
    extra_capabilities = forms.CharField(
        label=_('Extra capabilities'), required=False,
        widget=forms.Textarea(attrs={'rows': 3}),
        help_text=_('One key=value a line, e.g. site=uc'))

    success = _('Network segment %s added.')

    def clean_extra_capabilities(self):
        return validation.key_values(
            self.cleaned_data['extra_capabilities'])

    def clean(self):
        data = super().clean()
        kind = data.get('network_type')
        physnet = (data.get('physical_network') or '').strip()
        segment = data.get('segment_id')
        if kind in ('vlan', 'flat') and not physnet:
            self.add_error('physical_network', _(
                'A VLAN or flat segment needs its physical network.'))
        if kind == 'vxlan' and physnet:
            self.add_error('physical_network', _(
                'A VXLAN segment has no physical network.'))
        if kind in SEGMENT_MAX:
            if segment is None:
                self.add_error('segment_id', _('A %s segment needs its '
                                               'id.') % kind.upper())
            elif segment > SEGMENT_MAX[kind]:
                self.add_error('segment_id', _(
                    'A %(kind)s segment id is at most %(max)d.') % {
                        'kind': kind.upper(), 'max': SEGMENT_MAX[kind]})
        elif kind == 'flat' and segment is not None:
            self.add_error('segment_id', _('A flat segment has no id.'))
        data['physical_network'] = physnet
        return data

    def create(self, request, data):
        body = dict(data.get('extra_capabilities') or {},
                    network_type=data['network_type'])
        if data['physical_network']:
            body['physical_network'] = data['physical_network']
        if data.get('segment_id') is not None:
            body['segment_id'] = data['segment_id']
        return climate_api.network_create(request, body)
