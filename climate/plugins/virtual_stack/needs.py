"""What a Heat stack needs over a lease, as reservations Climate books.

A ``virtual:stack`` reservation carries a Heat (HOT) template, already
parsed into a dict, with its parameters and environment.  Climate does
not reserve "a stack": it reserves what the stack's resources hold while
they exist, as reservations of the resource types it already has.  This
module derives them; it is pure (no I/O, no database, no cloud) so the
API can answer a 400 before anything is written, and so it can be
tested on templates alone.

**What holds capacity.**

- ``OS::Nova::Server``: a ``virtual:instance`` slot of its flavor's
  shape (``vcpus``, ``memory_mb``, ``disk_gb``).  Flavors are resolved
  by name or id through the mapping the caller gives (the flavors the
  project may use); an unknown flavor is a 400.  A block device mapping
  entry (``block_device_mapping_v2`` or ``block_device_mapping``) with a
  ``volume_size`` and no ``volume_id`` makes Nova create a volume, so it
  also needs ``virtual:volume`` capacity.  An entry with a ``volume_id``
  uses an existing volume (or one of the template's volumes, counted on
  its own), so it needs nothing more.
- ``OS::Cinder::Volume``: ``virtual:volume`` capacity, ``size_gb`` in
  ``count`` volumes of its ``volume_type``.
- ``OS::Neutron::FloatingIP``: ``virtual:floatingip`` addresses of its
  ``floating_network`` (passed on as ``network_id``; a name is not
  looked up here).

**Groups multiply.**  ``OS::Heat::ResourceGroup`` makes ``count`` copies
of its ``resource_def`` (Heat's default count is 1; 0 makes nothing).
``OS::Heat::AutoScalingGroup`` holds between ``min_size`` and
``max_size`` copies of its ``resource`` and scales on its own, without
asking Climate: a reservation smaller than ``max_size`` would let a
scale-up fail half-way through the lease, so Climate reserves the
maximum.  Groups nest, and the factors multiply.

**Merged needs.**  A lease books one reservation per distinct request,
and N identical requests are one request for N: servers of the same
flavor (and the same affinity group) are one ``virtual:instance`` need
whose ``amount`` is their number; volumes of the same type are one
``virtual:volume`` need (gigabytes and volumes summed); floating IPs of
the same network are one ``virtual:floatingip`` need.  Each need lists
the template resources it stands for (``resources``: paths such as
``web``, ``group/resource_def``, ``asg/resource/resource_def`` or
``db/block_device_mapping_v2/0``), so a 409 can be told in the
template's words.

**Affinity.**  A server whose ``scheduler_hints`` has ``group:
{get_resource: sg}`` on an ``OS::Nova::ServerGroup`` ``sg`` of the
template gets ``affinity`` true (policy ``affinity``) or false
(``anti-affinity``); soft policies, an unresolvable policy or a group
that is not one of the template's server groups give null (no
placement constraint).  Servers of different groups are separate needs.
Kept simple: servers of one group but different flavors are separate
needs, so the reservation does not bind them to each other's hosts.

**What holds nothing** (networks, ports, routers, security groups,
keypairs, server groups, configs, wait conditions, ...) is listed under
``free``.  Anything else -- a resource type Climate has no reservation
for (``OS::Trove::Instance``, ``OS::Heat::Stack``, ...), a nested
template file, a type the environment's ``resource_registry`` maps to
something else, an unknown (provider) type -- is listed under
``unreservable`` with the reason: never silently dropped, so the caller
can tell the user what the lease does not cover.

**Intrinsic functions.**  ``get_param`` is resolved (with list paths,
``get_param: [p, key, 0]``) the way Heat does: explicit parameters win
over the environment's ``parameters``, over its ``parameter_defaults``,
over the template's defaults.  A declared parameter without a value is
a 400 naming it.  Other functions (``get_resource``, ``get_attr``,
``str_replace``, ``if``, ...) are left as they are; where a value that
decides what is reserved (a flavor, a size, a count, a ``max_size``, a
network, a volume type) is still not a literal, it is a 400 saying
which property of which resource Climate cannot evaluate.

**Conditions.**  A resource whose ``condition`` is known to be false (a
literal false, or ``equals``/``not``/``and``/``or`` over parameters and
literals that evaluates false) is skipped.  When the condition cannot be
evaluated here (it depends on anything but parameters), the resource is
counted: when unsure, reserve the maximum, as for auto-scaling groups.

A template that needs nothing Climate can reserve is a 400 telling what
was found.
"""

import fnmatch
import json

from climate import exceptions

RESOURCE_TYPE = 'virtual:stack'

INSTANCE = 'virtual:instance'
VOLUME = 'virtual:volume'
FLOATINGIP = 'virtual:floatingip'

SERVER = 'OS::Nova::Server'
CINDER_VOLUME = 'OS::Cinder::Volume'
FLOATING_IP = 'OS::Neutron::FloatingIP'
RESOURCE_GROUP = 'OS::Heat::ResourceGroup'
AUTOSCALING_GROUP = 'OS::Heat::AutoScalingGroup'
SERVER_GROUP = 'OS::Nova::ServerGroup'

#: Resource types that hold no capacity Climate reserves: listed under
#: ``free``.  A type neither here nor handled is ``unreservable``.
FREE_TYPES = frozenset((
    'OS::Aodh::Alarm',
    'OS::Aodh::CompositeAlarm',
    'OS::Aodh::GnocchiAggregationByMetricsAlarm',
    'OS::Aodh::GnocchiAggregationByResourcesAlarm',
    'OS::Aodh::GnocchiResourcesAlarm',
    'OS::Cinder::VolumeAttachment',
    'OS::Heat::AutoScalingPolicy',
    'OS::Heat::CloudConfig',
    'OS::Heat::MultipartMime',
    'OS::Heat::None',
    'OS::Heat::RandomString',
    'OS::Heat::ScalingPolicy',
    'OS::Heat::SoftwareComponent',
    'OS::Heat::SoftwareConfig',
    'OS::Heat::SoftwareDeployment',
    'OS::Heat::SoftwareDeploymentGroup',
    'OS::Heat::StructuredConfig',
    'OS::Heat::StructuredDeployment',
    'OS::Heat::StructuredDeploymentGroup',
    'OS::Heat::UpdateWaitConditionHandle',
    'OS::Heat::Value',
    'OS::Heat::WaitCondition',
    'OS::Heat::WaitConditionHandle',
    'OS::Neutron::AddressScope',
    'OS::Neutron::ExtraRoute',
    'OS::Neutron::ExtraRouteSet',
    'OS::Neutron::FloatingIPAssociation',
    'OS::Neutron::Net',
    'OS::Neutron::Port',
    'OS::Neutron::QoSBandwidthLimitRule',
    'OS::Neutron::QoSPolicy',
    'OS::Neutron::Router',
    'OS::Neutron::RouterInterface',
    'OS::Neutron::SecurityGroup',
    'OS::Neutron::SecurityGroupRule',
    'OS::Neutron::Subnet',
    'OS::Neutron::SubnetPool',
    'OS::Neutron::Trunk',
    'OS::Nova::KeyPair',
    SERVER_GROUP,
))

#: Heat's intrinsic functions: a one-key mapping with one of these keys
#: is a function call, not a literal value.
INTRINSICS = frozenset((
    'and', 'contains', 'digest', 'equals', 'filter', 'get_attr',
    'get_file', 'get_param', 'get_resource', 'if', 'list_concat',
    'list_concat_unique', 'list_join', 'make_url', 'map_merge',
    'map_replace', 'not', 'or', 'repeat', 'resource_facade', 'str_replace',
    'str_replace_strict', 'str_replace_vstrict', 'str_split', 'yaql',
))

#: Parameters Heat sets itself; their values are not known before the
#: stack exists, so they stay unresolved.
PSEUDO_PARAMETERS = frozenset(('OS::stack_name', 'OS::stack_id',
                               'OS::project_id'))

#: Server group policy -> the instance reservation's ``affinity``.  Soft
#: policies are best effort in Nova: no constraint (null) to reserve.
AFFINITY = {'affinity': True, 'anti-affinity': False}

#: Block device mapping properties whose entries may create a volume.
BDM_PROPERTIES = ('block_device_mapping_v2', 'block_device_mapping')

_TRUE = frozenset(('true', 't', 'yes', 'y', 'on', '1'))
_FALSE = frozenset(('false', 'f', 'no', 'n', 'off', '0'))


def derive(template, parameters=None, environment=None, flavors=None):
    """What the stack of ``template`` needs, as Climate reservations.

    :param template: the parsed HOT template (a dict with
        ``heat_template_version`` and ``resources``).
    :param parameters: the stack's explicit parameter values.
    :param environment: the parsed Heat environment (``parameters``,
        ``parameter_defaults``, ``resource_registry``).
    :param flavors: ``{name_or_id: {'id', 'vcpus', 'ram' (MB),
        'disk' (GB)}}``, the flavors servers may name.
    :returns: ``{'needs': [...], 'free': [...], 'unreservable': [...]}``
        sorted: needs by resource type then first resource path, the
        others by path.  A need is a reservation request of
        ``virtual:instance`` (``amount``, ``vcpus``, ``memory_mb``,
        ``disk_gb``, ``affinity``), ``virtual:volume`` (``size_gb``,
        ``count``, ``volume_type``) or ``virtual:floatingip``
        (``network_id``, ``amount``), plus ``resources``: the template
        paths it stands for.  ``free`` items are ``{'resource',
        'type'}``, ``unreservable`` ones ``{'resource', 'type',
        'reason'}``.
    :raises climate.exceptions.InvalidInput: a malformed template, a
        missing parameter, an unknown flavor, a value Climate cannot
        evaluate, or nothing to reserve.
    """
    _check_shape(template, parameters, environment, flavors)
    stack = _Stack(template, parameters, environment or {}, flavors or {})
    stack.walk_template()
    derived = stack.result()
    if not derived['needs']:
        raise _invalid('the template needs nothing Climate can reserve: %s'
                       % stack.found())
    return derived


def reservations_of(derived):
    """The reservation requests a lease books for ``derived`` (what
    :func:`derive` returned): its needs without their ``resources``."""
    return [{k: v for k, v in need.items() if k != 'resources'}
            for need in derived['needs']]


# -- checks -------------------------------------------------------------------

def _invalid(reason):
    return exceptions.InvalidInput(reason=reason)


def _check_shape(template, parameters, environment, flavors):
    """The template's outer shape, and the other arguments' types: each
    wrong one is a sentence the user can act on."""
    if not isinstance(template, dict):
        raise _invalid('the template must be a Heat (HOT) template, a '
                       'mapping with heat_template_version and resources, '
                       'not %s.' % type(template).__name__)
    if 'heat_template_version' not in template:
        raise _invalid('the template has no heat_template_version: Climate '
                       'reads Heat (HOT) templates only.')
    resources = template.get('resources')
    if resources is not None and not isinstance(resources, dict):
        raise _invalid('the template\'s resources must be a mapping of '
                       'resource names to definitions, not %s.'
                       % type(resources).__name__)
    for section in ('parameters', 'conditions'):
        if not isinstance(template.get(section) or {}, dict):
            raise _invalid('the template\'s %s must be a mapping, not %s.'
                           % (section, type(template[section]).__name__))
    for name, value in (('parameters', parameters),
                        ('environment', environment),
                        ('flavors', flavors)):
        if value is not None and not isinstance(value, dict):
            raise _invalid('%s must be a mapping, not %s.'
                           % (name, type(value).__name__))
    for section in ('parameters', 'parameter_defaults', 'resource_registry'):
        if not isinstance((environment or {}).get(section) or {}, dict):
            raise _invalid('the environment\'s %s must be a mapping.'
                           % section)


def _is_literal(value):
    """Whether ``value`` holds no intrinsic function call."""
    if isinstance(value, dict):
        if len(value) == 1 and next(iter(value)) in INTRINSICS:
            return False
        return all(_is_literal(v) for v in value.values())
    if isinstance(value, list):
        return all(_is_literal(v) for v in value)
    return True


def _show(value):
    """A value as the user wrote it (JSON, as the API speaks)."""
    return json.dumps(value, sort_keys=True, default=str)


# -- parameters ---------------------------------------------------------------

def _typed(name, declaration, value):
    """A parameter's value as Heat hands it to get_param: strings of
    list, json, number and boolean parameters are parsed (values given
    on a command line or in a form arrive as strings)."""
    kind = declaration.get('type') if isinstance(declaration, dict) else None
    if not isinstance(value, str):
        return value
    if kind == 'comma_delimited_list':
        return [item.strip() for item in value.split(',')] if value else []
    if kind == 'json':
        try:
            return json.loads(value)
        except ValueError:
            raise _invalid('parameter %s is of type json but its value is '
                           'not JSON: %s' % (name, value))
    if kind == 'number':
        for cast in (int, float):
            try:
                return cast(value)
            except ValueError:
                pass
    if kind == 'boolean' and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    return value


def _parameter_values(template, parameters, environment):
    """Every declared parameter's value, in Heat's precedence: explicit
    parameters, then the environment's ``parameters``, then its
    ``parameter_defaults``, then the template's ``default``.  A declared
    parameter left without a value is required and missing: a 400 naming
    them all, as Heat would refuse the stack."""
    declared = template.get('parameters') or {}
    layers = (parameters or {}, environment.get('parameters') or {},
              environment.get('parameter_defaults') or {})
    values, missing = {}, []
    for name, declaration in declared.items():
        for layer in layers:
            if name in layer:
                values[name] = layer[name]
                break
        else:
            if isinstance(declaration, dict) and 'default' in declaration:
                values[name] = declaration['default']
            else:
                missing.append(name)
                continue
        values[name] = _typed(name, declaration, values[name])
    if missing:
        raise _invalid('the template needs parameter%s %s, given neither '
                       'in the parameters nor in the environment and with '
                       'no default.' % ('s' if len(missing) > 1 else '',
                                        ', '.join(sorted(missing))))
    return values


# -- the walk -----------------------------------------------------------------

class _Stack:
    """One derivation: the template's context (parameter values,
    conditions, registry, flavors, server groups) and what was found."""

    def __init__(self, template, parameters, environment, flavors):
        self.resources = template.get('resources') or {}
        self.values = _parameter_values(template, parameters, environment)
        self.conditions = template.get('conditions') or {}
        self.registry = environment.get('resource_registry') or {}
        self.flavors = flavors
        self.needs = {}
        self.free = []
        self.unreservable = []
        self.skipped = []
        self.server_groups = self._server_groups()

    # -- intrinsic functions --------------------------------------------------

    def resolve(self, value):
        """``value`` with every ``get_param`` replaced by its value;
        other functions are left as they are (their arguments resolved)."""
        if isinstance(value, dict):
            if len(value) == 1 and 'get_param' in value:
                return self._get_param(self.resolve(value['get_param']))
            return {k: self.resolve(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        return value

    def _get_param(self, args):
        path = args if isinstance(args, list) else [args]
        if not path or not _is_literal(path):
            return {'get_param': args}      # not ours to evaluate
        name = path[0]
        if name in PSEUDO_PARAMETERS:
            return {'get_param': args}      # known once the stack exists
        if name not in self.values:
            raise _invalid('get_param %s: the template declares no '
                           'parameter %s.' % (_show(args), name))
        value = self.values[name]
        for key in path[1:]:
            value = self._step(value, key, args)
        return value

    @staticmethod
    def _step(value, key, args):
        """One step of a get_param path: a mapping's key, a list's
        index."""
        if isinstance(value, dict) and key in value:
            return value[key]
        if isinstance(value, list):
            try:
                return value[int(key)]
            except (ValueError, TypeError, IndexError):
                pass
        raise _invalid('get_param %s: the parameter\'s value has no %s.'
                       % (_show(args), _show(key)))

    def condition(self, cond, seen=()):
        """True, False, or None when it cannot be evaluated here (it
        depends on something else than parameters and literals)."""
        if isinstance(cond, bool):
            return cond
        if isinstance(cond, str):
            if cond not in self.conditions:
                raise _invalid('condition %s is not defined in the '
                               'template\'s conditions.' % cond)
            if cond in seen:
                raise _invalid('condition %s refers to itself.' % cond)
            return self.condition(self.conditions[cond], seen + (cond,))
        if not (isinstance(cond, dict) and len(cond) == 1):
            return None
        (function, args), = cond.items()
        if function == 'equals' and isinstance(args, list) and \
                len(args) == 2:
            left, right = self.resolve(args)
            if _is_literal(left) and _is_literal(right):
                return left == right
            return None
        if function == 'not':
            known = self.condition(args, seen)
            return None if known is None else not known
        if function in ('and', 'or') and isinstance(args, list):
            known = [self.condition(a, seen) for a in args]
            decisive = function == 'or'     # the value that settles it
            if any(k is decisive for k in known):
                return decisive
            if all(k is (not decisive) for k in known):
                return not decisive
        return None

    # -- values that decide what is reserved ----------------------------------

    def _cannot(self, prop, path, rtype, value):
        return _invalid('Climate cannot evaluate the %s of resource %s (%s): '
                        '%s is not a literal value or a get_param of one.'
                        % (prop, path, rtype, _show(value)))

    def scalar(self, raw, prop, path, rtype, optional=False):
        """A property that must be a literal string or number once the
        parameters are resolved (None when ``optional`` and unset)."""
        value = self.resolve(raw)
        if value in (None, ''):
            if optional:
                return None
            raise _invalid('resource %s (%s) gives no %s: Climate needs it '
                           'to know what to reserve.' % (path, rtype, prop))
        if isinstance(value, bool) or \
                not isinstance(value, (str, int, float)):
            raise self._cannot(prop, path, rtype, value)
        return value

    def integer(self, raw, prop, path, rtype, minimum):
        """A property that must be a whole number >= ``minimum``."""
        value = self.scalar(raw, prop, path, rtype)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        elif isinstance(value, str) and value.strip().lstrip('-').isdigit():
            value = int(value)
        if not isinstance(value, int):
            raise _invalid('the %s of resource %s (%s) must be a whole '
                           'number, not %s.' % (prop, path, rtype,
                                                _show(value)))
        if value < minimum:
            raise _invalid('the %s of resource %s (%s) must be at least %d, '
                           'not %d.' % (prop, path, rtype, minimum, value))
        return value

    def properties(self, raw, path, rtype):
        """A resource's properties mapping (a get_param may give it)."""
        value = raw if isinstance(raw, dict) else self.resolve(raw)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self._cannot('properties', path, rtype, value)
        return value

    # -- resources ------------------------------------------------------------

    def walk_template(self):
        """Every top-level resource whose condition is not known false,
        by name (the order does not change the result, it keeps errors
        reproducible)."""
        for name in sorted(self.resources):
            definition = self.resources[name]
            if not isinstance(definition, dict) or \
                    not isinstance(definition.get('type'), str):
                raise _invalid('resource %s of the template has no type: '
                               'each resource is a mapping with a type.'
                               % name)
            if 'condition' in definition and \
                    self.condition(definition['condition']) is False:
                self.skipped.append(name)
                continue
            self.walk(name, name, definition['type'],
                      definition.get('properties'), 1)

    def walk(self, name, path, rtype, raw_props, times):
        """Count ``times`` copies of one resource.  ``name`` is the
        top-level resource's name (None inside a group), for the
        registry's per-resource mappings."""
        if times == 0:
            self.skipped.append(path)   # a group of 0 makes nothing
            return
        mapped = self._mapped(name, rtype)
        if mapped is not None:
            self._unreservable(path, rtype, 'the environment\'s '
                               'resource_registry maps it to %s, which '
                               'Climate does not evaluate' % mapped)
            return
        handler = _HANDLERS.get(rtype)
        if handler is not None:
            handler(self, path, rtype, self.properties(raw_props, path,
                                                       rtype), times)
        elif rtype in FREE_TYPES:
            self.free.append({'resource': path, 'type': rtype})
        else:
            self._unreservable(path, rtype, _why_unreservable(rtype))

    def _unreservable(self, path, rtype, reason):
        self.unreservable.append({'resource': path, 'type': rtype,
                                  'reason': reason})

    def _mapped(self, name, rtype):
        """What the environment's resource_registry maps ``rtype`` to
        (per resource, exactly, then by glob, as Heat looks it up), or
        None.  Only names of other types or of templates count: a
        mapping of a type to itself changes nothing."""
        per_resource = (self.registry.get('resources') or {}).get(name) \
            if name is not None else None
        candidates = [(per_resource or {}).get(rtype),
                      self.registry.get(rtype)]
        candidates += [target for pattern, target
                       in sorted(self.registry.items(), key=lambda i: i[0])
                       if pattern != 'resources' and '*' in pattern and
                       fnmatch.fnmatchcase(rtype, pattern)]
        for target in candidates:
            if isinstance(target, str) and target != rtype:
                return target
        return None

    def _server_groups(self):
        """The template's server groups: name -> affinity (True, False
        or None when the policy is soft or cannot be evaluated)."""
        groups = {}
        for name, definition in self.resources.items():
            if not isinstance(definition, dict) or \
                    definition.get('type') != SERVER_GROUP:
                continue
            props = definition.get('properties')
            props = self.resolve(props) if props is not None else {}
            props = props if isinstance(props, dict) else {}
            policies = props.get('policies', props.get('policy'))
            policies = policies if isinstance(policies, list) else \
                [policies]
            groups[name] = next((AFFINITY[p] for p in policies
                                 if isinstance(p, str) and p in AFFINITY),
                                None)
        return groups

    def _need(self, key, fresh):
        """The need merged under ``key``, made from ``fresh`` if new."""
        if key not in self.needs:
            fresh['resources'] = set()
            self.needs[key] = fresh
        return self.needs[key]

    def server(self, path, rtype, props, times):
        """``times`` instance slots of the server's flavor, and the
        volumes its block device mappings create."""
        wanted = self.scalar(props.get('flavor'), 'flavor', path, rtype)
        flavor = self._flavor(wanted, path, rtype)
        group, affinity = self._affinity(props)
        need = self._need((INSTANCE, str(flavor['id']), group), {
            'resource_type': INSTANCE, 'amount': 0,
            'vcpus': int(flavor['vcpus']),
            'memory_mb': int(flavor['ram']),
            'disk_gb': int(flavor['disk']),
            'affinity': affinity})
        need['amount'] += times
        need['resources'].add(path)
        for prop in BDM_PROPERTIES:
            self._block_devices(path, rtype, prop, props.get(prop), times)

    def _flavor(self, wanted, path, rtype):
        """The flavor a server names, by name or id."""
        found = self.flavors.get(wanted)
        if found is None:
            found = self.flavors.get(str(wanted))
        if found is None:
            found = next((f for _key, f in sorted(self.flavors.items(),
                                                  key=lambda i: str(i[0]))
                          if str(f.get('id')) == str(wanted)), None)
        if found is None:
            raise _invalid('resource %s (%s) asks for flavor %s, which is '
                           'not a flavor Climate knows (neither a name nor '
                           'an id).' % (path, rtype, _show(wanted)))
        return found

    def _affinity(self, props):
        """(server group name, affinity) of a server: its group when its
        scheduler hints name one of the template's server groups."""
        hints = self.resolve(props.get('scheduler_hints'))
        group = hints.get('group') if isinstance(hints, dict) else None
        if isinstance(group, dict) and list(group) == ['get_resource'] and \
                group['get_resource'] in self.server_groups:
            name = group['get_resource']
            return name, self.server_groups[name]
        return None, None

    def _block_devices(self, path, rtype, prop, raw, times):
        entries = self.resolve(raw)
        if entries in (None, ''):
            return
        if not isinstance(entries, list):
            raise self._cannot(prop, path, rtype, entries)
        for index, entry in enumerate(entries):
            where = '%s[%d]' % (prop, index)
            if not isinstance(entry, dict):
                raise self._cannot(where, path, rtype, entry)
            # Nova creates a volume for a size without an existing volume
            if entry.get('volume_size') in (None, '') or \
                    entry.get('volume_id') not in (None, ''):
                continue
            size = self.integer(entry['volume_size'], where + '.volume_size',
                                path, rtype, 1)
            volume_type = self.scalar(entry.get('volume_type'),
                                      where + '.volume_type', path, rtype,
                                      optional=True)
            self._add_volume('%s/%s/%d' % (path, prop, index), size,
                             volume_type, times)

    def volume(self, path, rtype, props, times):
        """``times`` volumes of ``size`` GB of the volume's type."""
        size = self.integer(props.get('size'), 'size', path, rtype, 1)
        volume_type = self.scalar(props.get('volume_type'), 'volume_type',
                                  path, rtype, optional=True)
        self._add_volume(path, size, volume_type, times)

    def _add_volume(self, path, size, volume_type, times):
        need = self._need((VOLUME, volume_type), {
            'resource_type': VOLUME, 'size_gb': 0, 'count': 0,
            'volume_type': volume_type})
        need['size_gb'] += size * times
        need['count'] += times
        need['resources'].add(path)

    def floating_ip(self, path, rtype, props, times):
        """``times`` addresses of the floating network."""
        raw = props.get('floating_network', props.get('floating_network_id'))
        network = self.scalar(raw, 'floating_network', path, rtype)
        need = self._need((FLOATINGIP, str(network)), {
            'resource_type': FLOATINGIP, 'network_id': network,
            'amount': 0})
        need['amount'] += times
        need['resources'].add(path)

    def resource_group(self, path, rtype, props, times):
        """``count`` copies (Heat's default 1) of the ``resource_def``."""
        count = self.integer(props.get('count', 1), 'count', path, rtype, 0)
        self._member(path, rtype, props, 'resource_def', times * count)

    def autoscaling_group(self, path, rtype, props, times):
        """``max_size`` copies of the ``resource``: the group scales up to
        it without asking Climate, so the maximum is reserved."""
        most = self.integer(props.get('max_size'), 'max_size', path, rtype, 0)
        self._member(path, rtype, props, 'resource', times * most)

    def _member(self, path, rtype, props, prop, times):
        """Walk a group's member definition ``props[prop]``."""
        member = self.resolve(props.get(prop))
        if not isinstance(member, dict) or \
                not isinstance(member.get('type'), str):
            raise self._cannot(prop, path, rtype, member)
        self.walk(None, '%s/%s' % (path, prop), member['type'],
                  member.get('properties'), times)

    # -- the answer -----------------------------------------------------------

    def result(self):
        """The needs, free and unreservable resources, sorted."""
        needs = []
        for need in self.needs.values():
            need = dict(need, resources=sorted(need['resources']))
            needs.append(need)
        needs.sort(key=lambda n: (n['resource_type'], n['resources'][0]))
        return {'needs': needs,
                'free': sorted(self.free, key=_by_path),
                'unreservable': sorted(self.unreservable, key=_by_path)}

    def found(self):
        """What the template holds, for the "nothing to reserve" 400."""
        if not self.resources:
            return 'it has no resources.'
        parts = []
        if self.free:
            parts.append('resources that hold nothing to reserve: %s' % (
                ', '.join('%s (%s)' % (i['resource'], i['type'])
                          for i in sorted(self.free, key=_by_path))))
        if self.unreservable:
            parts.append('resources Climate cannot reserve: %s' % (
                ', '.join('%s (%s: %s)' % (i['resource'], i['type'],
                                           i['reason'])
                          for i in sorted(self.unreservable,
                                          key=_by_path))))
        if self.skipped:
            parts.append('resources skipped (condition false or group of '
                         'zero): %s' % ', '.join(sorted(self.skipped)))
        return 'found %s.' % '; '.join(parts)


def _by_path(item):
    return item['resource'], item['type']


def _why_unreservable(rtype):
    """The reason a resource type is listed as unreservable."""
    if rtype.endswith(('.yaml', '.yml', '.template', '.json')) or \
            '/' in rtype:
        return ('a nested template: Climate does not read template files, '
                'so what it holds is not reserved')
    if rtype == 'OS::Heat::Stack':
        return ('a nested stack: Climate does not evaluate its template, '
                'so what it holds is not reserved')
    if rtype.startswith(('OS::', 'AWS::')):
        return 'Climate has no reservation for this resource type'
    return ('an unknown resource type (a provider resource?): Climate '
            'cannot tell what it holds')


_HANDLERS = {
    SERVER: _Stack.server,
    CINDER_VOLUME: _Stack.volume,
    FLOATING_IP: _Stack.floating_ip,
    RESOURCE_GROUP: _Stack.resource_group,
    AUTOSCALING_GROUP: _Stack.autoscaling_group,
}
