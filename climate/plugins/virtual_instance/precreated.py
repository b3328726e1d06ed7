"""``virtual:instance``, pre-created mode (seed 000; microversion 1.4).

One resource type, two modes, told apart by the request: a reservation
naming a server -- ``server_id`` (an existing server of the lease's
project) or ``server`` (a boot request Climate performs as the lease's
user, through its trust, right after the create) -- is *pre-created*;
any other is a capacity reservation (Blazar's).  A pre-created
reservation books one slot of its server's flavor over the lease window
on one reservable host (matching ``resource_properties``), and the
server itself (``climate.db.servers``: one lease at a time, a 409 for a
second lease naming it over an overlapping window); the server is
shelved until the start, unshelved onto that host at the start, and
given the reservation's ``on_end`` action at the end: ``delete`` (the
default), ``shelve`` or ``snapshot`` (then delete).

Stored parameters: ``server_id``, ``server`` (the boot request, or None),
``on_end``, ``amount`` (1), the flavor's ``vcpus``/``memory_mb``/
``disk_gb`` (read from Nova, not given), ``flavor_id`` (the server's
flavor, shown), ``source_flavor``, ``affinity`` (None),
``resource_properties``, ``server_project_id`` (a named server's
project, checked against the lease's); and what Climate saw:
``server_status``,
``server_error`` (why the server is not what the lease holds -- deleted
by its user, in error -- or None) and ``snapshot_id``.
"""

from climate import exceptions
from climate.plugins.virtual_instance.backends import base

#: Fields of the mode (microversion 1.4).
MODE_FIELDS = ('server_id', 'server', 'on_end')
#: What a request may give in this mode.
REQUEST_FIELDS = MODE_FIELDS + ('amount', 'resource_properties')
#: What Climate sets and shows; a client may send them back unchanged.
OUTPUT_FIELDS = ('server_status', 'server_error', 'snapshot_id',
                 'server_project_id', 'source_flavor',
                 'flavor_id', 'vcpus', 'memory_mb', 'disk_gb', 'affinity',
                 'aggregate_id', 'server_group_id')
#: ``on_end`` actions (``nova_servers.END_ACTIONS``).
END_ACTIONS = ('delete', 'shelve', 'snapshot')
#: The fields of a boot request (Nova's spellings) Climate passes on.
BOOT_FIELDS = ('name', 'imageRef', 'flavorRef', 'networks', 'key_name',
               'metadata', 'security_groups', 'user_data')
NAME_MAX = 255


def is_precreated(params):
    """Whether a request or stored reservation is of this mode."""
    return any(params.get(k) not in (None, '') for k in ('server_id',
                                                         'server'))


def _bad(param, reason):
    return exceptions.MalformedParameter(param=param, reason=reason)


def _text(value, param, what):
    if not isinstance(value, str) or not value.strip() or \
            len(value) > NAME_MAX:
        raise _bad(param, '%s is %s (a string of 1 to %d characters), not '
                          '%r.' % (param, what, NAME_MAX, value))
    return value


def boot_request(server):
    """The ``server`` field checked: Nova's boot request fields
    (``name``, ``imageRef``, ``flavorRef`` required; ``networks``
    ``"auto"``, ``"none"`` or a list of ``uuid``/``port``/``fixed_ip``/
    ``tag`` objects; ``key_name``, ``metadata``, ``security_groups``,
    ``user_data``), ``image``/``flavor`` accepted for ``imageRef``/
    ``flavorRef``."""
    if not isinstance(server, dict):
        raise _bad('server', 'server is a boot request object ({"name": '
                             '..., "imageRef": ..., "flavorRef": ...}), not '
                             '%r.' % (server,))
    server = dict(server)
    for short, nova_name in (('image', 'imageRef'), ('flavor', 'flavorRef')):
        if short in server and nova_name not in server:
            server[nova_name] = server.pop(short)
    unknown = sorted(set(server) - set(BOOT_FIELDS))
    if unknown:
        raise _bad('server', 'server.%s: not a field Climate boots with; '
                             'accepted: %s.' % (', server.'.join(unknown),
                                                ', '.join(BOOT_FIELDS)))
    missing = [k for k in ('name', 'imageRef', 'flavorRef')
               if server.get(k) in (None, '')]
    if missing:
        raise _bad('server', 'server.%s is required.' % missing[0])
    for key, what in (('name', "the server's name"),
                      ('imageRef', 'the id of an image'),
                      ('flavorRef', 'the id of a flavor')):
        _text(server[key], 'server.' + key, what)
    networks = server.get('networks', 'auto')
    if isinstance(networks, str):
        if networks not in ('auto', 'none'):
            raise _bad('server.networks', 'server.networks is "auto", '
                       '"none" or a list of networks, not %r.' % networks)
    elif isinstance(networks, list) and all(
            isinstance(n, dict) and n and
            set(n) <= {'uuid', 'port', 'fixed_ip', 'tag'} and
            all(isinstance(v, str) for v in n.values()) for n in networks):
        pass
    else:
        raise _bad('server.networks', 'server.networks is "auto", "none" '
                   'or a list of {"uuid"|"port"|"fixed_ip"|"tag": string} '
                   'objects, not %r.' % (networks,))
    server['networks'] = networks
    if server.get('metadata') is not None and not (
            isinstance(server['metadata'], dict) and
            all(isinstance(k, str) and isinstance(v, str)
                for k, v in server['metadata'].items())):
        raise _bad('server.metadata', 'server.metadata is an object of '
                                      'strings.')
    if server.get('key_name') is not None:
        _text(server['key_name'], 'server.key_name', 'a keypair name')
    if server.get('security_groups') is not None and not (
            isinstance(server['security_groups'], list) and
            all(isinstance(g, str) for g in server['security_groups'])):
        raise _bad('server.security_groups', 'server.security_groups is a '
                                             'list of names.')
    if server.get('user_data') is not None and \
            not isinstance(server['user_data'], str):
        raise _bad('server.user_data', 'server.user_data is a string.')
    return server


def on_end_of(value):
    """``on_end``: delete (default), shelve or snapshot."""
    if value in (None, ''):
        return 'delete'
    if value not in END_ACTIONS:
        raise _bad('on_end', 'on_end is what happens to the server at the '
                             "lease's end: %s, not %r." % (
                                 ', '.join(END_ACTIONS), value))
    return value


def validate(params, backend, filter_of):
    """Check a pre-created request; the server's (or the boot request's)
    flavor is read from ``backend`` (``flavor()``/``server()``).

    :returns: the stored parameters (see module), ``server_id`` None for
        a boot request until the server is booted.
    """
    unknown = sorted(set(params) - set(REQUEST_FIELDS) -
                     set(OUTPUT_FIELDS))
    if unknown:
        raise exceptions.InvalidInput(
            reason='%s: not a parameter of a pre-created virtual:instance '
                   'reservation (one naming server_id or server); accepted: '
                   '%s' % (', '.join(unknown), ', '.join(REQUEST_FIELDS)))
    if params.get('server_id') not in (None, '') and \
            params.get('server') not in (None, ''):
        raise _bad('server_id', 'Give either server_id (an existing server) '
                                'or server (a boot request), not both.')
    if params.get('amount') not in (None, '', 1, '1'):
        raise _bad('amount', 'A pre-created reservation holds its one '
                             'server: amount is 1, not %r.' %
                   (params['amount'],))
    out = {'amount': 1, 'affinity': None, 'on_end': on_end_of(
        params.get('on_end')), 'resource_properties': filter_of(
            params.get('resource_properties')),
        'server_status': None, 'server_error': None, 'snapshot_id': None,
        'aggregate_id': None, 'server_group_id': None}
    if not backend.holds_servers:
        raise base.refuse_servers('server_id' if params.get('server_id')
                                  not in (None, '') else 'server')
    if params.get('server') not in (None, ''):
        request = boot_request(params['server'])
        flavor = backend.flavor(request['flavorRef'])
        out.update(server=request, server_id=None,
                   server_project_id=None)
    else:
        server_id = _text(params['server_id'], 'server_id',
                          'the id of a server of the project')
        found = backend.server(server_id)
        flavor = found['flavor']
        out.update(server=None, server_id=found['id'],
                   server_project_id=found['project_id'],
                   server_status=found['status'])
    out.update(vcpus=flavor['vcpus'], memory_mb=flavor['memory_mb'],
               disk_gb=flavor['disk_gb'], flavor_id=flavor.get('id'),
               source_flavor={'id': str(flavor.get('id')),
                              'resources': dict(flavor.get('resources')
                                                or {}),
                              'traits': flavor.get('traits') or {}})
    return out


def validate_change(current, changes, filter_of):
    """What a pending or active pre-created reservation may change:
    ``on_end`` and ``resource_properties`` (with new dates, through the
    lease); the server is the reservation's for good."""
    changed = {k: v for k, v in changes.items() if current.get(k) != v}
    for key in ('server_id', 'server', 'amount'):
        if key in changed:
            raise exceptions.CantUpdateParameter(
                message='%s cannot be updated. A pre-created reservation '
                        'holds one server for good; reserve another one in '
                        'a new lease.' % key, param=key)
    for key in OUTPUT_FIELDS:
        if key in changed:
            raise exceptions.CantUpdateParameter(
                message='%s cannot be updated. Climate sets it from the '
                        'server.' % key, param=key)
    unknown = sorted(set(changed) - set(REQUEST_FIELDS))
    if unknown:
        raise exceptions.InvalidInput(
            reason='%s: not a parameter of a pre-created virtual:instance '
                   'reservation; accepted: %s' % (
                       ', '.join(unknown), ', '.join(REQUEST_FIELDS)))
    out = dict(current)
    if 'on_end' in changed:
        out['on_end'] = on_end_of(changed['on_end'])
    if 'resource_properties' in changed:
        out['resource_properties'] = filter_of(
            changed['resource_properties'])
    return out
