"""The API bodies of the lease forms, from their cleaned data.

Kept apart from the Django forms so that what a form sends can be read
(and tested) as plain dicts: ``create_body`` is what ``POST /v1/leases``
gets, ``update_body`` what ``PUT /v1/leases/{id}`` gets.  Each resource
type's reservation carries the fields its plugin documents
(doc/source/hosts.rst, instances.rst, volumes.rst, floatingips.rst,
networks.rst, stacks.rst) and no other: the API refuses unknown ones.
"""

#: the create form's resource choices
HOST = 'host'
INSTANCE = 'instance'
SERVER = 'server'
VOLUME = 'volume'
FLOATINGIP = 'floatingip'
NETWORK = 'network'
STACK = 'stack'
#: the form's choice -> the API's resource type (slots and pre-created
#: servers are both instance reservations)
RESOURCE_TYPES = {HOST: 'physical:host', INSTANCE: 'virtual:instance',
                  SERVER: 'virtual:instance', VOLUME: 'virtual:volume',
                  FLOATINGIP: 'virtual:floatingip', NETWORK: 'network',
                  STACK: 'virtual:stack'}
#: the form's affinity choice -> the API's value
AFFINITY = {'true': True, 'false': False, 'none': None}
#: how the shape of instance slots is given: typed, or a flavor's
SHAPE_GIVEN = 'given'
SHAPE_OF_FLAVOR = 'flavor'
#: how volumes are reserved: gigabytes, or listed volumes made at the
#: start
VOLUME_CAPACITY = 'capacity'
VOLUME_LISTED = 'listed'
#: how a pre-created server is given: an existing one, or booted
SERVER_EXISTING = 'existing'
SERVER_BOOT = 'boot'
#: how a stack's template is given
TEMPLATE_FILE = 'file'
TEMPLATE_TEXT = 'text'

#: no lease type given: granted for its window or refused (no
#: microversion 1.11 needed)
DEFAULT_LEASE_TYPE = ''

#: the update form's mutually exclusive ways to move the end and the start
END_CHANGES = ('end_date', 'prolong_for', 'reduce_by')
START_CHANGES = ('start_date', 'defer_by', 'advance_by')


def _filled(data, key):
    # an empty list or mapping (no addresses, no parameters) is no value
    # either: the API's default is the same
    value = data.get(key)
    return value not in (None, '', [], {})


def _given(res, data, pairs):
    """``res`` with each ``(api_key, form_key)`` the form filled in."""
    for api_key, form_key in pairs:
        if _filled(data, form_key):
            res[api_key] = data[form_key]
    return res


def host_reservation(data):
    res = {'min': data['min_hosts'], 'max': data['max_hosts'],
           # the API takes the filters as JSON text, as Blazar's does
           'hypervisor_properties': data.get('hypervisor_properties') or '',
           'resource_properties': data.get('resource_properties') or ''}
    return _given(res, data, (('before_end', 'before_end'),))


def instance_reservation(data):
    """Slots of a shape, or of a flavor's (Blazar's ``flavor:instance``,
    which Climate takes as ``flavor_id``)."""
    res = {'amount': data['amount']}
    if data.get('slot_shape') == SHAPE_OF_FLAVOR:
        res['flavor_id'] = data['slot_flavor']
    else:
        for key in ('vcpus', 'memory_mb', 'disk_gb'):
            res[key] = data[key]
    res['affinity'] = AFFINITY[data.get('affinity') or 'none']
    res['resource_properties'] = data.get('resource_properties') or ''
    return res


def server_reservation(data):
    """A pre-created server (microversion 1.4, which the client asks for
    by itself): one named by id, or a boot request in Nova's
    spellings."""
    if data.get('server_source') == SERVER_EXISTING:
        res = {'server_id': data['server_id']}
    else:
        server = {'name': data['server_name'], 'imageRef': data['image'],
                  'flavorRef': data['flavor'],
                  'networks': data.get('networks') or 'auto'}
        res = {'server': _given(server, data, (
            ('key_name', 'key_name'), ('security_groups', 'security_groups'),
            ('metadata', 'server_metadata')))}
    _given(res, data, (('on_end', 'server_on_end'),))
    res['resource_properties'] = data.get('resource_properties') or ''
    return res


def volume_reservation(data):
    """Gigabytes in at most a number of volumes, or the volumes to make
    at the start (their sizes and number are then the reservation's)."""
    if data.get('volume_source') == VOLUME_LISTED:
        res = {'volumes': data['volume_specs']}
    else:
        res = _given({'size_gb': data['size_gb']}, data,
                     (('count', 'volume_count'),))
    return _given(res, data, (
        ('volume_type', 'volume_type'),
        ('resource_properties', 'resource_properties'),
        ('on_end', 'volume_on_end')))


def floatingip_reservation(data):
    res = {'network_id': data['network_id'], 'amount': data['amount']}
    return _given(res, data, (
        ('required_floatingips', 'required_floatingips'),))


def network_reservation(data):
    res = {'network_name': data['network_name']}
    return _given(res, data, (
        ('network_description', 'network_description'),
        ('resource_properties', 'resource_properties'),
        ('network_properties', 'network_properties')))


def stack_reservation(data):
    """A stack: its template and environment as their text (the API
    reads them as Heat does), the parameters as strings, as the CLI's
    ``--stack-parameter key=value``."""
    res = {'template': data['template']}
    return _given(res, data, (
        ('parameters', 'parameters'), ('environment', 'environment'),
        ('stack_name', 'stack_name'), ('on_start', 'stack_on_start'),
        ('on_end', 'stack_on_end')))


RESERVATIONS = {HOST: host_reservation, INSTANCE: instance_reservation,
                SERVER: server_reservation, VOLUME: volume_reservation,
                FLOATINGIP: floatingip_reservation,
                NETWORK: network_reservation, STACK: stack_reservation}


def reservation(data):
    """The one reservation of a create form."""
    kind = data['resource_type']
    return dict(RESERVATIONS[kind](data),
                resource_type=RESOURCE_TYPES[kind])


def create_body(data):
    """``POST /v1/leases`` of a create form's cleaned data.

    ``data['end_date']`` is the end the form worked out (typed, or the
    start plus a duration).
    """
    body = {'name': data['name'], 'start_date': data['start_date'],
            'end_date': data['end_date'],
            'reservations': [reservation(data)], 'events': []}
    if data.get('lease_type'):
        body['lease_type'] = data['lease_type']
        if data['lease_type'] == 'with_retries' and \
                _filled(data, 'max_retries'):
            body['max_retries'] = data['max_retries']
    if _filled(data, 'hold_for'):
        body['hold_for'] = data['hold_for']
    return body


def series_body(data):
    """``POST /v1/lease-series`` of a create form's cleaned data with a
    rule: the lease's body (its window the first occurrence) and the
    ``recurrence``."""
    body = create_body(data)
    recurrence = {'rrule': data['rrule']}
    if data.get('timezone'):
        recurrence['timezone'] = data['timezone']
    if data.get('on_conflict'):
        recurrence['on_conflict'] = data['on_conflict']
    body['recurrence'] = recurrence
    return body


def update_body(data, lease):
    """``PUT /v1/leases/{id}`` of an update form's cleaned data: only
    what changed (a same name is not sent)."""
    body = {}
    if data.get('name') and data['name'] != lease.name:
        body['name'] = data['name']
    for key in END_CHANGES + START_CHANGES:
        if _filled(data, key):
            body[key] = data[key]
    return body
