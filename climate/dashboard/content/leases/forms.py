"""The create and update forms of a lease.

Both check what they can before calling the API (dates, durations, the
filters' JSON, min <= max, what a lease type takes; each resource type's
fields are reservation_fields') and show the API's own refusal in the
form otherwise: a 409's "Not enough hosts available ..." names the window
that would be free, which is what the user needs next.
"""

import datetime

from django.utils import html
from django.utils.translation import gettext_lazy as _
from horizon import forms
from horizon import messages

from climate.dashboard.api import climate as climate_api
from climate.dashboard.content.leases import bodies
from climate.dashboard.content.leases import links
from climate.dashboard.content.leases import reservation_fields
from climate.dashboard import form_fields
from climate.dashboard import validation
from climate import states

#: the end of a lease nobody gave one to: a day after its start, as the
#: CLI does
DEFAULT_LENGTH = datetime.timedelta(days=1)

LEASE_TYPE_CHOICES = (
    (bodies.DEFAULT_LEASE_TYPE,
     _('Granted for its window or refused (default)')),
    ('immediate', _('Immediate: starts now or is refused')),
    ('scheduled', _('Scheduled: booked now for a later start')),
    ('with_retries', _('With retries: waits for capacity, tried again')),
    # (a typographic apostrophe: Horizon's themed select escapes its
    # labels twice, and showed &#x27; for a straight one)
    ('best_effort', _('Best effort: hosts freed of other projects’ '
                      'servers')),
)
SERIES_CONFLICT_CHOICES = (
    ('refuse', _('Refuses the whole series (default)')),
    ('skip', _('Is skipped, the others booked')),
)
RESOURCE_CHOICES = (
    (bodies.HOST, _('Physical hosts')),
    (bodies.INSTANCE, _('Instance slots')),
    (bodies.SERVER, _('A pre-created server')),
    (bodies.VOLUME, _('Volume capacity')),
    (bodies.FLOATINGIP, _('Floating IPs')),
    (bodies.NETWORK, _('A network segment')),
    (bodies.STACK, _('A Heat stack')),
)
#: the labels of the one filter field each resource type reads it as
RESOURCE_PROPERTIES_LABELS = {
    bodies.HOST: _('Resource properties'),
    bodies.INSTANCE: _('Host properties'),
    bodies.SERVER: _('Host properties'),
    bodies.VOLUME: _('Pool properties'),
    bodies.NETWORK: _('Segment properties'),
}
RESOURCE_PROPERTIES_HELP = _(
    'A JSON filter on the properties of the hosts (for hosts, slots and '
    'servers), of the storage pools (e.g. ["=", "$backend", "ceph"]) or '
    'of the network segments (e.g. ["==", "$physical_network", '
    '"physnet1"])')


def _fields_of(fields_class, *shared):
    return tuple(fields_class.base_fields) + shared


class CreateLeaseForm(form_fields.EscapedHelpTexts,
                      reservation_fields.HostFields,
                      reservation_fields.InstanceFields,
                      reservation_fields.ServerFields,
                      reservation_fields.VolumeFields,
                      reservation_fields.FloatingIPFields,
                      reservation_fields.NetworkFields,
                      reservation_fields.StackFields,
                      forms.SelfHandlingForm):
    name = forms.CharField(label=_('Lease name'), max_length=255)
    lease_type = forms.ThemableChoiceField(
        label=_('Lease type'), choices=LEASE_TYPE_CHOICES, required=False,
        widget=forms.ThemableSelectWidget(
            attrs=form_fields.switchable('lease_type')))
    max_retries = forms.IntegerField(
        label=_('Most retries'), min_value=0, required=False,
        help_text=_("Retries after the first attempt (default: the "
                    "service's setting)"),
        widget=forms.NumberInput(attrs=form_fields.switched(
            'lease_type', with_retries=_('Most retries'))))
    hold_for = forms.IntegerField(
        label=_('Hold for (seconds)'), min_value=1, required=False,
        help_text=_('A temporary hold: booked now, confirmed from the '
                    'list before it expires, or released (leave empty '
                    'for a lease at once)'))
    start_date = form_fields.DateText(label=_('Start (UTC)'),
                                      initial='now')
    end_date = form_fields.DateText(
        label=_('End (UTC)'), required=False,
        help_text=_('Leave empty and give a duration, or neither for one '
                    'day'))
    duration = form_fields.DurationText(label=_('Duration'),
                                        required=False)
    rrule = forms.CharField(
        label=_('Repeat (rule)'), required=False, max_length=255,
        help_text=_('Makes a recurring series of leases, this window its '
                    'first: an RFC 5545 rule, DAILY or WEEKLY with COUNT or '
                    'UNTIL, e.g. FREQ=WEEKLY;BYDAY=TU;COUNT=12 (leave empty '
                    'for one lease)'))
    timezone = forms.CharField(
        label=_('Time zone of the series'), required=False, max_length=64,
        help_text=_('The occurrences keep its wall clock across '
                    'daylight-saving changes, e.g. Europe/Paris (default '
                    'UTC)'))
    on_conflict = forms.ThemableChoiceField(
        label=_('An occurrence that cannot be booked'), required=False,
        choices=SERIES_CONFLICT_CHOICES)
    resource_type = forms.ThemableChoiceField(
        label=_('Resource'), choices=RESOURCE_CHOICES,
        widget=forms.ThemableSelectWidget(
            attrs=form_fields.switchable(reservation_fields.RESOURCE)))

    # the lease, then each type's fields in the order one fills them in
    field_order = (
        'name', 'lease_type', 'max_retries', 'hold_for', 'start_date',
        'end_date',
        'duration', 'rrule', 'timezone', 'on_conflict', 'resource_type',
        'min_hosts', 'max_hosts', 'before_end',
        'server_source', 'server_id', 'server_name', 'image', 'flavor',
        'networks', 'key_name', 'security_groups', 'server_metadata',
        'server_on_end',
        'volume_source', 'size_gb', 'volume_count', 'volume_specs',
        'volume_type', 'volume_on_end',
        'network_id', 'amount', 'required_floatingips', 'slot_shape',
        'vcpus', 'memory_mb', 'disk_gb', 'slot_flavor', 'affinity',
        'network_name', 'network_description',
        'hypervisor_properties', 'resource_properties',
        'network_properties',
        'template_source', 'template_file', 'template_text', 'parameters',
        'environment', 'stack_name', 'stack_on_start', 'stack_on_end')

    #: the fields each resource type needs
    NEEDED = {
        bodies.HOST: reservation_fields.HostFields.HOST_NEEDED,
        bodies.INSTANCE: reservation_fields.InstanceFields.INSTANCE_NEEDED,
        bodies.SERVER: reservation_fields.ServerFields.SERVER_NEEDED,
        bodies.VOLUME: reservation_fields.VolumeFields.VOLUME_NEEDED,
        bodies.FLOATINGIP:
            reservation_fields.FloatingIPFields.FLOATINGIP_NEEDED,
        bodies.NETWORK: reservation_fields.NetworkFields.NETWORK_NEEDED,
        bodies.STACK: reservation_fields.StackFields.STACK_NEEDED,
    }
    #: the fields of each resource type: those of its class, and the
    #: ones it shares with another
    FIELDS_OF = {
        bodies.HOST: _fields_of(reservation_fields.HostFields),
        bodies.INSTANCE: _fields_of(reservation_fields.InstanceFields,
                                    'resource_properties'),
        bodies.SERVER: _fields_of(reservation_fields.ServerFields,
                                  'resource_properties'),
        bodies.VOLUME: _fields_of(reservation_fields.VolumeFields,
                                  'resource_properties'),
        bodies.FLOATINGIP: _fields_of(reservation_fields.FloatingIPFields,
                                      'amount'),
        bodies.NETWORK: _fields_of(reservation_fields.NetworkFields,
                                   'resource_properties'),
        bodies.STACK: _fields_of(reservation_fields.StackFields),
    }
    #: the checks of each resource type whose fields depend on each other
    CHECKS = {
        bodies.HOST: 'host_checks', bodies.INSTANCE: 'instance_checks',
        bodies.SERVER: 'server_checks',
        bodies.VOLUME: 'volume_checks',
        bodies.FLOATINGIP: 'floatingip_checks',
        bodies.STACK: 'stack_checks',
    }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # one filter field, read by each type as its own
        field = self.fields['resource_properties']
        field.help_text = RESOURCE_PROPERTIES_HELP
        field.widget.attrs.update(form_fields.switched(
            reservation_fields.RESOURCE, **RESOURCE_PROPERTIES_LABELS))
        self.fields['hypervisor_properties'].widget.attrs.update(
            form_fields.switched(reservation_fields.RESOURCE, **{
                bodies.HOST: _('Hypervisor properties')}))
        # the fields are optional to Django (each is needed by some
        # choices only): Horizon marks them required while they show
        for name in self.required_when_shown():
            self.fields[name].widget.attrs['data-required-when-shown'] = \
                'true'
        form_fields.escape_help_texts(self.fields)

    @classmethod
    def required_when_shown(cls):
        """The fields the choices that show them need."""
        tables = (cls.NEEDED,
                  reservation_fields.InstanceFields.SLOT_SHAPE_NEEDED,
                  reservation_fields.ServerFields.SERVER_SOURCE_NEEDED,
                  reservation_fields.VolumeFields.VOLUME_SOURCE_NEEDED,
                  reservation_fields.StackFields.TEMPLATE_SOURCE_NEEDED)
        return sorted({name for table in tables
                       for names in table.values() for name in names})

    def clean(self):
        data = super().clean()
        kind = data.get('resource_type')
        self._forget_other_types(kind)
        for field in self.NEEDED.get(kind, ()):
            if data.get(field) in (None, '') and field not in self.errors:
                self.add_error(field, _('This field is required.'))
        if kind in self.CHECKS and not set(self.errors) & set(
                self.FIELDS_OF[kind]):
            self._add_errors(getattr(self, self.CHECKS[kind])(data))
        self._clean_window(data)
        self._add_errors(validation.lease_type_rules(
            data.get('lease_type'), data.get('start_date'),
            bodies.RESOURCE_TYPES.get(kind), self.filters_given(data),
            data.get('max_retries')))
        if data.get('rrule'):
            self._add_errors(validation.series_rules(
                data.get('lease_type'), data.get('hold_for'),
                data.get('max_retries')))
        elif data.get('timezone') or data.get('on_conflict') == 'skip':
            self.add_error('rrule', _('A time zone or what to do with an '
                                      'occurrence is for a series: give '
                                      'its rule.'))
        return data

    def clean_rrule(self):
        return validation.rrule(self.cleaned_data.get('rrule'))

    def clean_timezone(self):
        return validation.timezone(self.cleaned_data.get('timezone'))

    def _forget_other_types(self, kind):
        """What the user typed for another resource type is not sent:
        neither is its error shown in fields the user does not see."""
        own = set(self.FIELDS_OF.get(kind, ()))
        for fields in self.FIELDS_OF.values():
            for field in set(fields) - own:
                self.errors.pop(field, None)
                self.cleaned_data.pop(field, None)

    def _add_errors(self, problems):
        for field, message in problems.items():
            if field not in self.errors:
                self.add_error(field, message)

    def _clean_window(self, data):
        """``data['end_date']`` from the end or the duration typed, checked
        to be after the start."""
        if 'start_date' not in data:
            return
        start = validation.date(data['start_date'])
        end_text = (data.get('end_date') or '').strip()
        length = (data.get('duration') or '').strip()
        if end_text and length:
            self.add_error('duration', _('Give an end or a duration, not '
                                         'both.'))
            return
        try:
            if end_text:
                end = validation.date(end_text)
            else:
                end = start + (validation.duration(length) if length
                               else DEFAULT_LENGTH)
                # to the second: 'now' plus 4h is 4h, not up to a minute
                # less
                end_text = validation.api_datetime(end)
        except forms.ValidationError as exc:
            self.add_error('duration' if length else 'end_date', exc)
            return
        if end <= start:
            self.add_error('end_date', _('The end must come after the '
                                         'start.'))
            return
        data['end_date'] = end_text

    def handle(self, request, data):
        if data.get('rrule'):
            return self._create_series(request, data)
        try:
            lease = climate_api.lease_create(request,
                                             bodies.create_body(data))
        except climate_api.ReservationError as exc:
            # shown in the form, which stays open with what was typed;
            # a refusal that says when enough would be free offers it
            # (a 409; floating IPs refuse with Blazar's 400)
            later = links.later_window_url(data, exc.message) \
                if isinstance(exc, (climate_api.ReservationConflict,
                                    climate_api.ReservationBadRequest)) \
                else None
            if later is None:
                self.api_error(exc.message)
            else:
                self.api_error(html.format_html(
                    '{} <a href="{}" id="book_later_window">{}</a>',
                    exc.message, later, _('Book that window instead')))
            return False
        messages.success(request, _('Lease "%s" created.') % lease.name)
        return lease

    def _create_series(self, request, data):
        """``POST /v1/lease-series``: the lease's body with its rule; a
        refusal (an occurrence that cannot be booked, a rule the API does
        not take) is the API's sentence, naming the occurrence."""
        try:
            series = climate_api.series_create(
                request, bodies.series_body(data))
        except climate_api.ReservationError as exc:
            self.api_error(exc.message)
            return False
        messages.success(request, _(
            'Series "%(name)s" created: %(booked)d occurrences booked, '
            '%(skipped)d skipped.') % {'name': series.name,
                                       'booked': series.booked,
                                       'skipped': series.skipped_count})
        return series


class UpdateLeaseForm(form_fields.EscapedHelpTexts, forms.SelfHandlingForm):
    lease_id = forms.CharField(widget=forms.HiddenInput())
    name = forms.CharField(label=_('Lease name'), max_length=255,
                           required=False)
    end_date = form_fields.DateText(label=_('New end (UTC)'),
                                    required=False)
    prolong_for = form_fields.DurationText(label=_('Extend the end by'),
                                           required=False)
    reduce_by = form_fields.DurationText(label=_('Shrink the end by'),
                                         required=False)
    start_date = form_fields.DateText(
        label=_('New start (UTC)'), required=False,
        help_text=_('Only for a lease not started yet'))
    defer_by = form_fields.DurationText(label=_('Move the start later by'),
                                        required=False)
    advance_by = form_fields.DurationText(
        label=_('Move the start earlier by'), required=False)

    def __init__(self, request, *args, **kwargs):
        self.lease = kwargs.pop('lease', None)
        super().__init__(request, *args, **kwargs)
        if self.lease is not None and \
                self.lease.status not in states.LEASE_NOT_STARTED:
            # the API moves the start of a lease not started only
            for key in bodies.START_CHANGES:
                del self.fields[key]

    def clean(self):
        data = super().clean()
        for group in (bodies.END_CHANGES, bodies.START_CHANGES):
            given = [key for key in group if data.get(key)]
            for key in given[1:]:
                self.add_error(key, _('Give one way to move this date.'))
        if not self.errors and self.lease is not None and \
                not bodies.update_body(data, self.lease):
            raise forms.ValidationError(_('Nothing to change.'))
        return data

    def handle(self, request, data):
        lease = self.lease or climate_api.Lease({'id': data['lease_id']})
        try:
            updated = climate_api.lease_update(
                request, data['lease_id'], bodies.update_body(data, lease))
        except climate_api.ReservationError as exc:
            self.api_error(exc.message)
            return False
        messages.success(request, _('Lease "%s" updated.') % updated.name)
        return updated
