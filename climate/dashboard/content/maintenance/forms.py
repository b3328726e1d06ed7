from django.utils.translation import gettext_lazy as _
from horizon import forms

from climate.dashboard import form_fields
from climate.dashboard.content.maintenance import plan
from climate.dashboard import validation

DEFAULT_CHOICES = (('', _('None: each lease its own action')),) + tuple(
    (action, plan.ACTION_LABELS[action]) for action in plan.ACTIONS)


class WindowForm(form_fields.EscapedHelpTexts, form_fields.HostFilterFields,
                 forms.Form):
    name = forms.CharField(label=_('Name'), max_length=200)
    reason = forms.CharField(label=_('Reason'), required=False,
                             max_length=1000,
                             help_text=_('Said to the projects whose leases '
                                         'it changes'))
    start_date = form_fields.DateText(label=_('Start (UTC)'))
    end_date = form_fields.DateText(label=_('End (UTC)'))
    hosts = forms.CharField(
        label=_('Hosts'), required=False, max_length=10000,
        help_text=_('Host names or ids, separated by commas or spaces; or '
                    'leave empty and give a filter'))
    default_action = forms.ThemableChoiceField(
        label=_('Default action'), required=False, choices=DEFAULT_CHOICES,
        help_text=_('For each lease hit that has no action of its own'))

    field_order = ('name', 'reason', 'start_date', 'end_date', 'hosts',
                   'hypervisor_properties', 'resource_properties',
                   'default_action')

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields['hypervisor_properties'].required = False
        self.fields['resource_properties'].required = False
        form_fields.escape_help_texts(self.fields)

    def clean(self):
        data = super().clean()
        data['hosts'] = validation.names(data.get('hosts'))
        if not data['hosts'] and not self.filters_given(data):
            self.add_error('hosts', _('Name the hosts, or give a filter '
                                      'that selects them.'))
        start, end = data.get('start_date'), data.get('end_date')
        if start and end and 'end_date' not in self.errors and \
                validation.date(end) <= validation.date(start):
            self.add_error('end_date', _('The end must come after the '
                                         'start.'))
        return data

    def body(self):
        """The window's ``POST /v1/maintenance-windows`` body, without
        its actions."""
        data = self.cleaned_data
        body = {'name': data['name'], 'start_date': data['start_date'],
                'end_date': data['end_date']}
        if data.get('reason'):
            body['reason'] = data['reason']
        if data['hosts']:
            body['hosts'] = data['hosts']
        for key in ('hypervisor_properties', 'resource_properties'):
            if data.get(key):
                body[key] = data[key]
        return body
