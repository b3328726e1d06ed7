"""The fields of each resource type of the create form.

Each class is the fields of one choice of the form's ``resource_type``
select, shown only for it (Horizon's switched fields), with the fields
it requires (``<TYPE>_NEEDED``) and, where the fields depend on each
other, a ``<type>_checks`` method that returns the messages, by field,
of its cleaned data (the checks themselves are
``climate.dashboard.validation``'s).  The host filters are the shared
``form_fields.HostFilterFields``; ``resource_properties`` filters hosts,
volume pools or network segments depending on the type.
"""

from django import forms as django_forms
from django.utils.translation import gettext_lazy as _
from horizon import forms

from climate.dashboard.content.leases import bodies
from climate.dashboard import form_fields
from climate.dashboard import validation

RESOURCE = 'resource_type'


def _on(kind, label):
    """A field shown for the resource type ``kind``."""
    return form_fields.switched(RESOURCE, **{kind: label})


def _on_choice(switch, choice, label):
    """A field shown for the ``choice`` of a nested select."""
    return form_fields.switched(switch, **{choice: label})


def _shown(field_class, widget_class, label, attrs, **kwargs):
    """An optional field of ``attrs`` (the form requires it for the
    choices that need it)."""
    kwargs.setdefault('required', False)
    return field_class(label=label, widget=widget_class(attrs=attrs),
                       **kwargs)


def _number(label, kind, **kwargs):
    return _shown(forms.IntegerField, forms.NumberInput, label,
                  _on(kind, label), **kwargs)


def _text(label, kind, **kwargs):
    return _shown(forms.CharField, forms.TextInput, label,
                  _on(kind, label), **kwargs)


def _lines(label, kind, rows=3, **kwargs):
    return _shown(forms.CharField, forms.Textarea, label,
                  dict(_on(kind, label), rows=rows), **kwargs)


def _number_for(switch, choice, label, **kwargs):
    return _shown(forms.IntegerField, forms.NumberInput, label,
                  _on_choice(switch, choice, label), **kwargs)


def _text_for(switch, choice, label, **kwargs):
    return _shown(forms.CharField, forms.TextInput, label,
                  _on_choice(switch, choice, label), **kwargs)


def _choice(label, kind, choices, attrs=None):
    return _shown(forms.ThemableChoiceField, forms.ThemableSelectWidget,
                  label, attrs or _on(kind, label), choices=choices)


def _source(slug, label, kind, choices):
    """A select of the resource type ``kind`` that shows fields of its
    own."""
    return _choice(label, kind, choices, attrs=form_fields.nested_switchable(
        slug, RESOURCE, **{kind: label}))


class HostFields(form_fields.HostFilterFields):
    """``physical:host``: whole hosts, with filters."""

    min_hosts = _number(_('Minimum hosts'), bodies.HOST, min_value=1,
                        initial=1)
    max_hosts = _number(_('Maximum hosts'), bodies.HOST, min_value=1,
                        initial=1)
    before_end = _choice(_('Before the end'), bodies.HOST, (
        ('', _('The service’s default (a notice)')),
        ('snapshot', _('Snapshot the hosts’ servers'))))

    HOST_NEEDED = ('min_hosts', 'max_hosts')

    def host_checks(self, data):
        return validation.minimum_and_maximum(data, 'min_hosts',
                                              'max_hosts')


SLOT_SHAPE = 'slot_shape'


class InstanceFields(django_forms.Form):
    """``virtual:instance`` slots: how many instances of a shape, given
    or read from a flavor."""

    amount = _shown(forms.IntegerField, forms.NumberInput, _('Instances'),
                    form_fields.switched(RESOURCE, **{
                        bodies.INSTANCE: _('Instances'),
                        bodies.FLOATINGIP: _('Addresses')}),
                    min_value=1, initial=1)
    slot_shape = _source(SLOT_SHAPE, _('Shape'), bodies.INSTANCE, (
        (bodies.SHAPE_GIVEN, _('VCPUs, memory and disk')),
        (bodies.SHAPE_OF_FLAVOR, _('An existing flavor’s'))))
    vcpus = _number_for(SLOT_SHAPE, bodies.SHAPE_GIVEN, _('VCPUs of each'),
                        min_value=1, initial=1)
    memory_mb = _number_for(SLOT_SHAPE, bodies.SHAPE_GIVEN,
                            _('Memory of each (MB)'), min_value=1,
                            initial=1024)
    disk_gb = _number_for(SLOT_SHAPE, bodies.SHAPE_GIVEN,
                          _('Disk of each (GB)'), min_value=0, initial=10)
    slot_flavor = _text_for(SLOT_SHAPE, bodies.SHAPE_OF_FLAVOR,
                            _('Flavor ID'))
    affinity = _choice(_('Placement'), bodies.INSTANCE, (
        ('none', _('Anywhere')), ('true', _('All on one host')),
        ('false', _('Each on a different host'))))

    INSTANCE_NEEDED = ('amount',)
    #: what each way of giving the shape needs (a form without the
    #: choice gives the shape)
    SLOT_SHAPE_NEEDED = {
        bodies.SHAPE_GIVEN: ('vcpus', 'memory_mb', 'disk_gb'),
        bodies.SHAPE_OF_FLAVOR: ('slot_flavor',)}

    def instance_checks(self, data):
        needed = self.SLOT_SHAPE_NEEDED[
            data.get('slot_shape') or bodies.SHAPE_GIVEN]
        return {field: _('This field is required.') for field in needed
                if data.get(field) in (None, '')}


SERVER_SOURCE = 'server_source'


class ServerFields(django_forms.Form):
    """A pre-created ``virtual:instance``: a server of the project, or
    one Climate boots for the lease, shelved until its start."""

    server_source = _source(SERVER_SOURCE, _('Server'), bodies.SERVER, (
        (bodies.SERVER_BOOT, _('Boot a new server for the lease')),
        (bodies.SERVER_EXISTING, _('An existing server of the project'))))
    server_id = _text_for(SERVER_SOURCE, bodies.SERVER_EXISTING,
                          _('Server ID'))
    server_name = _text_for(SERVER_SOURCE, bodies.SERVER_BOOT,
                            _('Server name'), max_length=255)
    image = _text_for(SERVER_SOURCE, bodies.SERVER_BOOT, _('Image ID'))
    flavor = _text_for(SERVER_SOURCE, bodies.SERVER_BOOT, _('Flavor'),
                       help_text=_('Its ID or name, e.g. m1.small'))
    networks = _text_for(
        SERVER_SOURCE, bodies.SERVER_BOOT, _('Networks'), initial='auto',
        help_text=_('"auto", "none", or network IDs separated by commas'))
    key_name = _text_for(SERVER_SOURCE, bodies.SERVER_BOOT, _('Key pair'))
    security_groups = _text_for(
        SERVER_SOURCE, bodies.SERVER_BOOT, _('Security groups'),
        help_text=_('Their names, separated by commas (default: the '
                    "project's default group)"))
    server_metadata = _shown(
        forms.CharField, forms.Textarea, _('Metadata'),
        dict(_on_choice(SERVER_SOURCE, bodies.SERVER_BOOT, _('Metadata')),
             rows=2),
        help_text=_('One key=value a line'))
    server_on_end = _choice(_('At the end'), bodies.SERVER, (
        ('', _('Delete the server (default)')),
        ('shelve', _('Shelve it: it stays in the project')),
        ('snapshot', _('Snapshot it to an image, then delete it'))))

    SERVER_NEEDED = ('server_source',)
    #: what each way of giving the server needs
    SERVER_SOURCE_NEEDED = {
        bodies.SERVER_EXISTING: ('server_id',),
        bodies.SERVER_BOOT: ('server_name', 'image', 'flavor')}

    def clean_networks(self):
        return validation.server_networks(self.cleaned_data['networks'])

    def clean_security_groups(self):
        return validation.names(self.cleaned_data['security_groups'])

    def clean_server_metadata(self):
        return validation.key_values(self.cleaned_data['server_metadata'])

    def server_checks(self, data):
        needed = self.SERVER_SOURCE_NEEDED.get(data.get('server_source'),
                                               ())
        return {field: _('This field is required.') for field in needed
                if not data.get(field)}


VOLUME_SOURCE = 'volume_source'


class VolumeFields(django_forms.Form):
    """``virtual:volume``: gigabytes on one storage pool, or the volumes
    made there at the start."""

    volume_source = _source(VOLUME_SOURCE, _('Volumes'), bodies.VOLUME, (
        (bodies.VOLUME_CAPACITY, _('Gigabytes, for volumes the project '
                                   'makes')),
        (bodies.VOLUME_LISTED, _('Volumes made at the start'))))
    size_gb = _number_for(VOLUME_SOURCE, bodies.VOLUME_CAPACITY,
                          _('Gigabytes in all'), min_value=1, initial=10)
    volume_count = _number_for(VOLUME_SOURCE, bodies.VOLUME_CAPACITY,
                               _('Most volumes'), min_value=1,
                               help_text=_('Leave empty for any number'))
    volume_specs = _shown(forms.CharField, forms.Textarea,
                          _('Volumes'),
                          dict(_on_choice(VOLUME_SOURCE,
                                          bodies.VOLUME_LISTED,
                                          _('Volumes')), rows=3),
                          help_text=validation.VOLUME_LINE_HELP)
    volume_type = _text(_('Volume type'), bodies.VOLUME,
                        help_text=_("Default: the service's"))
    volume_on_end = _choice(_('At the end'), bodies.VOLUME, (
        ('', _('Delete the volumes (default)')),
        ('snapshot', _('Upload each to an image, then delete it')),
        ('retain', _('Hand them to the project for good'))))

    VOLUME_NEEDED = ()
    #: what each way of reserving volumes needs (a form without the
    #: choice reserves gigabytes)
    VOLUME_SOURCE_NEEDED = {bodies.VOLUME_CAPACITY: ('size_gb',),
                            bodies.VOLUME_LISTED: ('volume_specs',)}

    def clean_volume_specs(self):
        return validation.volume_specs(self.cleaned_data['volume_specs'])

    def volume_checks(self, data):
        source = data.get('volume_source') or bodies.VOLUME_CAPACITY
        problems = {field: _('This field is required.')
                    for field in self.VOLUME_SOURCE_NEEDED[source]
                    if data.get(field) in (None, '', [])}
        if source == bodies.VOLUME_CAPACITY:
            problems.update(validation.volumes_within_size(
                data, 'volume_count', 'size_gb'))
        return problems


class FloatingIPFields(django_forms.Form):
    """``virtual:floatingip``: addresses of an external network (the
    ``amount`` is the instances' field, relabelled)."""

    network_id = _text(_('External network ID'), bodies.FLOATINGIP)
    required_floatingips = _text(
        _('Required addresses'), bodies.FLOATINGIP,
        help_text=_('Addresses that must be among them, separated by '
                    'commas'))

    FLOATINGIP_NEEDED = ('network_id', 'amount')

    def clean_required_floatingips(self):
        return validation.addresses(
            self.cleaned_data['required_floatingips'])

    def floatingip_checks(self, data):
        return validation.at_most(data, 'required_floatingips', 'amount')


class NetworkFields(django_forms.Form):
    """``network``: a segment, made a network of the project."""

    network_name = _text(_('Network name'), bodies.NETWORK, max_length=255)
    network_description = _text(_('Network description'), bodies.NETWORK)
    network_properties = form_fields.JSONFilterText(
        label=_('Network properties'),
        help_text=_("A second filter on the segments' fields, e.g. "
                    '["==", "$network_type", "vlan"]'),
        widget=forms.TextInput(attrs=_on(bodies.NETWORK,
                                         _('Network properties'))))

    NETWORK_NEEDED = ('network_name',)


TEMPLATE_SOURCE = 'template_source'


class StackFields(django_forms.Form):
    """``virtual:stack``: what a Heat template's resources hold."""

    template_source = _source(TEMPLATE_SOURCE, _('Template'), bodies.STACK,
                              ((bodies.TEMPLATE_FILE, _('Upload a file')),
                               (bodies.TEMPLATE_TEXT,
                                _('Type or paste it'))))
    template_file = _shown(
        forms.FileField, forms.FileInput, _('Template file'),
        _on_choice(TEMPLATE_SOURCE, bodies.TEMPLATE_FILE,
                   _('Template file')))
    template_text = _shown(
        forms.CharField, forms.Textarea, _('Template'),
        dict(_on_choice(TEMPLATE_SOURCE, bodies.TEMPLATE_TEXT,
                        _('Template')), rows=6))
    parameters = _lines(_('Parameters'), bodies.STACK,
                        help_text=_('One key=value a line, e.g. count=3'))
    environment = _lines(
        _('Environment'), bodies.STACK,
        help_text=_("Heat's environment (YAML or JSON): parameters, "
                    "parameter_defaults, resource_registry"))
    stack_name = _text(_('Stack name'), bodies.STACK,
                       help_text=_('Default: climate-<reservation id>'))
    stack_on_start = _choice(_('At the start'), bodies.STACK, (
        ('', _('Create the stack (default)')),
        ('wake', _('Create it now, its servers shelved; wake them at '
                   'the start'))))
    stack_on_end = _choice(_('At the end'), bodies.STACK, (
        ('', _('Delete the stack (default)')),
        ('suspend', _('Suspend it')),
        ('snapshot', _('Snapshot its servers, then delete it'))))

    STACK_NEEDED = ('template_source',)
    #: the template's field of each source (one of them is needed)
    TEMPLATE_SOURCE_NEEDED = {bodies.TEMPLATE_FILE: ('template_file',),
                              bodies.TEMPLATE_TEXT: ('template_text',)}

    def clean_parameters(self):
        return validation.key_values(self.cleaned_data['parameters'])

    def clean_environment(self):
        return validation.heat_document(self.cleaned_data['environment'],
                                        'environment')

    def stack_checks(self, data):
        """The template, from the file or the text: ``data['template']``
        once it reads as a mapping."""
        field, = self.TEMPLATE_SOURCE_NEEDED[data['template_source']]
        given = data.get(field)
        if not given:
            return {field: _('This field is required.')}
        try:
            text = validation.uploaded_text(given) \
                if field == 'template_file' else given
            data['template'] = validation.heat_document(text, 'template')
        except forms.ValidationError as exc:
            return {field: exc}
        if not data['template']:
            return {field: _('This field is required.')}
        return {}
