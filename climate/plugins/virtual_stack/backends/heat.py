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

**The end** acts with Climate's service credentials, never the trust (it
may be gone by then), on the lease project's stacks (Heat's endpoint for
that project, which Heat lets an admin use).  The stack is found by its
``stack_id`` (else by name and tag); none is the end done.  ``on_end``:

- ``delete``: the stack is deleted, and waited for until gone;
- ``suspend``: suspended (``SUSPEND_COMPLETE``); it keeps what it holds,
  outside the lease;
- ``snapshot``: a Heat snapshot named ``reservation-<id>`` is made (found
  again by a re-run) and waited for (``COMPLETE``), its id stored as
  ``snapshot_id``, then the stack is deleted.  **Caveat**: Heat deletes a
  stack's snapshots, and the images and backups they hold, when it
  deletes the stack; so today the snapshot does not outlive the delete.
  Keeping the data needs another way (e.g. ``deletion_policy: Snapshot``
  on the servers and volumes), not built yet.

**Not built yet**: ``on_start: wake`` (the stack made at the create with
its servers shelved, woken at the start): :meth:`HeatStackBackend.hold`
does nothing, so such a stack is made at the start like ``create``.
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
from climate import exceptions
from climate.plugins.virtual_stack.backends import base
from climate.plugins.virtual_stack import needs as stack_needs
from climate.plugins.virtual_stack import pinning

LOG = logging.getLogger(__name__)

#: Seconds between two looks at a stack (or a snapshot) Heat works on.
POLL_INTERVAL = 2.0
#: The tags of every stack Climate makes, with :data:`RESERVATION_TAG`.
TAG = 'climate'
RESERVATION_TAG = 'reservation:%s'
#: Heat's snapshot of a stack ending with ``on_end: snapshot``.
SNAPSHOT_NAME = 'reservation-%s'
GONE = 'DELETE_COMPLETE'


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


def _state(value):
    """What a polled value is, for a timeout's message."""
    if value is None:
        return 'gone'
    return value.get('stack_status') or value.get('status') or 'unknown'


class HeatStackBackend(base.StackBackend):
    """Stacks made by Heat (see module)."""

    name = 'heat'
    acts_in_cloud = True

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

    def _delete(self, heat, stack):
        """Delete the stack; wait until it is gone."""
        name = stack['stack_name']
        if stack.get('stack_status') != 'DELETE_IN_PROGRESS':
            try:
                with _Calls('deleting stack %s' % name):
                    heat.stacks.delete(_ident(stack))
            except exceptions.CloudUnavailable as exc:
                if not _not_found(exc):
                    raise
        self._watch(heat, stack, _reaching(name, 'DELETE', gone_ok=True),
                    'deleting stack %s' % name)

    def _create(self, heat, reservation, project_id, parts, name):
        template = self._pinned(reservation, project_id, parts)
        with _Calls('creating stack %s' % name):
            body = heat.stacks.create(
                stack_name=name, template=template,
                parameters=reservation.get('parameters') or {},
                environment=reservation.get('environment') or {},
                timeout_mins=self.conf.stacks.stack_timeout,
                tags='%s,%s' % (TAG, RESERVATION_TAG % reservation['id']),
                # a failed stack stays as Heat left it, its reasons
                # readable; the retried start replaces it
                disable_rollback=True)
        LOG.info('Reservation %s: creating stack %s as the lease\'s user',
                 reservation['id'], name)
        stack_id = ((body or {}).get('stack') or {}).get('id')
        ident = '%s/%s' % (name, stack_id) if stack_id else name
        return self._wait(lambda: self._get(heat, ident),
                          _reaching(name, 'CREATE'),
                          'creating stack %s' % name)

    def start(self, reservation, project_id, parts, user_session):
        """See :meth:`base.StackBackend.start` and the module."""
        rid = reservation['id']
        name = reservation.get('stack_name') or 'climate-%s' % rid
        heat = self._user_heat(user_session)
        stack = self._get(heat, name)
        if stack is not None and not _ours(stack, rid):
            raise exceptions.CloudUnavailable(
                service='Heat', reason='project %s already has a stack '
                'named %s that Climate did not make for reservation %s' % (
                    project_id, name, rid))
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
        if stack is None:
            stack = self._create(heat, reservation, project_id, parts, name)
        stack = self._get(heat, _ident(stack), outputs=True) or stack
        return {'stack_id': stack['id'],
                'stack_status': stack.get('stack_status'),
                'stack_status_reason': stack.get('stack_status_reason'),
                'outputs': [dict(output)
                            for output in stack.get('outputs') or ()]}

    def hold(self, reservation, project_id, parts, user_session):
        """``on_start: wake`` is not built in this backend: nothing now,
        the start makes the stack."""
        return {}

    # -- the end -------------------------------------------------------------

    def _find(self, heat, reservation):
        """The reservation's stack: by its stored id, else by its name
        when it carries the reservation's tag; None when gone."""
        name = reservation.get('stack_name') or \
            'climate-%s' % reservation['id']
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

    def _snapshot_of(self, heat, stack, snapshot_id):
        try:
            with _Calls('reading snapshot %s' % snapshot_id):
                body = heat.stacks.snapshot_show(_ident(stack), snapshot_id)
        except exceptions.CloudUnavailable as exc:
            if _not_found(exc):
                return None
            raise
        return (body or {}).get('snapshot', body)

    def _snapshot(self, heat, stack, reservation_id):
        """Heat's snapshot ``reservation-<id>`` of the stack, made once
        (a failed one is made again), complete; its id (None when the
        stack went meanwhile)."""
        name = stack['stack_name']
        wanted = SNAPSHOT_NAME % reservation_id
        if _in_progress(stack.get('stack_status')) and \
                stack['stack_status'] != 'SNAPSHOT_IN_PROGRESS':
            # Heat takes no action on a stack busy with another one
            stack = self._watch(heat, stack, _settled,
                                'waiting for stack %s' % name)
            if stack is None:
                return None
        with _Calls('listing the snapshots of stack %s' % name):
            body = heat.stacks.snapshot_list(_ident(stack))
        snapshot = None
        for found in (body or {}).get('snapshots') or ():
            if found.get('name') != wanted:
                continue
            if found.get('status') == 'FAILED':
                with _Calls('deleting failed snapshot %s' % found['id']):
                    heat.stacks.snapshot_delete(_ident(stack), found['id'])
            elif snapshot is None:
                snapshot = found
        if snapshot is None:
            with _Calls('snapshotting stack %s' % name):
                body = heat.stacks.snapshot(_ident(stack), name=wanted)
            snapshot = (body or {}).get('snapshot', body)
            LOG.info('Reservation %s: snapshotting stack %s',
                     reservation_id, name)

        def done(current):
            if current is None:
                raise exceptions.CloudUnavailable(
                    service='Heat', reason='snapshot %s of stack %s '
                    'disappeared' % (wanted, name))
            if current.get('status') == 'FAILED':
                raise exceptions.CloudUnavailable(
                    service='Heat', reason='snapshot %s of stack %s '
                    'FAILED: %s' % (wanted, name, current.get(
                        'status_reason') or 'no reason given'))
            return current.get('status') == 'COMPLETE'

        snapshot = self._wait(
            lambda: self._snapshot_of(heat, stack, snapshot['id']), done,
            'snapshotting stack %s' % name)
        return snapshot['id']

    def end(self, reservation, project_id, action):
        """See :meth:`base.StackBackend.end` and the module."""
        rid = reservation['id']
        with _Calls('connecting to the stacks of project %s' % project_id):
            heat = heat_clients.service_client(self.conf,
                                               project_id=project_id)
        answer = {'stack_id': reservation.get('stack_id'),
                  'stack_status': GONE, 'stack_status_reason': None,
                  'snapshot_id': reservation.get('snapshot_id')}
        stack = self._find(heat, reservation)
        if stack is None:
            LOG.info('Reservation %s ended: its stack is gone already', rid)
            return answer
        answer['stack_id'] = stack['id']
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
            answer['snapshot_id'] = self._snapshot(heat, stack, rid) or \
                answer['snapshot_id']
        self._delete(heat, stack)
        LOG.info('Reservation %s ended: stack %s %s', rid, answer['stack_id'],
                 'snapshotted and deleted' if action == 'snapshot' else
                 'deleted')
        return answer
