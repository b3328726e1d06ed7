"""Checks of what users type into the forms, with translatable messages.

Dates and durations are read by Climate's own parser (``climate.dates``),
so that a form accepts exactly what the API does; the filters must be JSON
lists, as the API's host filters are.  The checks that weigh several
fields at once (a lease type against its start, a minimum against its
maximum) return the messages by field, for the form to place.
"""

import ipaddress
import json
import zoneinfo

from django.core import exceptions as django_exceptions
from django.utils.translation import gettext_lazy as _
import yaml

from climate import dates
from climate import exceptions as climate_exceptions
# the API's own rules of each lease type, so that the form checks the same
from climate.lease import types as lease_types

DATE_HELP = _("'now', 'YYYY-MM-DD HH:MM' (UTC) or ISO 8601 with an "
              "offset")
DURATION_HELP = _("A number followed by m, h, d or w: 30m, 4h, 2d, 1w")
FILTER_HELP = _('A JSON filter, e.g. [">=", "$vcpus", "8"] or '
                '["and", ["=", "$gpu", "true"], [">=", "$memory_mb", '
                '"65536"]]')


def date(text, now=None):
    """The naive UTC datetime of ``text`` ('now' included)."""
    try:
        return dates.parse(text, 'date', now)
    except climate_exceptions.ClimateException:
        raise django_exceptions.ValidationError(
            _("%(value)s is not a date: use %(help)s.") % {
                'value': text, 'help': DATE_HELP})


def api_datetime(value):
    """A datetime as the API takes it, to the second (ISO 8601, UTC)."""
    return value.strftime('%Y-%m-%dT%H:%M:%S')


def duration(text):
    """The timedelta of ``2h``, ``30m``... (more than zero)."""
    try:
        value = dates.parse_duration(text, 'duration')
    except climate_exceptions.ClimateException:
        value = None
    if not value:
        raise django_exceptions.ValidationError(
            _("%(value)s is not a length of time: %(help)s.") % {
                'value': text, 'help': DURATION_HELP})
    return value


def json_filter(text):
    """``text`` unchanged when it is empty or a JSON list."""
    if not text or not text.strip():
        return ''
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise django_exceptions.ValidationError(
            _('This is not JSON (%(reason)s): %(help)s') % {
                'reason': exc, 'help': FILTER_HELP})
    if not isinstance(value, list):
        raise django_exceptions.ValidationError(
            _('A filter is a JSON list: %s') % FILTER_HELP)
    return text.strip()


def key_values(text):
    """``{key: value}`` of ``key=value`` lines (a host's extra
    capabilities, a stack's parameters), both stripped."""
    found = {}
    for number, line in enumerate((text or '').splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        key, sep, value = line.partition('=')
        if not sep or not key.strip():
            raise django_exceptions.ValidationError(
                _('Line %(n)d is not key=value: %(line)s') % {
                    'n': number, 'line': line})
        found[key.strip()] = value.strip()
    return found


def names(text):
    """The names of ``text`` separated by commas or spaces, in the order
    given, each once (a server's security groups)."""
    found = []
    for word in (text or '').replace(',', ' ').split():
        if word not in found:
            found.append(word)
    return found


def addresses(text):
    """The IP addresses of ``text`` (separated by commas, spaces or
    lines), in the order given, each once."""
    found = []
    for word in (text or '').replace(',', ' ').split():
        try:
            address = str(ipaddress.ip_address(word))
        except ValueError:
            raise django_exceptions.ValidationError(
                _('%s is not an IP address.') % word)
        if address not in found:
            found.append(address)
    return found


def server_networks(text):
    """A boot request's ``networks``: "auto", "none", or the networks
    named by id (separated by commas or spaces)."""
    words = (text or '').replace(',', ' ').split()
    if not words:
        return 'auto'
    if len(words) == 1 and words[0].lower() in ('auto', 'none'):
        return words[0].lower()
    if any(word.lower() in ('auto', 'none') for word in words):
        raise django_exceptions.ValidationError(
            _('"auto" and "none" stand alone, without network ids.'))
    return [{'uuid': word} for word in words]


#: the messages of each Heat document: not YAML, not a mapping (whole
#: sentences, for the translators)
HEAT_DOCUMENT_MESSAGES = {
    'template': (_('The template is not YAML or JSON: %s'),
                 _('The template is a mapping of keys to values (YAML or '
                   'JSON).')),
    'environment': (_('The environment is not YAML or JSON: %s'),
                    _('The environment is a mapping of keys to values '
                      '(YAML or JSON).')),
}


def heat_document(text, kind):
    """``text`` stripped once it reads as a YAML (or JSON) mapping, as
    Heat's templates and environments (``kind``) are."""
    not_yaml, not_mapping = HEAT_DOCUMENT_MESSAGES[kind]
    text = (text or '').strip()
    if not text:
        return ''
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise django_exceptions.ValidationError(
            not_yaml % ' '.join(str(exc).split()))
    if not isinstance(value, dict):
        raise django_exceptions.ValidationError(not_mapping)
    return text


def uploaded_text(upload):
    """The text of an uploaded file (UTF-8)."""
    try:
        return upload.read().decode('utf-8')
    except UnicodeDecodeError:
        raise django_exceptions.ValidationError(
            _('%s is not a text file (UTF-8).') % upload.name)


def one_of(data, first, second, needed=True):
    """The messages, by field, when both of two exclusive fields are
    given (or, when ``needed``, neither)."""
    if data.get(first) and data.get(second):
        return {second: _('Give one of the two, not both.')}
    if needed and not data.get(first) and not data.get(second):
        return {first: _('This field is required.')}
    return {}


def minimum_and_maximum(data, low, high):
    """The message, by field, of a maximum below its minimum."""
    if data.get(low) and data.get(high) and data[low] > data[high]:
        return {high: _('The maximum is below the minimum.')}
    return {}


def at_most(data, listed, amount):
    """The message, by field, of more addresses required than asked."""
    if data.get(listed) and data.get(amount) and \
            len(data[listed]) > data[amount]:
        return {listed: _('More addresses required than asked for '
                          '(%d).') % data[amount]}
    return {}


#: the words of a volume line -> the fields of the API's volume spec
VOLUME_WORDS = {'image': 'image_id', 'snapshot': 'snapshot_id',
                'type': 'volume_type'}
VOLUME_LINE_HELP = _('One volume a line: its name, its size in GB, and '
                     'optionally image=ID or snapshot=ID and type=NAME, '
                     'e.g. "data 10 image=cirros"')


def _whole_number(word):
    # digits only: int() would also read '+5', '1_0' and other scripts'
    # digits
    return int(word) if word.isascii() and word.isdigit() else None


def volume_specs(text):
    """The pre-created volumes of ``name size_gb [image=|snapshot=]
    [type=]`` lines, as the API's ``volumes`` list."""
    specs = []
    for number, line in enumerate((text or '').splitlines(), 1):
        words = line.split()
        if not words:
            continue
        spec, problem = {'name': words[0]}, None
        size = _whole_number(words[1]) if len(words) > 1 else None
        if size is None or size < 1:
            problem = _('give its size in GB (a whole number from 1) '
                        'after its name')
        else:
            spec['size_gb'] = size
        for word in words[2:]:
            key, sep, value = word.partition('=')
            if not sep or key not in VOLUME_WORDS or not value:
                problem = problem or _('%s is not image=, snapshot= or '
                                       'type=') % word
            else:
                spec[VOLUME_WORDS[key]] = value
        if 'image_id' in spec and 'snapshot_id' in spec:
            problem = problem or _('a volume is made from an image or a '
                                   'snapshot, not both')
        if problem:
            raise django_exceptions.ValidationError(
                _('Line %(n)d: %(problem)s. %(help)s') % {
                    'n': number, 'problem': problem,
                    'help': VOLUME_LINE_HELP})
        specs.append(spec)
    return specs


def volumes_within_size(data, count, size):
    """The message, by field, of more volumes than gigabytes (each
    volume holds one at least)."""
    if data.get(count) and data.get(size) and data[count] > data[size]:
        return {count: _('At most one volume a gigabyte: %d at the '
                         'most.') % data[size]}
    return {}


def lease_type_rules(lease_type, start, resource_type, filtered,
                     max_retries):
    """The messages, by field, of what the lease type does not take:
    ``start`` as typed, ``resource_type`` the API's, ``filtered``
    whether host filters were given (see doc/source/lease-types.rst)."""
    problems = {}
    starts_now = (start or '').strip().lower() in ('', 'now')
    if max_retries is not None and lease_type != lease_types.WITH_RETRIES:
        problems['max_retries'] = _('Retries are for a lease of type '
                                    '"with retries".')
    if lease_type in lease_types.STARTS_NOW and not starts_now:
        problems['start_date'] = _('A lease of this type starts now: give '
                                   '"now", or choose "scheduled".')
    if lease_type == lease_types.SCHEDULED and starts_now:
        problems['start_date'] = _('A scheduled lease starts later: give '
                                   'its start.')
    allowed = lease_types.ONLY_FOR.get(lease_type)
    if allowed and resource_type not in allowed:
        problems['lease_type'] = _('This lease type is for %s only.') % \
            ', '.join(allowed)
    elif lease_type == lease_types.BEST_EFFORT and filtered:
        problems['lease_type'] = _(
            'A best effort lease takes no host filters: the hosts it '
            'frees are outside the inventory, where they cannot be '
            'weighed.')
    return problems


#: the frequencies a series' rule takes (doc/source/recurring.rst)
RRULE_FREQS = ('DAILY', 'WEEKLY')


def rrule(text):
    """A series' rule as typed, upper-cased and checked for its form
    (``KEY=VALUE`` parts with ``;`` between, a ``FREQ`` of
    :data:`RRULE_FREQS`, an end); the API checks the rest and names what
    it does not take."""
    text = (text or '').strip().upper()
    if text.startswith('RRULE:'):
        text = text[len('RRULE:'):]
    if not text:
        return ''
    parts = {}
    for part in text.split(';'):
        key, sep, value = part.partition('=')
        if not sep or not key or not value:
            raise django_exceptions.ValidationError(
                _('%s is not KEY=VALUE: a rule is e.g. '
                  'FREQ=WEEKLY;BYDAY=TU;COUNT=12.') % part)
        parts[key] = value
    if parts.get('FREQ') not in RRULE_FREQS:
        raise django_exceptions.ValidationError(
            _('A rule repeats DAILY or WEEKLY: FREQ=DAILY or FREQ=WEEKLY.'))
    if 'COUNT' not in parts and 'UNTIL' not in parts:
        raise django_exceptions.ValidationError(
            _('A series ends: give COUNT=n or UNTIL=date.'))
    return text


def timezone(text):
    """An IANA time zone name (``Europe/Paris``), or '' for UTC."""
    text = (text or '').strip()
    if not text:
        return ''
    try:
        zoneinfo.ZoneInfo(text)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise django_exceptions.ValidationError(
            _('%s is not a time zone: use a name such as Europe/Paris.')
            % text)
    return text


def series_rules(lease_type, hold_for, max_retries):
    """``{field: message}``: what a series does not take (its
    occurrences are scheduled or of the default type, never holds)."""
    problems = {}
    if lease_type not in (None, '', 'scheduled'):
        problems['lease_type'] = _('A series is of the default type or '
                                   'scheduled.')
    if hold_for not in (None, ''):
        problems['hold_for'] = _('A series is no temporary hold.')
    if max_retries not in (None, ''):
        problems['max_retries'] = _('A series takes no retries.')
    return problems
