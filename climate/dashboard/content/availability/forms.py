"""The question of the availability panel: N hosts for D, when?

A plain (GET) form: the answer is a page of its own that can be linked
and reloaded, and asking changes nothing.
"""

from django.utils.translation import gettext_lazy as _
from horizon import forms

from climate.dashboard import form_fields


class HostSearchForm(form_fields.EscapedHelpTexts,
                     form_fields.HostFilterFields, forms.Form):
    count = forms.IntegerField(label=_('Hosts'), min_value=1, initial=1)
    duration = form_fields.DurationText(label=_('For how long'),
                                        initial='4h')
    earliest_start = form_fields.DateText(
        label=_('Not before (UTC)'), required=False,
        help_text=_('Default: now'))
    latest_end = form_fields.DateText(label=_('Ending by (UTC)'),
                                      required=False)

    field_order = ('count', 'duration', 'earliest_start', 'latest_end')
