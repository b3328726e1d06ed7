"""A stack's template rewritten to use what its lease reserved.

The needs of a ``virtual:stack`` reservation (``needs.derive``) are booked
as reservations of their own (the parts); at the start each part makes
what it holds -- a private flavor, a private volume type, floating IPs --
before the stack is made.  :func:`pin` rewrites the template so that the
stack's resources take exactly those:

- a server (``OS::Nova::Server``) of an instance need gets the part's
  flavor (``flavor``: the reservation's private flavor, whose extra specs
  put it on the reserved hosts), and the part's server group, when it has
  one, as ``scheduler_hints.group`` (other hints kept);
- a volume (``OS::Cinder::Volume``) of a volume need gets the part's
  private volume type ``reservation:<part id>`` and the scheduler hint
  ``reservation=<part id>`` (other hints kept).  Both, because Climate's
  Cinder filter refuses the hint alone on another type
  (``doc/source/cinder-filter.rst``);
- a top-level floating IP (``OS::Neutron::FloatingIP``) of a floating IP
  need becomes one of the part's existing floating IPs through Heat's
  ``external_id`` (HOT 2016-10-14 and later): the stack uses it, does not
  make it, and leaves it to the part's end.  Its properties go (Heat
  ignores them for an external resource); an association it asked for
  (``port_id``, ``fixed_ip_address``) is kept as an
  ``OS::Neutron::FloatingIPAssociation`` of its own.  The part's floating
  IPs are taken in order, one per top-level floating IP of the need.

What cannot be pinned is left as it is and listed (``unpinned``), never
dropped in silence: floating IPs inside a group (one definition stands
for every copy, so no single address can be named), the volumes Nova
makes for a server's block device mapping (Nova creates them, not the
template), resources given through a function Climate does not evaluate,
and needs whose part is missing.

This module is pure: no I/O.  The caller resolves the floating IPs'
Neutron ids (``floatingip_ids`` beside the part's ``floatingips``).
"""

import copy

from climate.plugins.virtual_stack import needs as stack_needs

#: The private volume type of a volume reservation (the ``cinder`` volume
#: backend's ``type_name``; not imported, to stay free of cinderclient).
VOLUME_TYPE_PREFIX = 'reservation:'
#: Cinder's scheduler hint naming a volume reservation.
VOLUME_HINT = 'reservation'
#: Nova's scheduler hint naming a server group.
GROUP_HINT = 'group'
#: The HOT version from which a resource may carry ``external_id``.
EXTERNAL_ID_VERSION = '2016-10-14'
#: Suffix of the association kept for a pinned floating IP's port.
ASSOCIATION_SUFFIX = '_climate_association'
#: Properties of a floating IP that associate it with a port.
ASSOCIATION_PROPERTIES = ('port_id', 'fixed_ip_address')


def volume_type(part_id):
    """The private volume type of the volume reservation ``part_id``."""
    return VOLUME_TYPE_PREFIX + part_id


def pin(template, needs, parts):
    """``template`` rewritten to use what the lease reserved (see module).

    :param template: the parsed HOT template; not modified.
    :param needs: the stack reservation's ``needs``: dicts with
        ``resource_type``, ``resources`` (template paths) and
        ``reservation_id`` (the part holding the need).
    :param parts: ``{part reservation id: part view}``: an instance
        part has ``flavor_id`` and ``server_group_id``; a volume part
        ``id``; a floating IP part ``floatingips`` and
        ``floatingip_ids`` (their Neutron ids, in the same order).
    :returns: ``(pinned template, unpinned)``, ``unpinned`` a list of
        ``{'resource': path, 'reason': ...}`` in the needs' order.
    """
    pinned = copy.deepcopy(template)
    unpinned = []
    for need in needs or ():
        kind = need.get('resource_type')
        part = parts.get(need.get('reservation_id'))
        pinner = _PINNERS.get(kind)
        paths = list(need.get('resources') or ())
        if pinner is None:
            unpinned += [_why(p, 'Climate does not pin %s resources' % kind)
                         for p in paths]
        elif part is None:
            unpinned += [_why(p, 'the reservation holding it (%s) is not '
                                 'known' % need.get('reservation_id'))
                         for p in paths]
        else:
            unpinned += pinner(pinned, paths, part)
    return pinned, unpinned


# -- finding a path -------------------------------------------------------

def _why(path, reason):
    return {'resource': path, 'reason': reason}


def _is_nova_volume(path):
    """Whether ``path`` is a volume Nova makes for a block device mapping
    (``<server>/block_device_mapping_v2/<index>``)."""
    parts = path.split('/')
    return len(parts) >= 3 and parts[-1].isdigit() and \
        parts[-2] in stack_needs.BDM_PROPERTIES


def _definition(template, path):
    """The resource definition at ``path``: the top-level resource, then
    for each further component the member definition under the
    ``properties`` of the one before.  None when a step is not a mapping
    (a function Climate does not evaluate stands in the way)."""
    first, *rest = path.split('/')
    node = (template.get('resources') or {}).get(first)
    for component in rest:
        props = node.get('properties') if _mapping(node) else None
        if not _mapping(props):
            return None
        node = props.get(component)
    return node if _mapping(node) else None


def _mapping(value):
    """Whether ``value`` is a literal mapping, not a function call."""
    return isinstance(value, dict) and not (
        len(value) == 1 and next(iter(value)) in stack_needs.INTRINSICS)


def _properties(definition):
    """The definition's properties mapping (made when absent), None when
    they are given through a function."""
    props = definition.setdefault('properties', {})
    if props is None:
        props = definition['properties'] = {}
    return props if _mapping(props) else None


def _merge_hints(props, hints):
    """Add ``hints`` to the properties' ``scheduler_hints``; False when
    those are a function (they cannot be merged)."""
    current = props.get('scheduler_hints')
    if current is None:
        current = {}
    if not _mapping(current):
        return False
    props['scheduler_hints'] = dict(current, **hints)
    return True


def _target(template, path, rtype):
    """``(definition, properties, None)`` of the resource at ``path`` of
    type ``rtype``, or ``(None, None, unpinned item)``."""
    definition = _definition(template, path)
    if definition is None:
        return None, None, _why(path, 'it is not a resource definition '
                                      'Climate can rewrite (given through a '
                                      'function?)')
    if definition.get('type') != rtype:
        return None, None, _why(path, 'it is a %s, not a %s' % (
            definition.get('type'), rtype))
    props = _properties(definition)
    if props is None:
        return None, None, _why(path, 'its properties are given through '
                                      'a function')
    return definition, props, None


# -- pinning each kind ----------------------------------------------------

def _pin_servers(template, paths, part):
    unpinned = []
    flavor = part.get('flavor_id')
    group = part.get('server_group_id')
    for path in paths:
        if flavor in (None, ''):
            unpinned.append(_why(path, 'its reservation has no flavor'))
            continue
        _definition_, props, problem = _target(template, path,
                                               stack_needs.SERVER)
        if problem is not None:
            unpinned.append(problem)
            continue
        props['flavor'] = flavor
        if group and not _merge_hints(props, {GROUP_HINT: group}):
            # on the reserved hosts all the same, but not held together
            unpinned.append(_why(path, 'its scheduler_hints are given '
                                       'through a function: the '
                                       'reservation\'s server group %s is '
                                       'not set' % group))
    return unpinned


def _pin_volumes(template, paths, part):
    unpinned = []
    part_id = part.get('id')
    for path in paths:
        if _is_nova_volume(path):
            unpinned.append(_why(path, 'Nova makes this volume for the '
                                       'server\'s block device mapping; '
                                       'Climate cannot give it the '
                                       'reservation\'s volume type'))
            continue
        _definition_, props, problem = _target(
            template, path, stack_needs.CINDER_VOLUME)
        if problem is None and \
                not _merge_hints(props, {VOLUME_HINT: part_id}):
            problem = _why(path, 'its scheduler_hints are given through a '
                                 'function')
        if problem is not None:
            unpinned.append(problem)
            continue
        props['volume_type'] = volume_type(part_id)
    return unpinned


def _external_ids_allowed(template):
    """Whether the template's HOT version knows ``external_id``: dates
    from 2016-10-14, and every release name (newton and later)."""
    version = str(template.get('heat_template_version', ''))
    if version[:1].isdigit():
        return version >= EXTERNAL_ID_VERSION
    return bool(version)


def _association_name(template, name):
    """A resource name for ``name``'s association, free in the template."""
    resources = template.setdefault('resources', {})
    candidate, n = name + ASSOCIATION_SUFFIX, 1
    while candidate in resources:
        n += 1
        candidate = '%s%s_%d' % (name, ASSOCIATION_SUFFIX, n)
    return candidate


def _pin_floating_ips(template, paths, part):
    unpinned = []
    ids = list(part.get('floatingip_ids') or ())
    allowed = _external_ids_allowed(template)
    for path in paths:
        if '/' in path:
            unpinned.append(_why(path, 'a floating IP inside a group: one '
                                       'definition stands for every copy, '
                                       'so no reserved address can be '
                                       'named'))
            continue
        if not allowed:
            unpinned.append(_why(path, 'the template\'s '
                                       'heat_template_version is older '
                                       'than %s, which Heat needs for '
                                       'external_id' % EXTERNAL_ID_VERSION))
            continue
        definition, props, problem = _target(template, path,
                                             stack_needs.FLOATING_IP)
        if problem is None and not ids:
            problem = _why(path, 'no reserved floating IP is left for it')
        if problem is not None:
            unpinned.append(problem)
            continue
        # an external resource ignores its properties: the association
        # they asked for becomes a resource of its own
        wanted = {key: props[key] for key in ASSOCIATION_PROPERTIES
                  if props.get(key) not in (None, '')}
        if 'port_id' in wanted:
            template['resources'][_association_name(template, path)] = {
                'type': 'OS::Neutron::FloatingIPAssociation',
                'properties': dict(wanted, floatingip_id={
                    'get_resource': path})}
        definition.pop('properties', None)
        definition['external_id'] = ids.pop(0)
    return unpinned


_PINNERS = {
    stack_needs.INSTANCE: _pin_servers,
    stack_needs.VOLUME: _pin_volumes,
    stack_needs.FLOATINGIP: _pin_floating_ips,
}
