"""The ``virtual:stack`` resource plugin: a whole Heat stack, reserved.

A reservation carries a HOT template (a mapping, or its YAML or JSON
text, as Heat accepts it), its ``parameters`` and ``environment``, and a
``stack_name``.  Climate does not book "a stack": at the create it
derives what the stack's resources hold while they exist
(``needs.derive``: servers, volumes, floating IPs, groups counted at
their maximum) and the lease books each need as a reservation of its own
type in the same transaction (:meth:`VirtualStackPlugin.parts`), so the
lease is granted or refused whole; a need that does not fit is a 409
naming the template's resources it stands for.  Each part names its
stack (``reservations.part_of``, shown as ``stack_reservation_id``); the
stack's ``needs`` carry the id of the part
that holds each.  What the template holds that Climate cannot reserve is
listed (``unreservable``), never dropped in silence.

**Events.**  The parts start before the stack (their flavors, groups and
addresses exist when the stack is made) and end after it (the event
engine orders them).  At the start the backend makes the stack as the
lease's user (``on_start: create``), or wakes the one it made at the
create with its servers shelved (``wake``, seed 000's "created,
provisioned, but not started").  At the end it applies ``on_end``:
``delete`` (the default), ``suspend``, or ``snapshot`` (an image of
each server, kept) then delete.  A ``wake`` stack is made after the
create's commit and followed by the periodic pass (:meth:`heal`) until
its servers are shelved.

**Updates.**  A new template, parameters or environment derives the
needs again: for a pending lease the parts are booked anew in the
update's transaction (all or nothing, a 409 naming what does not fit);
for an active one each need is met by the started part of its kind and
shape, grown from now to the end (never shrunk; no new part:
:meth:`VirtualStackPlugin.active_parts`), and after the commit the
backend updates the stack (``stack_status`` ``UPDATE_ASKED``, then
Heat's), followed by the periodic pass.  A part is never changed on its
own.

**Stored**: ``template``, ``parameters``, ``environment``,
``stack_name``, ``on_start``, ``on_end``, ``needs``, ``free``,
``unreservable``; and, set by Climate, ``stack_id``, ``stack_status``,
``stack_status_reason``, ``outputs``, ``servers`` (a ``wake`` stack's),
``images`` (``on_end: snapshot``'s) and ``snapshot_id`` (older
reservations').
"""

import json
import re

from oslo_config import cfg
from oslo_log import log as logging
import sqlalchemy as sa
import yaml

from climate.clients import keystone
from climate import dates
from climate.db import api as db_api
from climate.db import models
from climate import exceptions
from climate.plugins import backend_loader
from climate.plugins import base
from climate.plugins import params as plugin_params
from climate.plugins.virtual_instance import plugin as instance_plugin
from climate.plugins.virtual_stack import backends
from climate.plugins.virtual_stack.backends import base as backend_base
from climate.plugins.virtual_stack import needs as stack_needs
from climate import states

LOG = logging.getLogger(__name__)
CONF = cfg.CONF

RESOURCE_TYPE = stack_needs.RESOURCE_TYPE
#: What a request may give.
REQUEST_FIELDS = ('template', 'parameters', 'environment', 'stack_name',
                  'on_start', 'on_end')
#: What Climate derives at the create and shows.
DERIVED_FIELDS = ('needs', 'free', 'unreservable')
#: What Climate sets; a client may send them back unchanged.
OUTPUT_FIELDS = DERIVED_FIELDS + backend_base.OUTPUT_FIELDS
ON_START = ('create', 'wake')
ON_END = ('delete', 'suspend', 'snapshot')
#: What a change of these fields derives again.
TEMPLATE_FIELDS = ('template', 'parameters', 'environment')
#: What an active part may grow, by kind (each kind's own update of an
#: active reservation lets them grow, never shrink).
GROWING = {stack_needs.INSTANCE: ('amount',),
           stack_needs.VOLUME: ('size_gb', 'count'),
           stack_needs.FLOATINGIP: ('amount',)}
#: A started stack's update committed, not yet sent to Heat.
UPDATE_ASKED = backend_base.UPDATE_ASKED
#: Heat's statuses of an update it is working on.
HEAT_UPDATING = ('UPDATE_IN_PROGRESS', 'ROLLBACK_IN_PROGRESS')
#: The statuses of an update the periodic pass follows.
UPDATING = (UPDATE_ASKED,) + HEAT_UPDATING
#: Heat's statuses of an update that failed (rolled back or not): sending
#: the same template again retries it.
UPDATE_FAILURES = ('UPDATE_FAILED', 'ROLLBACK_COMPLETE', 'ROLLBACK_FAILED')
#: Heat's stack names.
STACK_NAME = re.compile(r'^[a-zA-Z][a-zA-Z0-9_.-]{0,254}$')


class _TemplateLoader(yaml.SafeLoader):
    """YAML as Heat reads templates: a ``heat_template_version`` such as
    2018-08-31 stays the text it is, not a date."""


_TemplateLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers
            if tag != 'tag:yaml.org,2002:timestamp']
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


def _bad(param, reason):
    return exceptions.MalformedParameter(param=param, reason=reason)


def _document(value, param, required=False):
    """A mapping given as itself or as its YAML or JSON text."""
    if value is None or value == '':
        if required:
            raise exceptions.MissingParameter(
                message='Missing parameter %s.' % param, param=param)
        return {}
    if isinstance(value, str):
        try:
            value = yaml.load(value, Loader=_TemplateLoader)
        except yaml.YAMLError as exc:
            raise _bad(param, '%s is not valid YAML or JSON: %s' % (
                param, str(exc).replace('\n', ' ')))
    if not isinstance(value, dict):
        raise _bad(param, '%s is a mapping (or its YAML or JSON text), '
                          'not %s.' % (param, type(value).__name__))
    try:
        json.dumps(value)
    except (TypeError, ValueError) as exc:
        raise _bad(param, '%s holds a value JSON cannot carry: %s' % (
            param, exc))
    return value


def _choice(value, param, choices):
    if value is None:
        return choices[0]
    if value not in choices:
        raise _bad(param, '%s is one of %s, not %r.' % (
            param, ', '.join(choices), value))
    return value


def describe_need(need):
    """What a need stands for, in the template's words, for errors."""
    resources = need.get('resources') or []
    return 'the template\'s %s %s (%s)' % (
        'resource' if len(resources) == 1 else 'resources',
        ', '.join(resources), need['resource_type'])


class VirtualStackPlugin(backend_loader.BackendOwner, base.ResourcePlugin):
    resource_type = RESOURCE_TYPE
    description = ('A Heat stack: what its template holds (servers, '
                   'volumes, floating IPs) booked as reservations of the '
                   'same lease; the stack made at the start.')
    backends = backends

    # -- input ---------------------------------------------------------------

    def validate(self, params, derive=True):
        """Check a request; derive the template's needs."""
        unknown = sorted(set(params) - set(REQUEST_FIELDS) -
                         set(OUTPUT_FIELDS))
        if unknown:
            raise exceptions.InvalidInput(
                reason='unknown field(s) %s of a virtual:stack reservation; '
                       'it takes %s' % (', '.join(unknown),
                                        ', '.join(REQUEST_FIELDS)))
        template = _document(params.get('template'), 'template',
                             required=True)
        size = len(json.dumps(template))
        if size > CONF.stacks.max_template_size:
            raise _bad('template', 'the template is %d bytes as JSON, more '
                       'than the %d this cloud takes ([stacks] '
                       'max_template_size).' % (
                           size, CONF.stacks.max_template_size))
        out = {
            'template': template,
            'parameters': _document(params.get('parameters'),
                                    'parameters'),
            'environment': _document(params.get('environment'),
                                     'environment'),
            'stack_name': params.get('stack_name'),
            'on_start': _choice(params.get('on_start'), 'on_start',
                                ON_START),
            'on_end': _choice(params.get('on_end'), 'on_end', ON_END),
        }
        name = out['stack_name']
        if name is not None and (not isinstance(name, str) or
                                 not STACK_NAME.match(name)):
            raise _bad('stack_name', 'stack_name is a Heat stack name (a '
                       'letter, then up to 254 letters, digits, "_", "-" '
                       'or "."), not %r.' % (name,))
        if derive:
            out.update(stack_needs.derive(
                template, out['parameters'], out['environment'],
                self.backend.flavors()))
        for key in backend_base.OUTPUT_FIELDS:
            out[key] = None  # Climate's to set
        return out

    def check(self, ctx, params, current=None):
        """The backend validates the template as the caller (Heat, with
        the caller's token), unless an update leaves it as it was."""
        if current is not None and all(
                params.get(key) == current.get(key)
                for key in TEMPLATE_FIELDS):
            return
        self.backend.validate(
            params['template'], params['parameters'], params['environment'],
            lambda: keystone.user_session(ctx.auth_token, ctx.project_id))

    def validate_change(self, current, changes):
        """A change of ``stack_name``, ``on_start`` or ``on_end``, or of
        the template (its parameters, its environment): then the needs
        are derived again (:meth:`parts` tells the lease what to book)."""
        merged = dict(current, **changes)
        again = any(key in changes and changes[key] != current.get(key)
                    for key in TEMPLATE_FIELDS)
        out = self.validate(merged, derive=again)
        for key in backend_base.OUTPUT_FIELDS:
            out[key] = current.get(key)
        if not again and current.get('stack_status') in UPDATE_FAILURES and \
                any(key in changes for key in TEMPLATE_FIELDS):
            # the same template sent again after Heat failed to apply it
            # (only a started stack's update fails so): tried again
            out['stack_status'] = UPDATE_ASKED
        if not again:
            for key in DERIVED_FIELDS:
                out[key] = current.get(key)
        if out['stack_name'] is None:
            # unnamed again: the name it was given at the create stays
            out['stack_name'] = current.get('stack_name')
        return out

    def params_with_id(self, params, reservation_id):
        """A stack named after its reservation unless named."""
        if params.get('stack_name') is None:
            params = dict(params, stack_name='climate-%s' % reservation_id)
        return params

    def parts(self, params):
        """One reservation per need of the template, labelled with the
        template resources it stands for (see ``base.ResourcePlugin``)."""
        return [(describe_need(need), request) for need, request in zip(
            params['needs'], stack_needs.reservations_of(params))]

    def with_parts(self, params, part_ids):
        """Each need names the reservation that holds it."""
        return dict(params, needs=[
            dict(need, reservation_id=part_id)
            for need, part_id in zip(params['needs'], part_ids)])

    def needs_changed(self, old, new):
        """Whether ``new`` parameters book other parts than ``old``."""
        return stack_needs.reservations_of(old) != \
            stack_needs.reservations_of(new)

    def active_parts(self, params, old, parts):
        """A started stack's new needs met by the parts it has: each need
        by the part of its kind and shape (its request but for what may
        grow, :data:`GROWING`; among equal ones, the part that held the
        same template resources), asked for the larger of what it holds
        and what the need wants: an active part grows, never shrinks, so
        a need that wants less (a group scaled down, a template sent back
        after a failed update) leaves its part as it is until the end.
        A need no part can meet is a 409: an active lease gets no new
        part (its start has run).  See ``base.ResourcePlugin``."""
        held_by = {need.get('reservation_id'): set(need.get('resources')
                                                   or ())
                   for need in old.get('needs') or ()}
        free = list(parts)
        out = []
        for need, request in zip(params['needs'],
                                 stack_needs.reservations_of(params)):
            rtype = request['resource_type']
            growing = GROWING.get(rtype, ())
            shape = {k: v for k, v in request.items()
                     if k not in growing and k != 'resource_type'}
            same = [p for p in free if p.resource_type == rtype and all(
                p.params.get(k) == v for k, v in shape.items())]
            if not same:
                raise exceptions.InvalidState(
                    kind='Reservation', id=old.get('id'), status='active',
                    reason='%s: no reservation of this started stack has '
                           'that shape (%s), and an active lease books no '
                           'new one; a started stack\'s template may grow '
                           'or shrink what its reservations hold (%s), not '
                           'add another kind, flavor, volume type or '
                           'network: change it before the start, or '
                           'reserve it in a new lease' % (
                               describe_need(need), ', '.join(
                                   '%s %s' % (k, json.dumps(v))
                                   for k, v in sorted(shape.items())),
                               ', '.join('%s: %s' % (kind, '/'.join(grow))
                                         for kind, grow in
                                         sorted(GROWING.items()))))
            resources = set(need.get('resources') or ())
            part = next((p for p in same
                         if held_by.get(p.id, set()) & resources), same[0])
            free.remove(part)
            out.append((describe_need(need), part.id, dict(
                shape, **{k: max(request[k], part.params.get(k) or 0)
                          for k in growing})))
        return out

    # -- the lease's transaction --------------------------------------------

    def reserve(self, ctx, lease, reservation):
        """Nothing of its own: its parts book what the stack holds."""
        return None

    def update(self, ctx, old_lease, lease, reservation, new_params):
        """New dates move the parts (each its own plugin's update); a new
        template is booked by the lease service around this call (a
        pending stack's parts anew, a started one's grown in place:
        :meth:`active_parts`).  A pending ``wake`` stack made for another
        template, name or ``on_start`` is deleted (made again after the
        commit).  A started stack's new template, parameters or
        environment is marked :data:`UPDATE_ASKED`: the backend applies
        it after the commit (:meth:`prepare`; the static one records it
        at once); its name cannot change, nor a ``wake`` stack's
        template (409)."""
        changed = [key for key in TEMPLATE_FIELDS + ('stack_name',)
                   if new_params.get(key) != reservation.params.get(key)]
        if reservation.status == states.RES_PENDING and \
                self.backend.acts_in_cloud and \
                reservation.params.get('on_start') == 'wake' and (
                    new_params.get('on_start') != 'wake' or changed):
            # the stack made for the old request goes; the prepare after
            # this commit (and the periodic pass) makes the new one
            self.backend.discard(reservation.as_dict(), lease.project_id)
            new_params = dict(new_params, stack_id=None, stack_status=None,
                              stack_status_reason=None, servers=None)
        if reservation.status == states.RES_PENDING or not (
                changed or new_params.get('stack_status') == UPDATE_ASKED):
            return new_params
        self._refuse_active_change(reservation, changed)
        new_params = dict(new_params, stack_status=UPDATE_ASKED,
                          stack_status_reason=None)
        if not self.backend.acts_in_cloud:
            # the static inventory records the update as it records the
            # start and the end
            new_params.update({
                k: v for k, v in (self.backend.update(
                    dict(new_params, id=reservation.id),
                    lease.project_id, [], None) or {}).items()
                if k in backend_base.OUTPUT_FIELDS})
        return new_params

    @staticmethod
    def _refuse_active_change(reservation, changed):
        """409 for what a started stack cannot change."""
        reason = None
        if reservation.status != states.RES_ACTIVE:
            reason = ('only a pending or active stack\'s template may '
                      'change')
        elif 'stack_name' in changed:
            reason = ('a started stack keeps its name (Heat does not '
                      'rename stacks); its template, parameters and '
                      'environment may change')
        elif reservation.params.get('on_start') == 'wake':
            reason = ('the template, parameters and environment of a '
                      'started wake stack cannot change: its woken servers '
                      'run with their template flavor, which a pinned '
                      'update would resize; change them before the lease '
                      'starts, or end this lease and reserve the new stack')
        elif reservation.params.get('stack_status') in HEAT_UPDATING:
            reason = ('Heat is still applying its last update (%s); try '
                      'again once it is done' %
                      reservation.params['stack_status'])
        if reason:
            raise exceptions.InvalidState(
                kind='Reservation', id=reservation.id,
                status=reservation.status, reason=reason)

    def delete(self, ctx, lease, reservation):
        """The stack :meth:`prepare` made for a stack that never started
        (``on_start: wake``) goes; the lease deletes the parts."""
        if self.backend.acts_in_cloud and \
                reservation.status == states.RES_PENDING and \
                reservation.params.get('on_start') == 'wake':
            self.backend.discard(reservation.as_dict(), lease.project_id)

    # -- events --------------------------------------------------------------

    @staticmethod
    def _parts_of(session, owner_id, ctx=None):
        """The views of the parts of reservation ``owner_id`` as they are
        now (their own start may have just stored their flavors and
        addresses); given ``ctx``, an instance part's with its booked
        ``hosts`` now (where a woken stack's servers go)."""
        rows = session.execute(sa.select(models.Reservation).where(
            models.Reservation.part_of == owner_id,
            models.Reservation.status != states.RES_DELETED)).scalars()
        parts = []
        for row in rows:
            part = dict(row.params or {}, id=row.id,
                        resource_type=row.resource_type, status=row.status)
            if ctx is not None and row.resource_type == stack_needs.INSTANCE:
                part['hosts'] = instance_plugin.booked_hosts(
                    ctx, session, row.id, part, dates.utcnow())
            parts.append(part)
        return parts

    @staticmethod
    def _store(session, res_id, answer):
        """Store what the backend answered of :data:`OUTPUT_FIELDS`."""
        plugin_params.set_params(session, res_id, **{
            k: v for k, v in (answer or {}).items()
            if k in backend_base.OUTPUT_FIELDS})

    def prepare(self, ctx, lease, reservation):
        """After the commit of a create or an update: ``on_start: wake``,
        the backend asks for the stack now; a started stack's update
        (:data:`UPDATE_ASKED`) is sent to Heat.  The periodic pass
        (:meth:`heal`) follows both.  A failure is logged: the next pass
        tries again (the start makes a wake stack if none is)."""
        # the periodic pass's reservations are dicts
        view = reservation.as_dict()
        if not self.backend.acts_in_cloud or not self._followed(view):
            return
        try:
            self._follow(ctx, lease, view)
        except Exception:
            LOG.exception('Reservation %s: could not act on its stack '
                          'after the commit; the periodic pass will try '
                          'again', reservation.id)

    @staticmethod
    def _followed(reservation):
        """Whether the periodic pass has a step to take on the stack: a
        pending ``wake`` stack (held), a started one being updated
        (``reservation``: its parameters with ``id`` and ``status``)."""
        if reservation['status'] == states.RES_PENDING:
            return reservation.get('on_start') == 'wake'
        return reservation['status'] == states.RES_ACTIVE and \
            reservation.get('stack_status') in UPDATING

    @db_api.retry_on_deadlock
    def _follow(self, ctx, lease, reservation):
        """One step of the backend's ``hold`` (a pending ``wake`` stack)
        or ``update`` (a started stack's update), and its answer stored,
        under the lease's lock and only while the reservation still needs
        it: the start wakes the servers holding that lock, so a pass that
        read the reservation before the start can neither shelve a woken
        server nor write a stale status over the start's; an update is
        sent once.  Returns whether the reservation changed."""
        with db_api.writer(ctx) as session:
            db_api.lease_get(ctx, lease.id, for_update=True)
            row = session.get(models.Reservation, reservation['id'])
            if row is None:
                return False
            current = dict(row.params or {}, id=row.id, status=row.status)
            if not self._followed(current):
                return False
            step = self.backend.hold if row.status == states.RES_PENDING \
                else self.backend.update
            answer = step(current, lease.project_id,
                          self._parts_of(session, row.id),
                          lambda: self.user_session(lease))
            changed = any(current.get(k) != v for k, v in
                          (answer or {}).items()
                          if k in backend_base.OUTPUT_FIELDS)
            self._store(session, row.id, answer)
            return changed

    @property
    def heal_interval(self):
        """Seconds between two :meth:`heal` passes: as for hosts, with an
        inventory acting in the cloud; none with the static one."""
        if CONF.stacks.inventory == 'static':
            return 0
        return CONF.hosts.healing_interval

    def heal(self, ctx):
        """Follow the pending ``on_start: wake`` stacks (made, made again
        after a failure, their servers shelved, again when their user
        started one) and the started stacks being updated (the update
        sent, Heat's outcome recorded): :meth:`_follow`.  Returns the ids
        changed."""
        changed = []
        for lease, res in db_api.pending_reservations(
                ctx, RESOURCE_TYPE) + db_api.active_reservations(
                ctx, RESOURCE_TYPE):
            if not self._followed(res):
                continue
            try:
                if self._follow(ctx, lease, res):
                    changed.append(res['id'])
            except exceptions.CloudUnavailable as exc:
                LOG.warning('Reservation %s: its stack waits for the '
                            'cloud: %s', res['id'], exc)
            except Exception:
                LOG.exception('Reservation %s: could not follow its stack',
                              res['id'])
        return changed

    def on_start(self, ctx, lease, reservation, event):
        """Make (or wake) the stack, pinned to what its parts hold."""
        with db_api.writer(ctx) as session:
            answer = self.backend.start(
                reservation.as_dict(), lease.project_id,
                # where the instance parts' slots are: a woken stack's
                # servers go there, a created one's by their flavors
                self._parts_of(session, reservation.id, ctx=ctx if
                               reservation.params.get('on_start') == 'wake'
                               else None),
                lambda: self.user_session(lease))
            self._store(session, reservation.id, answer)

    def on_end(self, ctx, lease, reservation, event=None):
        """The ``on_end`` action, with the service's credentials (on the
        stacks of the lease's project: the service's own scope is another
        project)."""
        with db_api.writer(ctx) as session:
            answer = self.backend.end(
                reservation.as_dict(), lease.project_id,
                reservation.params.get('on_end') or 'delete')
            self._store(session, reservation.id, answer)
