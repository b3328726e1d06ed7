"""Fields the dashboard's forms share, and Horizon's switch attributes.

A date, a duration and a JSON filter are text the API reads itself, so
the fields keep the text as typed (stripped) and only check it with
``climate.dashboard.validation``: what the API gets is what the user
wrote.  ``HostFilterFields`` is the pair of host filters that a lease and
an availability search both take.
"""

from django import forms as django_forms
from django.utils import functional
from django.utils import html
from django.utils import safestring
from django.utils.translation import gettext_lazy as _
from horizon import forms

from climate.dashboard import validation


#: ``text`` escaped when it is used (a translation is chosen late)
_escaped = functional.lazy(html.escape, safestring.SafeString)


def escape_help_texts(fields):
    """Escape the help texts of ``fields`` for Horizon's help icon, which
    puts a field's help text into its ``title`` attribute as safe HTML:
    a double quote there (the filters' JSON examples) ended the attribute
    and showed the rest of the text on the page.  Escaped once only."""
    for field in fields.values():
        text = field.help_text
        if text and not hasattr(text, '__html__'):
            field.help_text = _escaped(text)


class EscapedHelpTexts:
    """A form whose help texts are escaped (``escape_help_texts``)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        escape_help_texts(self.fields)


def switchable(slug, **extra):
    """The attributes of a select whose choice shows other fields."""
    attrs = {'class': 'switchable', 'data-slug': slug}
    attrs.update(extra)
    return attrs


def switched(switch, **labels):
    """The attributes of a field shown only for some choices of the
    select ``switch``: ``labels`` maps each such choice to the field's
    label then (Horizon relabels the field as the choice changes)."""
    attrs = {'class': 'switched', 'data-switch-on': switch}
    for choice, label in labels.items():
        attrs['data-%s-%s' % (switch, choice)] = label
    return attrs


def nested_switchable(slug, switch, **labels):
    """A switched select that is itself a switch: its fields show only
    while it shows."""
    attrs = switched(switch, **labels)
    attrs.update({'class': 'switched switchable', 'data-slug': slug})
    return attrs


class CheckedText(forms.CharField):
    """Text kept as typed (stripped) once ``check`` accepts it; an empty
    optional value is not checked."""

    check = None

    def clean(self, value):
        text = super().clean(value)
        if text:
            self.check(text)
        return text


class DateText(CheckedText):
    check = staticmethod(validation.date)

    def __init__(self, **kwargs):
        kwargs.setdefault('help_text', validation.DATE_HELP)
        super().__init__(**kwargs)


class DurationText(CheckedText):
    check = staticmethod(validation.duration)

    def __init__(self, **kwargs):
        kwargs.setdefault('help_text', validation.DURATION_HELP)
        super().__init__(**kwargs)


class JSONFilterText(CheckedText):
    check = staticmethod(validation.json_filter)

    def __init__(self, **kwargs):
        kwargs.setdefault('help_text', validation.FILTER_HELP)
        kwargs.setdefault('required', False)
        super().__init__(**kwargs)


# a plain Django form, so that its fields are collected into the forms
# that inherit it (Horizon's SelfHandlingForm or a plain one)
class HostFilterFields(django_forms.Form):
    """The two JSON filters of hosts: on their facts and on the
    properties an operator gave them."""

    hypervisor_properties = JSONFilterText(
        label=_('Hypervisor properties'))
    resource_properties = JSONFilterText(
        label=_('Resource properties'),
        help_text=_('Filter on the properties an operator gave the hosts, '
                    'e.g. ["=", "$gpu", "true"]'))

    def filters_given(self, data):
        """Whether ``data`` holds either filter."""
        return any(data.get(key) for key in ('hypervisor_properties',
                                             'resource_properties'))
