"""The ``heat`` stack backend: the lease's stack, made by Heat.

With ``[stacks] inventory = heat`` the flavors templates may name are
Nova's (every flavor, public or not: an admin call), the template is
validated by Heat as the caller at the create, and at the start Heat
makes the stack **as the lease's user** (its trust), so that the stack and
what it holds are the project's.  The template is first pinned to what
the lease's parts hold (:mod:`climate.plugins.virtual_stack.pinning`):
servers get their part's private flavor and server group, volumes their
part's volume type, top-level floating IPs become the part's own floating
IPs (their Neutron ids looked up by address with Climate's service
credentials).  What cannot be pinned is logged.

**The start** is idempotent.  The stack is named ``stack_name`` and
tagged ``climate`` and ``reservation:<id>``; a start looks for it by name
first.  A stack of that name without the reservation's tag is someone
else's: the start fails (503, retried) rather than touch it.  Ours:

- ``CREATE_COMPLETE`` (or any other settled, healthy state): done;
- ``CREATE_IN_PROGRESS``: waited for;
- any ``*_FAILED`` (or a create rolled back): deleted, waited until gone,
  and made again;
- being deleted: waited until gone, then made.

Heat gets ``timeout_mins = [stacks] stack_timeout`` and no rollback (a
failed stack is kept for its reasons, and replaced by the retry); Climate
polls every :data:`POLL_INTERVAL` seconds up to the same time for
``CREATE_COMPLETE``.  A ``*_FAILED`` status raises
:class:`climate.exceptions.CloudUnavailable` with Heat's reason, as does
any Heat, Nova, Neutron or Keystone error, so the event is retried.

**On start: wake** (seed 000's "created, provisioned, but not
started").  :meth:`HeatStackBackend.hold`, called after the create's
commit and at each periodic pass until the start, takes one step each
time and never waits on Heat: it asks Heat for the stack as the user,
from the template as given (the parts hold nothing before the start:
their flavors have no capacity yet, their volume types and floating IPs
do not exist), tagged :data:`HELD_TAG`; once ``CREATE_COMPLETE`` it
shelves every server of the stack (nested groups included: Heat's
resource list with ``nested_depth``) with the pre-created servers' step
(``nova_servers``), so that they hold no host (``SHELVED_OFFLOADED``).
A failed stack's reason is answered and its deletion asked; the next
pass makes it again.  The start unshelves each server onto a slot of the
instance part booked for its template resource (:func:`placement`), as
a pre-created server is: an aggregate named :func:`server_key` lets that
one server onto the host (``ClimateFilter``), and the start waits until
it runs there.  A stack still being made is waited for; a held stack
gone or failed by the start is replaced by one made pinned, as with
``create``.  A lease deleted before the start deletes the stack.

**A started stack's update** (:meth:`HeatStackBackend.update`, one step
per call: after the lease update's commit, then each periodic pass):
the reservation's new template, pinned to the parts as at the start,
its parameters and environment are sent as the user (a PUT, Heat's
rollback on, ``timeout_mins`` as at the create); then the stack is read
until it settles: ``UPDATE_COMPLETE`` with its outputs, or the failure
with the reason of Heat's ``UPDATE_FAILED`` event and what became of
the rollback.

**The end** acts with Climate's service credentials, never the trust (it
may be gone by then), on the lease project's stacks (Heat's endpoint for
that project, which Heat lets an admin use).  The stack is found by its
``stack_id`` (else by name and tag); none is the end done.  A held
stack's aggregates go first.  ``on_end``:

- ``delete``: the stack is deleted, and waited for until gone;
- ``suspend``: suspended (``SUSPEND_COMPLETE``); it keeps what it holds,
  outside the lease;
- ``snapshot``: each server's Nova snapshot, an image named
  ``reservation-<id>-<server id>`` (found again by a re-run), given to
  the lease's project and listed as ``images``; then the stack is
  deleted.  Heat's own stack snapshots are not used: Heat deletes them,
  and the images they hold, with the stack.  Volumes are deleted with
  the stack, their data not kept.
"""

import json
import time

from heatclient import exc as heat_exc
from keystoneauth1 import exceptions as ks_exc
from novaclient import exceptions as nova_exc
from oslo_log import log as logging

from climate.clients import calls as cloud_calls
from climate.clients import heat as heat_clients
from climate.clients import neutron as neutron_clients
from climate.clients import nova as nova_clients
from climate import dates
from climate import exceptions
from climate.plugins.virtual_instance.backends import nova_servers
from climate.plugins.virtual_stack.backends import base
from climate.plugins.virtual_stack import needs as stack_needs
from climate.plugins.virtual_stack import pinning

LOG = logging.getLogger(__name__)

#: Seconds between two looks at a stack (or a snapshot) Heat works on.
POLL_INTERVAL = 2.0
#: The tags of every stack Climate makes, with :data:`RESERVATION_TAG`.
TAG = 'climate'
RESERVATION_TAG = 'reservation:%s'
#: The tag of a stack made before the start (``on_start: wake``), from
#: the template as given: its servers are woken at the start.
HELD_TAG = 'climate:held'
GONE = 'DELETE_COMPLETE'
#: Seconds a sent update is waited for until Heat has begun it.
UPDATE_BEGUN_WITHIN = 10.0
#: Seconds a failed update Heat is to roll back (``disable_rollback``
#: off) may show ``UPDATE_FAILED`` before its rollback begins: Heat marks
#: the update failed, then starts the rollback, and a busy engine shows
#: the failure in between.  Past this the failure is taken as final (an
#: engine that stopped between the two never begins it).
ROLLBACK_BEGINS_WITHIN = 60.0
#: How deep a stack's resources are listed for its servers (groups of
#: groups).
NESTED_DEPTH = 5


def server_key(reservation_id, server_id):
    """What one server of a stack is to the instance backend's steps on
    servers (``nova_servers``): the name of the aggregate letting it onto
    its reserved host at the start, and of its ``on_end: snapshot`` image
    (``reservation-<reservation id>-<server id>``)."""
    return '%s-%s' % (reservation_id, server_id)


def heat_message(exc):
    """Heat's own words for an error: the ``error.message`` of its JSON
    body when it can be read, else the body (or the exception) as text."""
    raw = getattr(exc, 'message', None)
    if isinstance(raw, bytes):
        raw = raw.decode('utf-8', 'replace')
    try:
        body = json.loads(raw) if raw else None
    except (TypeError, ValueError):
        body = None
    if isinstance(body, dict):
        error = body.get('error')
        if isinstance(error, dict) and error.get('message'):
            return str(error['message'])
        if body.get('explanation'):
            return str(body['explanation'])
    if isinstance(raw, str) and raw.strip():
        return raw.strip()[:500]
    return str(exc) or type(exc).__name__


def _message(exc):
    if isinstance(exc, heat_exc.BaseException):
        return heat_message(exc)
    return str(exc) or type(exc).__name__


#: What a cloud call may raise that means "the cloud failed", not a bug.
_CLOUD_ERRORS = (heat_exc.BaseException, nova_exc.ClientException,
                 ks_exc.ClientException, neutron_clients.NeutronError)


class _Calls(cloud_calls.CloudCalls):
    """Context manager turning Heat, Nova, Neutron and transport errors
    into CloudUnavailable naming ``service`` and what was being done."""

    def __init__(self, doing, service='Heat'):
        super().__init__(doing, service, _CLOUD_ERRORS, message=_message)


def _not_found(exc):
    """Whether a CloudUnavailable came from a Heat 404."""
    return isinstance(exc.__cause__, heat_exc.NotFound)


def _info(obj):
    """A client resource as its service's answer had it (reading a
    missing attribute of a heatclient or novaclient resource would make
    it fetch the resource again)."""
    if isinstance(obj, dict):
        return dict(obj)
    if hasattr(obj, 'to_dict'):
        return obj.to_dict()
    return dict(vars(obj))


def _first_cause(failed):
    """Of the ``UPDATE_FAILED`` events ``failed`` (latest first), the one
    that says why: once a resource fails, Heat cancels the updates of the
    others still in progress ("Stack UPDATE cancelled"), and on a busy
    engine such a cancellation, or the stack's event naming it, may come
    last.  None when there is none."""
    causes = [e for e in failed if 'cancelled' not in
              e['resource_status_reason'].lower()]
    return (causes or failed or [None])[0]


def _ident(stack):
    """Heat's ``<name>/<id>``: what every call on one stack takes without
    a redirect (Heat redirects lookups by name or id for GET only)."""
    return '%s/%s' % (stack['stack_name'], stack['id'])


def _ours(stack, reservation_id):
    return RESERVATION_TAG % reservation_id in (stack.get('tags') or ())


def _in_progress(status):
    return (status or '').endswith('_IN_PROGRESS')


def _failed(status):
    """A failed stack: any ``*_FAILED``, or a create Heat rolled back."""
    status = status or ''
    return status.endswith('_FAILED') or status == 'ROLLBACK_COMPLETE'


def _rollback_to_come(stack, now=None):
    """Whether ``stack``'s ``UPDATE_FAILED`` is the moment before the
    rollback Heat was asked for (see :data:`ROLLBACK_BEGINS_WITHIN`; its
    ``updated_time`` is when Heat last changed its state)."""
    if stack.get('stack_status') != 'UPDATE_FAILED' or \
            stack.get('disable_rollback') is not False:
        return False
    try:
        changed = dates.parse(stack.get('updated_time'), 'updated_time')
    except exceptions.ClimateException:
        return False
    age = ((now or dates.utcnow()) - changed).total_seconds()
    return age < ROLLBACK_BEGINS_WITHIN


def _settled(stack):
    return stack is None or not _in_progress(stack.get('stack_status'))


def _stack_failure(name, stack):
    return exceptions.CloudUnavailable(
        service='Heat', reason='stack %s %s: %s' % (
            name, stack.get('stack_status'),
            stack.get('stack_status_reason') or 'no reason given'))


def _reaching(name, action, gone_ok=False):
    """``done`` for :meth:`HeatStackBackend._wait`: the stack is
    ``<action>_COMPLETE`` (or gone, when ``gone_ok``).  A failure of that
    action raises (of a create: any ``*_FAILED``, a rollback); a status
    Heat has not changed yet is waited through."""
    def done(stack):
        if stack is None:
            if gone_ok:
                return True
            raise exceptions.CloudUnavailable(
                service='Heat', reason='stack %s disappeared while %s' % (
                    name, action.lower()))
        status = stack.get('stack_status') or ''
        if status == action + '_COMPLETE':
            return True
        if status == action + '_FAILED' or (
                action == 'CREATE' and _failed(status)):
            raise _stack_failure(name, stack)
        return False
    return done


def _containing_stack(resource):
    """The id of the stack a listed resource belongs to (its ``stack``
    link ends with it)."""
    for link in resource.get('links') or ():
        if link.get('rel') == 'stack':
            return (link.get('href') or '').rstrip('/').rsplit('/', 1)[-1]
    return None


def _top_level(resource, stack_id, by_physical):
    """The name of the top-level template resource ``resource`` comes
    from: itself, or the group whose nested stack holds it."""
    seen = set()
    while True:
        owner = _containing_stack(resource)
        parent = by_physical.get(owner)
        if owner in (None, stack_id) or owner in seen or parent is None:
            return resource.get('resource_name')
        seen.add(owner)
        resource = parent


def placement(servers, needs, parts):
    """``{server id: host facts or None}``: each server (in the order
    given: by id) takes the next slot of the instance part booked for
    its template resource (``needs``' ``reservation_id``), hosts in the
    part's ``hosts`` order.  The same on every run, so a retried start
    sends no server elsewhere."""
    part_of = {}
    for need in needs:
        if need.get('resource_type') != stack_needs.INSTANCE:
            continue
        for path in need.get('resources') or ():
            part_of.setdefault(path.split('/')[0], need.get('reservation_id'))
    slots = {part['id']: [facts for facts, units in part.get('hosts') or ()
                          for _n in range(units)]
             for part in parts
             if part.get('resource_type') == stack_needs.INSTANCE}
    placed = {}
    for server in servers:
        free = slots.get(part_of.get(server['resource'])) or []
        placed[server['server_id']] = free.pop(0) if free else None
    return placed


def _shown(stack):
    """What the reservation shows of the stack as Heat answers it."""
    return {'stack_id': stack['id'],
            'stack_status': stack.get('stack_status'),
            'stack_status_reason': stack.get('stack_status_reason')}


def _outputs(stack):
    """The stack's outputs as stored on the reservation."""
    return [dict(output) for output in stack.get('outputs') or ()]


def _state(value):
    """What a polled value is, for a timeout's message."""
    if value is None:
        return 'gone'
    return value.get('stack_status') or value.get('status') or 'unknown'


class HeatStackBackend(base.StackBackend):
    """Stacks made by Heat (see module)."""

    name = 'heat'
    acts_in_cloud = True

    def __init__(self, conf):
        super().__init__(conf)
        self._instances = None

    @property
    def instances(self):
        """The Nova instance backend, whose steps on pre-created servers
        (shelve, unshelve onto a host, snapshot) a stack's servers take
        (made on first use)."""
        if self._instances is None:
            from climate.plugins.virtual_instance.backends import nova
            self._instances = nova.NovaInstanceBackend(self.conf)
        return self._instances

    # -- plumbing ------------------------------------------------------------

    def _wait(self, read, done, what):
        """``read()`` every :data:`POLL_INTERVAL` seconds until
        ``done(value)`` (which may raise a failure); the value.  Up to
        ``[stacks] stack_timeout`` minutes, then CloudUnavailable."""
        minutes = self.conf.stacks.stack_timeout
        deadline = time.monotonic() + minutes * 60
        while True:
            value = read()
            if done(value):
                return value
            if time.monotonic() >= deadline:
                raise exceptions.CloudUnavailable(
                    service='Heat', reason='%s: still %s after %d '
                    'minute(s)' % (what, _state(value), minutes))
            time.sleep(POLL_INTERVAL)

    def _user_heat(self, user_session):
        with _Calls('authenticating as the lease\'s user', 'Keystone'):
            sess = user_session()
        return heat_clients.client(sess, self.conf)

    def _get(self, heat, ident, outputs=False):
        """The stack ``ident`` (name, id or ``name/id``) as a dict; None
        when Heat has none (or only a deleted one)."""
        try:
            with _Calls('reading stack %s' % ident):
                stack = heat.stacks.get(ident, resolve_outputs=outputs)
        except exceptions.CloudUnavailable as exc:
            if _not_found(exc):
                return None
            raise
        stack = _info(stack)
        return None if stack.get('stack_status') == GONE else stack

    def _watch(self, heat, stack, done, what):
        """:meth:`_wait` on one stack."""
        ident = _ident(stack)
        return self._wait(lambda: self._get(heat, ident), done, what)

    def _servers(self, heat, stack):
        """The stack's servers, those of its (nested) groups included, by
        id: ``[{'server_id', 'resource'}]``, ``resource`` the top-level
        template resource each comes from."""
        with _Calls('listing the resources of stack %s' %
                    stack['stack_name']):
            found = [_info(r) for r in heat.resources.list(
                _ident(stack), nested_depth=NESTED_DEPTH)]
        by_physical = {r['physical_resource_id']: r for r in found
                       if r.get('physical_resource_id')}
        servers = [{'server_id': r['physical_resource_id'],
                    'resource': _top_level(r, stack['id'], by_physical)}
                   for r in found
                   if r.get('resource_type') == stack_needs.SERVER and
                   r.get('physical_resource_id')]
        return sorted(servers, key=lambda server: server['server_id'])

    # -- flavors and validation ----------------------------------------------

    def flavors(self):
        """Every flavor Nova has, by name (see ``base``); a public flavor
        keeps its name against a private one of the same name."""
        with _Calls('listing flavors', 'Nova'):
            nova = nova_clients.service_client(self.conf)
            found = [_info(f) for f in nova.flavors.list(is_public=None)]
        flavors, public = {}, set()
        for flavor in found:
            name = flavor.get('name') or str(flavor['id'])
            is_public = flavor.get('os-flavor-access:is_public', True)
            if name in public and not is_public:
                continue
            if is_public:
                public.add(name)
            flavors[name] = {
                'id': str(flavor['id']),
                'vcpus': int(flavor.get('vcpus') or 0),
                'ram': int(flavor.get('ram') or 0),
                'disk': int(flavor.get('disk') or 0) + int(
                    flavor.get('OS-FLV-EXT-DATA:ephemeral') or 0)}
        return flavors

    def validate(self, template, parameters, environment, user_session):
        """Heat's template validation, as the caller: Heat's 400 is the
        caller's (InvalidInput with Heat's words), anything else Heat's
        failure (CloudUnavailable)."""
        heat = self._user_heat(user_session)
        try:
            with _Calls('validating the template'):
                heat.stacks.validate(template=template,
                                     parameters=parameters or {},
                                     environment=environment or {})
        except exceptions.CloudUnavailable as exc:
            if isinstance(exc.__cause__, heat_exc.BadRequest):
                raise exceptions.InvalidInput(
                    reason='Heat refused the template: %s' %
                    heat_message(exc.__cause__)) from exc.__cause__
            raise

    # -- the start -----------------------------------------------------------

    def _floatingip_ids(self, neutron, part, project_id):
        """The Neutron ids of a floating IP part's addresses, in their
        order: the floating IP tagged for the part, else the project's.
        An address Neutron has no floating IP for is left out (logged):
        the stack then makes its own floating IP for it."""
        ids = []
        tag = 'reservation:%s' % part['id']
        for address in part.get('floatingips') or ():
            with _Calls('looking up floating IP %s' % address, 'Neutron'):
                found = neutron.floatingips(floating_ip_address=address)
            mine = [f for f in found if tag in (f.get('tags') or ())] or [
                f for f in found
                if (f.get('project_id') or f.get('tenant_id')) == project_id]
            if mine:
                ids.append(mine[0]['id'])
            else:
                LOG.warning('Reservation %s: Neutron has no floating IP %s '
                            'of project %s; the stack cannot use it',
                            part['id'], address, project_id)
        return ids

    def _pinned(self, reservation, project_id, parts):
        """The reservation's template pinned to its parts (see
        ``pinning``); what could not be pinned is logged."""
        by_id = {part['id']: dict(part) for part in parts}
        neutron = None
        for part in by_id.values():
            if part.get('resource_type') != stack_needs.FLOATINGIP:
                continue
            if neutron is None:
                with _Calls('connecting', 'Neutron'):
                    neutron = neutron_clients.service_client(self.conf)
            part['floatingip_ids'] = self._floatingip_ids(neutron, part,
                                                          project_id)
        template, unpinned = pinning.pin(reservation['template'],
                                         reservation.get('needs') or [],
                                         by_id)
        for item in unpinned:
            LOG.warning('Reservation %s: the template\'s %s does not use '
                        'what the lease reserved: %s', reservation['id'],
                        item['resource'], item['reason'])
        return template

    def _delete(self, heat, stack, wait=True):
        """Delete the stack; wait until it is gone (unless not
        ``wait``)."""
        name = stack['stack_name']
        if stack.get('stack_status') != 'DELETE_IN_PROGRESS':
            try:
                with _Calls('deleting stack %s' % name):
                    heat.stacks.delete(_ident(stack))
            except exceptions.CloudUnavailable as exc:
                if not _not_found(exc):
                    raise
        if wait:
            self._watch(heat, stack, _reaching(name, 'DELETE',
                                               gone_ok=True),
                        'deleting stack %s' % name)

    def _make(self, heat, reservation, template, name, tags=()):
        """Ask Heat for the stack (tagged as the reservation's, and with
        ``tags``); its ``name/id``."""
        with _Calls('creating stack %s' % name):
            body = heat.stacks.create(
                stack_name=name, template=template,
                parameters=reservation.get('parameters') or {},
                environment=reservation.get('environment') or {},
                timeout_mins=self.conf.stacks.stack_timeout,
                tags=','.join((TAG, RESERVATION_TAG % reservation['id']) +
                              tuple(tags)),
                # a failed stack stays as Heat left it, its reasons
                # readable; the retried start replaces it
                disable_rollback=True)
        LOG.info('Reservation %s: creating stack %s as the lease\'s user',
                 reservation['id'], name)
        stack_id = ((body or {}).get('stack') or {}).get('id')
        return '%s/%s' % (name, stack_id) if stack_id else name

    def _create(self, heat, reservation, project_id, parts, name):
        ident = self._make(heat, reservation,
                           self._pinned(reservation, project_id, parts), name)
        return self._wait(lambda: self._get(heat, ident),
                          _reaching(name, 'CREATE'),
                          'creating stack %s' % name)

    @staticmethod
    def _name(reservation):
        return reservation.get('stack_name') or \
            'climate-%s' % reservation['id']

    def _ours_or_none(self, heat, reservation, project_id):
        """The reservation's stack found by name (None: none); a stack of
        that name Climate did not make for it is never touched."""
        name = self._name(reservation)
        stack = self._get(heat, name)
        if stack is not None and not _ours(stack, reservation['id']):
            raise exceptions.CloudUnavailable(
                service='Heat', reason='project %s already has a stack '
                'named %s that Climate did not make for reservation %s' % (
                    project_id, name, reservation['id']))
        return stack

    def start(self, reservation, project_id, parts, user_session):
        """See :meth:`base.StackBackend.start` and the module."""
        rid = reservation['id']
        name = self._name(reservation)
        heat = self._user_heat(user_session)
        stack = self._ours_or_none(heat, reservation, project_id)
        if stack is not None and \
                stack.get('stack_status') == 'CREATE_IN_PROGRESS':
            stack = self._watch(heat, stack, _reaching(name, 'CREATE'),
                                'creating stack %s' % name)
        elif stack is not None and _in_progress(stack.get('stack_status')):
            stack = self._watch(heat, stack, _settled,
                                'waiting for stack %s' % name)
        if stack is not None and _failed(stack.get('stack_status')):
            LOG.warning('Reservation %s: stack %s is %s (%s); making it '
                        'again', rid, name, stack['stack_status'],
                        stack.get('stack_status_reason'))
            self._delete(heat, stack)
            stack = None
        woken = None
        if stack is None:
            stack = self._create(heat, reservation, project_id, parts, name)
        elif HELD_TAG in (stack.get('tags') or ()):
            woken = self._wake(heat, reservation, project_id, stack, parts,
                               user_session)
        stack = self._get(heat, _ident(stack), outputs=True) or stack
        answer = dict(_shown(stack), outputs=_outputs(stack))
        if woken is not None:
            answer['servers'] = woken
        return answer

    # -- a started stack's update --------------------------------------------

    def update(self, reservation, project_id, parts, user_session):
        """See :meth:`base.StackBackend.update` and the module.  Asked:
        the reservation's template pinned to ``parts`` (as the start pins
        it), its parameters and environment, sent as the user (a PUT: the
        whole stack as given, Heat's ``timeout_mins`` as at the create,
        rollback on: Heat puts a failed update back to the previous
        template), and waited for until Heat has begun it.  Then each
        call reads the stack: the outcome is answered once it settles,
        a failure with the reason Heat gave for it (an ``UPDATE_FAILED``
        that its rollback follows is not settled:
        :data:`ROLLBACK_BEGINS_WITHIN`)."""
        heat = self._user_heat(user_session)
        stack = self._find(heat, reservation)
        name = self._name(reservation)
        if stack is None:
            return {'stack_status': 'UPDATE_FAILED',
                    'stack_status_reason': 'stack %s is gone; the update '
                    'was not applied' % name}
        status = stack.get('stack_status') or ''
        if reservation.get('stack_status') == base.UPDATE_ASKED:
            if _in_progress(status):
                return {}  # Heat works on it; the next pass sends
            return self._send_update(heat, reservation, project_id, parts,
                                     stack)
        if _in_progress(status) or _rollback_to_come(stack):
            return {'stack_status': status} if _in_progress(status) else {}
        if not status.startswith(('UPDATE_', 'ROLLBACK_')):
            # Heat never began it (Climate stopped in between): asked again
            return {'stack_status': base.UPDATE_ASKED}
        answer = {'stack_id': stack['id'], 'stack_status': status,
                  'stack_status_reason': None}
        if status == 'UPDATE_COMPLETE':
            done = self._get(heat, _ident(stack), outputs=True) or stack
            answer['outputs'] = _outputs(done)
            LOG.info('Reservation %s: stack %s updated',
                     reservation['id'], name)
        else:
            answer['stack_status_reason'] = self._update_failure(heat, stack)
            LOG.warning('Reservation %s: the update of stack %s failed: '
                        '%s (%s)', reservation['id'], name, status,
                        answer['stack_status_reason'])
        return answer

    def _send_update(self, heat, reservation, project_id, parts, stack):
        """The PUT of :meth:`update`; Heat's 400 is the update failed
        (its words), any other failure raised (sent again by the next
        pass)."""
        name = stack['stack_name']
        before = (stack.get('stack_status'), stack.get('updated_time'))
        try:
            with _Calls('updating stack %s' % name):
                heat.stacks.update(
                    _ident(stack),
                    template=self._pinned(reservation, project_id, parts),
                    parameters=reservation.get('parameters') or {},
                    environment=reservation.get('environment') or {},
                    timeout_mins=self.conf.stacks.stack_timeout,
                    tags=','.join(stack.get('tags') or ()),
                    # a failed update goes back to the template that ran
                    disable_rollback=False)
        except exceptions.CloudUnavailable as exc:
            if not isinstance(exc.__cause__, heat_exc.BadRequest):
                raise  # the next pass sends it again
            return {'stack_status': 'UPDATE_FAILED',
                    'stack_status_reason': 'Heat refused the update: %s' %
                    heat_message(exc.__cause__)}
        LOG.info('Reservation %s: updating stack %s as the lease\'s user',
                 reservation['id'], name)
        # Heat answers before its engine marks the stack: wait (briefly:
        # the lease's lock is held) until it has, so that following it
        # never reads the state before the update as its outcome
        deadline = time.monotonic() + UPDATE_BEGUN_WITHIN
        while time.monotonic() < deadline:
            now = self._get(heat, _ident(stack))
            if now is None or (now.get('stack_status'),
                               now.get('updated_time')) != before:
                break
            time.sleep(POLL_INTERVAL / 4)
        return {'stack_status': 'UPDATE_IN_PROGRESS',
                'stack_status_reason': None}

    def _update_failure(self, heat, stack):
        """Why an update failed: Heat's reason for the failed update (its
        latest ``UPDATE_FAILED`` event, the stack's or a resource's, that
        is not a cancellation: :func:`_first_cause`), then, when Heat
        rolled it back, what became of the rollback."""
        status = stack.get('stack_status')
        reason = stack.get('stack_status_reason') or 'no reason given'
        if not status.startswith('ROLLBACK_'):
            return reason
        try:
            with _Calls('reading the events of stack %s' %
                        stack['stack_name']):
                events = [_info(e) for e in heat.events.list(
                    _ident(stack), sort_dir='desc', limit=20, filters={
                        'resource_action': 'UPDATE',
                        'resource_status': 'FAILED'})]
        except exceptions.CloudUnavailable as exc:
            LOG.warning('Stack %s: its events cannot be read: %s',
                        stack['stack_name'], exc)
            events = []
        failed = _first_cause([e for e in events
                               if e.get('resource_status_reason')])
        cause = '%s: %s' % (failed.get('resource_name'),
                            failed['resource_status_reason']) \
            if failed else 'Heat gave no reason'
        if status == 'ROLLBACK_COMPLETE':
            return 'the update failed (%s); Heat rolled the stack back to ' \
                'the template before it: %s' % (cause, reason)
        return 'the update failed (%s); Heat\'s rollback to the template ' \
            'before it is %s: %s' % (cause, status, reason)

    def _wake(self, heat, reservation, project_id, stack, parts,
              user_session):
        """Each server of a held stack unshelved onto its slot of the
        reservation's instance parts (:func:`placement`), one after the
        other, waited for until it runs (the instance backend's
        ``wake``: an aggregate :func:`server_key` lets that server, and
        no other, onto the host).  A server already running there is left
        as it is; one still running elsewhere is shelved first."""
        rid = reservation['id']
        servers = self._servers(heat, stack)
        placed = placement(servers, reservation.get('needs') or [], parts)
        woken = []
        for server in servers:
            sid = server['server_id']
            host = placed[sid]
            if host is None:
                LOG.warning('Reservation %s: server %s (%s) has no slot of '
                            'the lease; it stays shelved', rid, sid,
                            server['resource'])
                woken.append(dict(server, status=None, error=(
                    'no instance slot of the lease is booked for %s' %
                    server['resource'])))
                continue
            answer = self.instances.wake(
                {'id': server_key(rid, sid), 'server_id': sid}, project_id,
                host, user_session, move_running=True)
            woken.append(dict(server, status=answer.get('server_status'),
                              error=answer.get('server_error')))
        LOG.info('Reservation %s: %d server(s) of stack %s woken', rid,
                 len(woken), stack['stack_name'])
        return woken

    def hold(self, reservation, project_id, parts, user_session):
        """``on_start: wake``: one step towards a stack made with its
        servers shelved, never waiting on Heat (the plugin calls it after
        the create and at each periodic pass until the start, under the
        lease's lock).  No stack yet: asked of Heat as the user, from the
        template as given (the parts hold nothing before the start, so
        nothing can be pinned), tagged :data:`HELD_TAG`.  Being made or
        deleted: nothing.  Failed: Heat's reason answered, its deletion
        asked (the next pass makes it again).  Complete: each server
        shelved (the instance backend's ``hold``; one shelved already is
        left as it is)."""
        rid = reservation['id']
        heat = self._user_heat(user_session)
        stack = self._ours_or_none(heat, reservation, project_id)
        if stack is None:
            ident = self._make(heat, reservation, reservation['template'],
                               self._name(reservation), tags=(HELD_TAG,))
            before = reservation.get('stack_status_reason')
            return {'stack_id': ident.partition('/')[2] or None,
                    'stack_status': 'CREATE_IN_PROGRESS',
                    'stack_status_reason': (
                        'made again; the last attempt: %s' % before
                        if _failed(reservation.get('stack_status')) and
                        before else None)}
        status = stack.get('stack_status')
        answer = _shown(stack)
        if _failed(status):
            LOG.warning('Reservation %s: stack %s is %s (%s); deleted, to '
                        'be made again', rid, stack['stack_name'], status,
                        stack.get('stack_status_reason'))
            self._delete(heat, stack, wait=False)
            return answer
        if status == 'DELETE_IN_PROGRESS':
            return {}  # the failure it replaces stays shown
        if _in_progress(status) or HELD_TAG not in (stack.get('tags') or ()):
            return answer
        answer['servers'] = []
        for server in self._servers(heat, stack):
            held = self.instances.hold({
                'id': server_key(rid, server['server_id']),
                'server_id': server['server_id']})
            answer['servers'].append(dict(
                server, status=held.get('server_status'),
                error=held.get('server_error')))
        return answer

    def discard(self, reservation, project_id):
        """See :meth:`base.StackBackend.discard`: the held stack's
        deletion asked, not waited for."""
        with _Calls('connecting to the stacks of project %s' % project_id):
            heat = heat_clients.service_client(self.conf,
                                               project_id=project_id)
        stack = self._find(heat, reservation)
        if stack is not None:
            self._delete(heat, stack, wait=False)
            LOG.info('Reservation %s deleted before its start: stack %s '
                     'deleted', reservation['id'], stack['stack_name'])

    # -- the end -------------------------------------------------------------

    def _find(self, heat, reservation):
        """The reservation's stack: by its stored id, else by its name
        when it carries the reservation's tag; None when gone."""
        name = self._name(reservation)
        if reservation.get('stack_id'):
            return self._get(heat, '%s/%s' % (name,
                                              reservation['stack_id']))
        stack = self._get(heat, name)
        if stack is not None and not _ours(stack, reservation['id']):
            return None
        return stack

    def _suspend(self, heat, stack):
        name = stack['stack_name']
        status = stack.get('stack_status')
        if status == 'SUSPEND_COMPLETE':
            return stack
        if _in_progress(status) and status != 'SUSPEND_IN_PROGRESS':
            # Heat takes no action on a stack busy with another one
            stack = self._watch(heat, stack, _settled,
                                'waiting for stack %s' % name)
            if stack is None:
                return None
        if stack.get('stack_status') not in ('SUSPEND_IN_PROGRESS',
                                             'SUSPEND_COMPLETE'):
            with _Calls('suspending stack %s' % name):
                heat.actions.suspend(_ident(stack))
        return self._watch(heat, stack, _reaching(name, 'SUSPEND',
                                                  gone_ok=True),
                           'suspending stack %s' % name)

    def _snapshot(self, heat, stack, reservation_id, project_id):
        """An image of each of the stack's servers, made by Nova
        (the instance backend's ``snapshot``: named ``reservation-<key>``
        after :func:`server_key`, found again by a re-run, waited for)
        and given to the lease's project.  Heat's own stack snapshots are
        deleted with the stack; these images are not.  Returns
        ``[{'server_id', 'resource', 'image_id'}]``."""
        images = []
        for server in self._servers(heat, stack):
            image_id = self.instances.servers.snapshot({
                'id': server_key(reservation_id, server['server_id']),
                'server_id': server['server_id']}, owner=project_id)
            images.append(dict(server, image_id=image_id))
        LOG.info('Reservation %s: %d image(s) of stack %s kept',
                 reservation_id, len(images), stack['stack_name'])
        return images

    def _let_go(self, heat, stack, reservation_id):
        """The aggregates that let a held stack's servers onto their
        hosts are removed (the servers themselves are the action's)."""
        for server in self._servers(heat, stack):
            self.instances.release({
                'id': server_key(reservation_id, server['server_id']),
                'server_id': server['server_id'],
                'on_end': nova_servers.KEEP})

    def end(self, reservation, project_id, action):
        """See :meth:`base.StackBackend.end` and the module."""
        rid = reservation['id']
        with _Calls('connecting to the stacks of project %s' % project_id):
            heat = heat_clients.service_client(self.conf,
                                               project_id=project_id)
        answer = {'stack_id': reservation.get('stack_id'),
                  'stack_status': GONE, 'stack_status_reason': None}
        stack = self._find(heat, reservation)
        if stack is None:
            LOG.info('Reservation %s ended: its stack is gone already', rid)
            return answer
        answer['stack_id'] = stack['id']
        if HELD_TAG in (stack.get('tags') or ()):
            self._let_go(heat, stack, rid)
        if action == 'suspend':
            stack = self._suspend(heat, stack)
            if stack is not None:
                answer.update(
                    stack_status=stack.get('stack_status'),
                    stack_status_reason=stack.get('stack_status_reason'))
            LOG.info('Reservation %s ended: stack %s suspended', rid,
                     answer['stack_id'])
            return answer
        if action == 'snapshot':
            if _in_progress(stack.get('stack_status')):
                # its servers may still be changing
                stack = self._watch(heat, stack, _settled,
                                    'waiting for stack %s' % stack[
                                        'stack_name'])
                if stack is None:
                    return answer
            answer['images'] = self._snapshot(heat, stack, rid,
                                              project_id)
        self._delete(heat, stack)
        LOG.info('Reservation %s ended: stack %s %s', rid, answer['stack_id'],
                 'snapshotted and deleted' if action == 'snapshot' else
                 'deleted')
        return answer
