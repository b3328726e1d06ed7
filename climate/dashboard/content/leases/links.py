"""Links to the lease create form, filled in.

The availability panel's windows and a refused lease's later window both
open the form with a window and what was asked already there (the create
view reads them from the query string: ``PREFILLABLE``).
"""

import datetime
import re
import urllib.parse

from django.urls import reverse

from climate.dashboard.content.leases import bodies
from climate.dashboard import display
from climate.dashboard import validation
from climate.lease import types as lease_types

#: the sentence of the API's capacity refusals that names when enough
#: would be free: "... 2 would be free for as long from 2090-01-02
#: 00:00:00 UTC." of hosts and segments, "... would fit for as long from
#: ..." of slots, volumes and floating IPs
FREE_FROM = re.compile(r'(?:free|fit) for as long from (\d{4}-\d\d-\d\d '
                       r'\d\d:\d\d(?::\d\d)?) UTC')
#: what of a create form's data a later window keeps, by resource type
#: (a stack's template is no query: a stack's refusal offers no link)
KEPT_OF = {
    bodies.HOST: ('min_hosts', 'max_hosts', 'hypervisor_properties',
                  'resource_properties', 'before_end'),
    bodies.INSTANCE: ('amount', 'slot_shape', 'vcpus', 'memory_mb',
                      'disk_gb', 'slot_flavor', 'affinity',
                      'resource_properties'),
    bodies.SERVER: ('server_source', 'server_id', 'server_name', 'image',
                    'flavor', 'key_name', 'server_on_end',
                    'resource_properties'),
    bodies.VOLUME: ('volume_source', 'size_gb', 'volume_count',
                    'volume_specs', 'volume_type', 'volume_on_end',
                    'resource_properties'),
    bodies.FLOATINGIP: ('network_id', 'amount', 'required_floatingips'),
    bodies.NETWORK: ('network_name', 'network_description',
                     'resource_properties', 'network_properties'),
}
#: what every lease keeps
KEPT = ('name', 'lease_type', 'resource_type')
#: what the create form may be given in its query (views.CreateView)
PREFILLABLE = KEPT + ('start_date', 'end_date', 'duration') + tuple(
    sorted({field for fields in KEPT_OF.values() for field in fields}))


def volume_line(spec):
    """A volume spec of the API as the line the form reads it from."""
    words = [spec['name'], str(spec['size_gb'])]
    for word, key in validation.VOLUME_WORDS.items():
        if spec.get(key):
            words.append('%s=%s' % (word, spec[key]))
    return ' '.join(words)


def query_value(value):
    """A cleaned value as the form reads it back from a query: a list
    (the required addresses, the volumes) as the text it was typed as."""
    if isinstance(value, (list, tuple)):
        if value and isinstance(value[0], dict):
            return '\n'.join(volume_line(spec) for spec in value)
        return ', '.join(str(item) for item in value)
    return value


def create_url(params):
    """The create form with ``params`` (empty values left out)."""
    query = {k: v for k, v in params.items() if v not in (None, '')}
    return '%s?%s' % (reverse('horizon:project:leases:create'),
                      urllib.parse.urlencode(query))


def free_from(message):
    """The date a capacity refusal says enough would be free from, or
    None."""
    match = FREE_FROM.search(message or '')
    if match is None:
        return None
    return datetime.datetime.fromisoformat(match.group(1))


def later_window_url(data, message):
    """The create form for the same lease moved to the window a refusal
    offers, or None when it offers none (or the lease is a stack's)."""
    start = free_from(message)
    kind = data.get('resource_type')
    if start is None or kind not in KEPT_OF:
        return None
    length = display.parse_api_date(data['end_date']) - \
        display.parse_api_date(data['start_date'])
    params = {key: query_value(data.get(key))
              for key in KEPT + KEPT_OF[kind]}
    if params.get('lease_type') in lease_types.STARTS_NOW:
        # a later start is no such lease's: the window is offered as a
        # lease of the default type, granted for it or refused
        params['lease_type'] = None
    params.update(start_date=display.api_date(start),
                  end_date=display.api_date(start + length))
    return create_url(params)
