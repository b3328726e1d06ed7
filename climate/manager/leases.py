"""The lease service: create, update, delete and read leases.

Each change is one database transaction covering the lease, its
reservations, its events and whatever the plugins allocate; a failure
anywhere rolls all of it back.  Notifications and engine wake-ups go out
only after the commit.
"""

import collections
import contextlib
import datetime
import json
import math
import time

from oslo_config import cfg
from oslo_log import log as logging

from climate import dates
from climate.db import api as db_api
from climate.db import models
from climate.db import retries as db_retries
from climate.db import usage as db_usage
from climate import exceptions
from climate.lease import events as lease_events
from climate.lease import holds
from climate.lease import idle as idle_rules
from climate.lease import input as lease_input
from climate.lease import types as lease_types
from climate.lease import views
from climate.manager import quotas
from climate.manager import trusts
from climate.manager.workers import hunts
from climate.notifications import lease as lease_notifications
from climate.plugins import values as plugin_values
from climate import states

LOG = logging.getLogger(__name__)
CONF = cfg.CONF


def _scope(ctx):
    """The project a caller is confined to; None for admins."""
    return None if ctx.is_admin else ctx.project_id


def _event_values(event_type, when):
    return {'event_type': event_type, 'time': when, 'due_at': when,
            'status': states.UNDONE}


def _before_end_of(lease):
    """The lease's current before-end event: the latest one (earlier ones
    are notices already given for an end that has moved since)."""
    found = None
    for ev in lease.events:
        if ev.event_type == lease_events.BEFORE_END and (
                found is None or ev.time >= found.time):
            found = ev
    return found


class _Request:
    """A checked reservation request of a create: its plugin, its
    parameters and, for a part of another reservation
    (``ResourcePlugin.parts``), its owner's index and label."""

    __slots__ = ('plugin', 'params', 'owner', 'label')

    def __init__(self, plugin, params, owner=None, label=None):
        self.plugin, self.params = plugin, params
        self.owner, self.label = owner, label


@contextlib.contextmanager
def _about(label):
    """An error about a part starts with what the part stands for (the
    template resources of a stack): same class, same status."""
    if label is None:
        yield
        return
    try:
        yield
    except exceptions.ClimateException as exc:
        raise type(exc)(message='%s: %s' % (label, exc.message),
                        **exc.kwargs) from exc


#: What an update changed, for its after-commit part.
_Updated = collections.namedtuple('_Updated', 'old_view result to_prepare')


class LeaseService:
    """Domain operations on leases; called by the RPC endpoint."""

    def __init__(self, plugins, notifier, wake, released=None,
                 queued=None, hunter=None, hunting=None, held=None):
        """:param wake: callable telling every event engine to look again.
        :param released: callable telling every manager that capacity was
            released (``climate.manager.workers.retries``).
        :param queued: callable telling this manager's retry worker that a
            lease waits, due now.
        :param hunter: the manager's ``climate.manager.workers.hunts.Hunter``
            (best_effort leases; None: they never hunt).
        :param hunting: callable telling this manager's hunt worker that a
            lease hunts.
        :param held: callable telling this manager's hold worker that a
            hold was made (``climate.manager.workers.holds``)."""
        self.plugins = plugins
        self.notifier = notifier
        self.wake = wake
        self.released = released or (lambda: None)
        self.queued = queued or (lambda: None)
        self.hunter = hunter
        self.hunting = hunting or (lambda: None)
        self.held = held or (lambda: None)

    def _wake_if_due_soon(self, due_times):
        """Wake the engines for an event due before they look anyway.

        An engine never sleeps longer than ``max_sleep``: an event due later
        than that is found on its next pass without a fanout RPC and an
        extra claim query on every manager (a third of a create's cost).
        """
        horizon = dates.utcnow() + datetime.timedelta(
            seconds=CONF.manager.max_sleep)
        if any(due <= horizon for due in due_times):
            self.wake()

    # -- reading -------------------------------------------------------------

    def get(self, ctx, lease_id):
        """The lease as a dict; LeaseNotFound outside the caller's scope."""
        return views.lease(db_api.lease_get(ctx, lease_id, _scope(ctx)))

    def list(self, ctx, project_id=None, filters=None, limit=None,
             marker=None, sort_key='created_at', sort_dir='asc',
             compressed=False):
        """Leases visible to the caller, filtered and paginated, as a
        :func:`climate.lease.views.lease_page` (``compressed`` or not).

        Admins see every project unless ``project_id`` narrows the list.
        """
        scope = _scope(ctx)
        if scope is None:
            scope = project_id
        return views.lease_page(db_api.lease_list(
            ctx, scope, filters, limit, marker, sort_key, sort_dir),
            compressed)

    # -- creating ------------------------------------------------------------

    def create(self, ctx, body, idempotency=None):
        """Validate, allocate and store a lease; all or nothing.

        :param idempotency: a ``climate.manager.idempotency.Key``, written
            in the lease's transaction (``KeyTaken`` if another create
            wrote it first: nothing is left of this one).

        Under Keystone authentication the lease gets a trust from the
        caller (``climate.manager.trusts``), made after the input checks
        and before anything is written: a Keystone failure leaves nothing
        behind, and a trust whose lease then fails to be written is
        deleted again.
        """
        now = dates.utcnow()
        asked, lease_type, max_retries = lease_types.parse(
            body, CONF.leases.max_retries)
        asked, hold_for = holds.parse(asked, CONF.leases.max_hold_for)
        asked, keep_idle = idle_rules.parse(asked)
        values = lease_input.parse_create(
            asked, now, CONF.api.max_name_length,
            CONF.manager.minutes_before_end_lease)
        lease_types.check(lease_type, values, now)
        values.update(lease_type=lease_type, max_retries=max_retries,
                      keep_idle=keep_idle)
        if hold_for is not None:
            values['hold_expires_at'] = holds.expiry(
                hold_for, lease_type, values['end_date'], now)
        if lease_type == lease_types.WITH_RETRIES:
            # its place in the queue, should it wait
            values['arrival'] = time.time_ns() // 1000
        validated = self.validated(ctx, values['reservations'])
        # before anything is written or locked: the service may be slow
        quotas.approve(ctx, 'create', body)
        trust_id = trusts.create(ctx)
        try:
            if lease_type == lease_types.WITH_RETRIES:
                result, due_times = self._create_or_wait(
                    ctx, values, validated, trust_id, idempotency, now)
            elif lease_type == lease_types.BEST_EFFORT:
                result, due_times = self._create_or_hunt(
                    ctx, values, validated, trust_id, idempotency, now)
            else:
                result, due_times = self._create(ctx, values, validated,
                                                 trust_id, idempotency)
        except BaseException:
            if trust_id:
                trusts.delete(trust_id, '(not created)')
            raise
        LOG.info('Lease %s (%s) created for project %s (%s)', result['id'],
                 result['name'], result['project_id'], result['status'])
        if result['status'] == states.WAITING:
            self.notifier.send(ctx, lease_notifications.CREATE, result)
            if not result['retry_attempts']:
                self.queued()  # behind older ones, due now: a pass tries it
            return result
        if result['status'] == states.HUNTING:
            self.notifier.send(ctx, lease_notifications.CREATE, result)
            self.hunting()
            return result
        if result['status'] == states.HELD:
            # nothing made in the cloud before the confirm: an expired
            # hold leaves nothing behind there
            self.notifier.send(ctx, lease_notifications.CREATE, result)
            self.held()
        else:
            result = self.created(ctx, result, due_times)
        if lease_type == lease_types.SCHEDULED:
            guaranteed, note = lease_types.guarantee(
                self.plugins, [item.plugin.resource_type
                               for item in validated])
            result = dict(result, capacity_guaranteed=guaranteed,
                          capacity_note=note)
        return result

    def _create_or_wait(self, ctx, values, validated, trust_id,
                        idempotency, now):
        """A ``with_retries`` lease: granted now if it fits and no older
        lease waits (it would take what they wait for), else written
        WAITING, holding nothing (``climate.manager.workers.retries``)."""
        if not db_retries.any_waiting(ctx):
            try:
                return self._create(ctx, values, validated, trust_id,
                                    idempotency)
            except exceptions.CapacityRefusal as exc:
                if not values['max_retries']:
                    raise  # no retry asked: an immediate lease's answer
                reason = exc.message
            attempts, due = 1, now + datetime.timedelta(
                seconds=CONF.leases.retry_interval)
        else:
            reason = 'waiting behind older leases for capacity'
            attempts, due = 0, now
        return self._write_waiting(ctx, values, validated, trust_id,
                                   idempotency, attempts, due,
                                   reason), []

    def _create_or_hunt(self, ctx, values, validated, trust_id,
                        idempotency, now):
        """A ``best_effort`` lease: an ``immediate`` one when it fits;
        else, with a plan freeing the missing hosts of other projects'
        servers, written IN_PROGRESS with the free hosts booked
        (``climate.manager.workers.hunts``); else the 409 of an immediate lease
        followed by why no host can be freed."""
        try:
            return self._create(ctx, values, validated, trust_id,
                                idempotency)
        except exceptions.NotEnoughHosts as exc:
            if self.hunter is None or not self.hunter.active() or \
                    len(validated) != 1:
                raise  # nothing to hunt outside a static inventory
            refused = exc
        params = validated[0].params
        free = refused.kwargs.get('free') or 0
        missing = params['min'] - free
        plan = self.hunter.plan(ctx, ctx.project_id, missing)
        if not plan.ok:
            raise exceptions.NotEnoughHosts(
                reason='%s Best effort: no %d host(s) outside the inventory '
                       "can be freed of other projects' servers: %s" % (
                           refused.kwargs.get('reason', ''), missing,
                           plan.reason),
                matching=refused.kwargs.get('matching'), free=free,
                earliest_start=refused.kwargs.get('earliest_start'))
        deadline = now + datetime.timedelta(
            seconds=CONF.leases.best_effort_timeout)
        hunt = {'plan': hunts.plan_to_json(plan), 'missing': missing,
                'free': free, 'deadline': deadline.isoformat(),
                'borrowed': []}
        return self._write_hunting(ctx, values, validated, trust_id,
                                   idempotency, hunt, free), []

    @db_api.retry_on_deadlock
    def _write_hunting(self, ctx, values, validated, trust_id, idempotency,
                       hunt, free):
        """A hunting lease's rows: the ``free`` hosts found booked, the
        hunt stored, no event (they come when the hunt succeeds)."""
        row_values = self._row_values(ctx, values, trust_id, states.HUNTING)
        plan = hunt['plan']
        moves = sum(len(wave) for wave in plan['waves'])
        row_values.update(hunt=hunt, status_reason=(
            'freeing %d host(s) (%s) of %d server(s) of other projects by '
            'live migration, until %s UTC' % (
                len(plan['hosts']), ', '.join(plan['hosts']), moves,
                hunt['deadline'][:19].replace('T', ' '))))
        with db_api.writer(ctx) as session:
            lease = self._insert(ctx, row_values, validated, [],
                                 idempotency)
            res = lease.reservations[0]
            plugin = validated[0].plugin
            plugin.book_free(ctx, plugin_values.Lease.of(lease),
                             plugin_values.Reservation.of(res), free)
            db_api.reservation_set_resource(ctx, lease.id, res.id, res.id)
            res.resource_id = res.id
            quotas.enforce(session, ctx.project_id, lease.id,
                           values['start_date'], values['end_date'])
            db_api.flush(ctx)
            db_api.refresh_records(ctx, lease.reservations)
            return views.lease(lease)

    @db_api.retry_on_deadlock
    def hunted(self, ctx, lease_id, host_ids):
        """A hunting lease's hosts are freed and registered (``host_ids``):
        book them into its reservation from now, add its events and make
        it STARTING (the engine starts it).  Returns the lease view, None
        when it is not hunting any more."""
        now = dates.utcnow()
        with db_api.writer(ctx) as session:
            lease = db_api.lease_get(ctx, lease_id, for_update=True)
            if lease.status != states.HUNTING:
                return None
            res = lease.reservations[0]
            self.plugins.get(res.resource_type).book_hosts(
                ctx, plugin_values.Lease.of(lease),
                plugin_values.Reservation.of(res), host_ids,
                max(now, lease.start_date))
            lease.start_date = max(now, lease.start_date)
            # the project's limits weigh the freed hosts too
            quotas.enforce(session, lease.project_id, lease.id,
                           lease.start_date, lease.end_date)
            lease.events.extend(hunts.events_now(lease.start_date,
                                                 lease.end_date))
            db_api.set_status(lease, 'lease', states.STARTING)
            lease.status_reason = None
            db_api.flush(ctx)
            return views.lease(lease)

    @db_api.retry_on_deadlock
    def timed_out(self, ctx, lease_id, reason):
        """A hunting lease gives up: its bookings released, TIMEDOUT with
        ``reason``.  Returns the lease view, None when it is not hunting."""
        with db_api.writer(ctx):
            lease = db_api.lease_get(ctx, lease_id, for_update=True)
            if lease.status != states.HUNTING:
                return None
            self._release_bookings(ctx, lease)
            db_api.set_status(lease, 'lease', states.TIMEDOUT,
                              reason=reason[:4000])
            db_api.flush(ctx)
            return views.lease(lease)

    def _release_bookings(self, ctx, lease):
        """What a lease that never started booked, released (in the
        caller's transaction): its reservations deleted."""
        value = plugin_values.Lease.of(lease)
        for res, res_value in plugin_values.reservation_pairs(lease):
            self.plugins.get(res.resource_type).delete(ctx, value,
                                                       res_value)
            db_api.set_status(res, 'reservation', states.RES_DELETED)

    # -- temporary holds (climate.lease.holds) ------------------------------

    def confirm(self, ctx, lease_id):
        """A hold becomes the lease its type makes, what it booked kept;
        its events run from now on (a start that came during the hold is
        due at once).  HoldNotConfirmable (409) unless it is HELD and its
        hold has not expired."""
        view, due_times = self._confirm(ctx, lease_id)
        LOG.info('Lease %s confirmed (%s)', lease_id, view['status'])
        view = self._prepare(ctx, view)
        self.notifier.send(ctx, lease_notifications.CONFIRM, view)
        self._wake_if_due_soon(due_times)
        return view

    @db_api.retry_on_deadlock
    def _confirm(self, ctx, lease_id):
        now = dates.utcnow()
        with db_api.writer(ctx):
            lease = db_api.lease_get(ctx, lease_id, _scope(ctx),
                                     for_update=True)
            holds.check_confirmable(lease.id, lease.status,
                                    lease.hold_expires_at, now)
            db_api.set_status(lease, 'lease',
                              lease_types.initial_status(lease.lease_type))
            lease.status_reason = None
            due_times = []
            for ev in lease.events:
                if ev.status == states.UNDONE:
                    # an engine that found it held put it back until the
                    # expiry: due at its time again
                    ev.due_at = ev.time
                    if ev.event_type in lease_events.RUN_EVENT_TYPES:
                        due_times.append(ev.time)
            db_api.flush(ctx)
            return views.lease(lease), due_times

    @db_api.retry_on_deadlock
    def expire_hold(self, ctx, lease_id, now):
        """An unconfirmed hold past its expiry: what it booked released,
        its events gone (it never was a lease; one an engine has claimed
        too: the engine locks the lease first, then finds its claim
        lost), EXPIRED.  Returns the lease
        view; None when it is not held any more (confirmed, deleted or
        expired by another manager) or not expired yet."""
        with db_api.writer(ctx):
            lease = db_api.lease_get(ctx, lease_id, for_update=True)
            if lease.status != states.HELD or lease.hold_expires_at > now:
                return None
            self._release_bookings(ctx, lease)
            for ev in [ev for ev in lease.events if ev.status in (
                    states.UNDONE, states.IN_PROGRESS)]:
                lease.events.remove(ev)
            db_api.set_status(lease, 'lease', states.EXPIRED,
                              reason=holds.expired_reason(
                                  lease.hold_expires_at))
            db_api.flush(ctx)
            view = views.lease(lease)
        LOG.info('Lease %s EXPIRED: %s', lease_id, view['status_reason'])
        self.notifier.send(ctx, lease_notifications.HOLD_EXPIRED, view)
        self.released()
        return view

    def validated(self, ctx, requests, as_caller=True):
        """Each ``(resource type, params)`` request checked by its
        plugin (``validate``, then ``check`` as the caller), preceded by
        its parts (``ResourcePlugin.parts``) checked by theirs, as
        :class:`_Request` items in the order they are booked.  Not
        ``as_caller``: without the checks made as the caller (a series'
        later occurrence, whose template they passed at its create; the
        manager has no token of the user then)."""
        out = []
        for rtype, params in requests:
            plugin = self.plugins.get(rtype)
            params = plugin.validate(params)
            if as_caller:
                plugin.check(ctx, params)
            owner = len(out) + len(plugin.parts(params))
            out.extend(self._parts(plugin, params, owner))
            out.append(_Request(plugin, params))
        return out

    def _parts(self, plugin, params, owner):
        """The parts of a reservation with parameters ``params``, checked
        by their plugins; ``owner`` is the index its own request will
        have."""
        out = []
        for label, request in plugin.parts(params):
            request = dict(request)
            part_plugin = self.plugins.get(request.pop('resource_type'))
            with _about(label):
                out.append(_Request(part_plugin,
                                    part_plugin.validate(request), owner,
                                    label))
        return out

    @staticmethod
    def _link_parts(records, validated):
        """Once ids are known: each part names its owner
        (``stack_reservation_id``), each owner its parts
        (``ResourcePlugin.with_parts``)."""
        parts = {}
        for res, item in zip(records, validated):
            if item.owner is not None:
                res.part_of = records[item.owner].id
                parts.setdefault(item.owner, []).append(res.id)
        for index, ids in parts.items():
            records[index].params = validated[index].plugin.with_parts(
                records[index].params, ids)

    @staticmethod
    def _row_values(ctx, values, trust_id, status):
        return {
            'name': values['name'],
            'start_date': values['start_date'],
            'end_date': values['end_date'],
            'project_id': ctx.project_id,
            'user_id': ctx.user_id,
            'trust_id': trust_id,
            'status': status,
            'lease_type': values.get('lease_type'),
            'max_retries': values.get('max_retries'),
            'arrival': values.get('arrival'),
            'hold_expires_at': values.get('hold_expires_at'),
            'series_id': values.get('series_id'),
            'occurrence': values.get('occurrence'),
            'keep_idle': bool(values.get('keep_idle')),
        }

    def _insert(self, ctx, row_values, validated, events, idempotency):
        """Write the lease's rows (in the caller's transaction): the
        lease, its reservations (each part linked to its owner) and
        ``events``; returns the lease's records."""
        reservations = [{'resource_type': item.plugin.resource_type,
                         'params': item.params,
                         'status': states.RES_PENDING}
                        for item in validated]
        # a taken name is caught by the unique key (lease_insert raises
        # LeaseNameAlreadyExists): no query ahead of the insert
        lease = db_api.lease_records(row_values, reservations, events)
        for res, item in zip(lease.reservations, validated):
            # what depends on the id is in the body from the start
            res.params = item.plugin.params_with_id(res.params, res.id)
        self._link_parts(lease.reservations, validated)
        if idempotency is not None:
            # first: a concurrent create with the key waits here
            idempotency.record(ctx, lease.id)
        lease_view = views.lease(lease)
        # the listing's body comes from here, not from the database
        db_api.lease_insert(ctx, lease, json.dumps(lease_view))
        return lease

    @db_api.retry_on_deadlock
    def _write_waiting(self, ctx, values, validated, trust_id, idempotency,
                       attempts, due, reason):
        """A ``with_retries`` lease that waits: its rows, no booking, no
        event (they come when it is granted)."""
        row_values = self._row_values(ctx, values, trust_id, states.WAITING)
        row_values.update(
            retry_attempts=attempts, next_attempt_at=due,
            # whole seconds, at least one ("now" has a fraction)
            duration=max(1, math.ceil((values['end_date'] -
                                       values['start_date']).total_seconds())),
            status_reason=self._retry_note(attempts,
                                           values['max_retries'], reason))
        with db_api.writer(ctx):
            lease = self._insert(ctx, row_values, validated, [],
                                 idempotency)
            return views.lease(lease)

    @staticmethod
    def _retry_note(attempts, max_retries, reason):
        if not attempts:
            return reason
        return 'attempt %d of %d: %s' % (attempts, max_retries + 1, reason)

    @db_api.retry_on_deadlock
    def _create(self, ctx, values, validated, trust_id, idempotency=None):
        """The lease's transaction (re-run whole on a deadlock)."""
        with db_api.writer(ctx):
            return self.write_new(ctx, values, validated, trust_id,
                                  idempotency)

    def write_new(self, ctx, values, validated, trust_id, idempotency=None):
        """A new lease's rows and bookings in the caller's transaction
        (``values`` of ``climate.lease.input.parse_create``, ``validated``
        of :meth:`validated`): ``(its view, the due times to wake for)``;
        CapacityRefusal and the like when it does not fit, the
        transaction then to be rolled back."""
        events = [_event_values(lease_events.START, values['start_date']),
                  _event_values(lease_events.END, values['end_date'])]
        if values['before_end_date'] is not None:
            events.append(_event_values(lease_events.BEFORE_END,
                                        values['before_end_date']))
        user_events = [_event_values(event_type, when)
                       for event_type, when in values['events']]
        # the engine wakes for the events it runs only: its own and users'
        # notifications, never another type of a user's
        due_times = [ev['due_at'] for ev in events + user_events
                     if ev['event_type'] in lease_events.RUN_EVENT_TYPES]
        events += user_events
        row_values = self._row_values(
            ctx, values, trust_id,
            lease_types.initial_status(values.get('lease_type')))
        if values.get('hold_expires_at') is not None:
            row_values.update(status=states.HELD, status_reason=(
                holds.held_reason(values['hold_expires_at'])))
        if values.get('lease_type') == lease_types.WITH_RETRIES:
            row_values['retry_attempts'] = 1
        with db_api.writer(ctx) as session:
            lease = self._insert(ctx, row_values, validated, events,
                                 idempotency)
            # in the order asked for, each reservation's parts first
            self._book(ctx, lease,
                       [(item.plugin, item.label) for item in validated])
            # after the bookings: the project's limits weigh them too
            quotas.enforce(session, ctx.project_id, lease.id,
                           values['start_date'], values['end_date'])
            db_api.flush(ctx)
            db_api.refresh_records(ctx, lease.reservations)
            result = views.lease(lease)
        return result, due_times

    @staticmethod
    def _book(ctx, lease, plugins_and_labels):
        """Each reservation's ``reserve``, in the order stored (each
        reservation's parts first); ``plugins_and_labels``: the plugin of
        each reservation, and the label naming a part in errors."""
        value = plugin_values.Lease.of(lease)
        for (res, res_value), (plugin, label) in zip(
                plugin_values.reservation_pairs(lease), plugins_and_labels):
            with _about(label):
                resource_id = plugin.reserve(ctx, value, res_value)
            if resource_id is not None:
                db_api.reservation_set_resource(ctx, lease.id, res.id,
                                                resource_id)
                res.resource_id = resource_id

    # -- granting a waiting lease -------------------------------------------

    @db_api.retry_on_deadlock
    def grant(self, ctx, lease_id, now):
        """Try to grant a WAITING ``with_retries`` lease now: its window
        from now for its length, its bookings, its events, in one
        transaction; STARTING (its start due now) when it fits.

        :returns: the lease view when granted, None when it is not
            waiting any more.
        :raises: the refusal (CapacityRefusal, QuotaExceeded...) when it
            does not fit; nothing is written then.
        """
        with db_api.writer(ctx) as session:
            lease = db_api.lease_get(ctx, lease_id, for_update=True)
            if lease.status != states.WAITING:
                return None
            start = now
            end = now + datetime.timedelta(seconds=lease.duration)
            lease.start_date, lease.end_date = start, end
            lease.events.extend(hunts.events_now(start, end))
            db_api.set_status(lease, 'lease', states.STARTING)
            lease.next_attempt_at = None
            lease.status_reason = None
            db_api.flush(ctx)
            self._book(ctx, lease,
                       [(self.plugins.get(res.resource_type), None)
                        for res in lease.reservations])
            quotas.enforce(session, lease.project_id, lease.id, start, end)
            db_api.flush(ctx)
            for res in lease.reservations:
                # what the plugins stored with Core statements
                session.refresh(res)
            return views.lease(lease)

    @db_api.retry_on_deadlock
    def not_granted(self, ctx, lease_id, reason, counted, now):
        """Record a refused attempt of a WAITING lease: counted, it uses
        one of the lease's attempts (EXHAUSTED after the last, with the
        reason); not counted (a try on released capacity), nothing is
        written.  Returns the lease view when it changed."""
        if not counted:
            return None
        with db_api.writer(ctx):
            lease = db_api.lease_get(ctx, lease_id, for_update=True)
            if lease.status != states.WAITING:
                return None
            lease.retry_attempts = (lease.retry_attempts or 0) + 1
            if lease.retry_attempts > lease.max_retries:
                db_api.set_status(
                    lease, 'lease', states.EXHAUSTED,
                    reason='not granted after %d attempts: %s' % (
                        lease.retry_attempts, reason))
                lease.next_attempt_at = None
                # never used now; one Keystone would not delete stays on
                # the row for the trust sweeper
                if trusts.delete(lease.trust_id, lease.id):
                    lease.trust_id = None
            else:
                lease.status_reason = self._retry_note(
                    lease.retry_attempts, lease.max_retries, reason)
                lease.next_attempt_at = now + datetime.timedelta(
                    seconds=CONF.leases.retry_interval)
            db_api.flush(ctx)
            return views.lease(lease)

    # -- updating ------------------------------------------------------------

    @db_api.retry_on_deadlock
    def update(self, ctx, lease_id, body):
        """Change name, dates or reservations; the lease is unchanged on
        any failure.

        As in Blazar, an empty body changes nothing and any lease that is
        not busy may be renamed; the other changes are checked by
        :func:`climate.lease.input.parse_update`.
        """
        now = dates.utcnow()
        self._refuse_if_busy(ctx, lease_id)
        if body:
            quotas.approve(ctx, 'update', dict(body, id=lease_id))
        with db_api.writer(ctx):
            lease = db_api.lease_get(ctx, lease_id, _scope(ctx),
                                     for_update=True)
            change = self.update_locked(ctx, lease, body, now)
        return self.updated(ctx, change)

    def update_locked(self, ctx, lease, body, now):
        """The update ``body`` of ``lease``, locked in the caller's
        transaction; returns what :meth:`updated` says after the commit
        (an opaque value)."""
        with db_api.writer(ctx) as session:
            if lease.status in states.LEASE_BUSY:
                # became busy since _refuse_if_busy looked
                raise exceptions.LeaseBusy(
                    id=lease.id, status=lease.status,
                    reason='an event is running; try again in a moment')
            old_view = views.lease(lease)
            old_value = plugin_values.Lease.of(lease)
            before_end = _before_end_of(lease)
            current = {'id': lease.id, 'name': lease.name,
                       'start_date': lease.start_date,
                       'end_date': lease.end_date,
                       'before_end_date': before_end.time if before_end
                       else None}
            new = lease_input.parse_update(
                body, current, now, CONF.api.max_name_length, lease.status)

            if new['name'] != lease.name and db_api.lease_name_exists(
                    ctx, lease.project_id, new['name'], exclude_id=lease.id):
                raise exceptions.LeaseNameAlreadyExists(name=new['name'])
            lease.name = new['name']
            lease.start_date = new['start_date']
            lease.end_date = new['end_date']
            self._reschedule(lease, new, now)

            by_id = {r.id: r for r in lease.reservations}
            unknown = {str(res_id) for res_id, _t, _p in new['reservations']
                       if res_id not in by_id}
            if unknown:
                raise exceptions.InvalidReservationIds(
                    ids=','.join(sorted(unknown)))
            changes = {}
            for res_id, rtype, params in new['reservations']:
                # Blazar takes the reservation's own type, refuses another
                if rtype is not None and rtype != by_id[res_id].resource_type:
                    raise exceptions.CantUpdateParameter(
                        param='resource_type')
                changes.setdefault(res_id, {}).update(params)
            dates_moved = (new['start_date'] != current['start_date'] or
                           new['end_date'] != current['end_date'])
            checked = {}
            for res_id, change in changes.items():
                res = by_id[res_id]
                owner = res.part_of
                if owner is not None and any(
                        (res.params or {}).get(key) != value
                        for key, value in change.items()):
                    raise exceptions.InvalidState(
                        kind='Reservation', id=res.id, status=res.status,
                        reason='it holds part of the stack of reservation '
                               '%s; change that reservation\'s template or '
                               'parameters instead' % owner)
                plugin = self.plugins.get(res.resource_type)
                checked[res_id] = plugin.validate_change(
                    dict(res.params or {}), change)
                plugin.check(ctx, checked[res_id], dict(res.params or {}))
            # reservations whose parts are booked anew (a new template)
            rebooked = {res_id for res_id, params in checked.items()
                        if self.plugins.get(by_id[res_id].resource_type)
                        .needs_changed(by_id[res_id].params, params)}
            # ... or, started, whose parts grow in place
            grown = {res_id: dict(by_id[res_id].params or {},
                                  id=res_id)
                     for res_id in rebooked
                     if by_id[res_id].status == states.RES_ACTIVE}
            rebooked -= set(grown)
            new_value = plugin_values.Lease.of(lease)
            for res, res_value in plugin_values.reservation_pairs(lease):
                if res.part_of in rebooked or res.part_of in grown or (
                        res.id not in changes and not dates_moved):
                    continue
                plugin = self.plugins.get(res.resource_type)
                params = checked.get(res.id, dict(res.params or {}))
                res.params = plugin.update(ctx, old_value, new_value,
                                           res_value, params)
            to_prepare = set(changes)
            for res_id in sorted(rebooked):
                to_prepare.update(self._rebook_parts(ctx, lease,
                                                     by_id[res_id]))
            for res_id, old_params in sorted(grown.items()):
                self._grow_parts(ctx, lease, by_id[res_id], old_params,
                                 old_value, dates_moved)
            if changes or dates_moved:
                quotas.enforce(session, lease.project_id, lease.id,
                               lease.start_date, lease.end_date,
                               old_end=current['end_date'])
            db_api.flush(ctx)
            result = views.lease(lease)
        return _Updated(old_view, result, to_prepare if changes else None)

    def updated(self, ctx, change):
        """After the commit of :meth:`update_locked`: what the plugins
        make for changed reservations, the notice (when anything
        changed) and the engine woken; returns the lease's view."""
        old_view, result, to_prepare = change
        if to_prepare is not None:
            result = self._prepare(ctx, result, to_prepare)
        if result != old_view:
            # an empty body (or the same values again) changes nothing:
            # no notification, as in Blazar
            self.notifier.send(ctx, lease_notifications.UPDATE, result)
            self.wake()
        return result

    def _rebook_parts(self, ctx, lease, owner):
        """Replace the parts of ``owner`` (a pending reservation whose
        new parameters need others) in the update's transaction: the old
        ones are released and removed, the new ones booked, all or
        nothing.  Returns the new parts' ids."""
        value = plugin_values.Lease.of(lease)
        for part in [r for r in lease.reservations
                     if r.part_of == owner.id]:
            self.plugins.get(part.resource_type).delete(
                ctx, value, plugin_values.Reservation.of(part))
            lease.reservations.remove(part)
        plugin = self.plugins.get(owner.resource_type)
        items = self._parts(plugin, owner.params, None)
        rows = [models.Reservation(
            resource_type=item.plugin.resource_type,
            status=states.RES_PENDING, params=item.params, part_of=owner.id)
            for item in items]
        lease.reservations.extend(rows)
        db_api.flush(ctx)
        for row, item in zip(rows, items):
            row.params = item.plugin.params_with_id(row.params, row.id)
        owner.params = plugin.with_parts(owner.params, [r.id for r in rows])
        db_api.flush(ctx)
        for row, item in zip(rows, items):
            with _about(item.label):
                resource_id = item.plugin.reserve(
                    ctx, value, plugin_values.Reservation.of(row))
            if resource_id is not None:
                row.resource_id = resource_id
        return [row.id for row in rows]

    def _grow_parts(self, ctx, lease, owner, old_params, old_value,
                    dates_moved):
        """Update the started parts of ``owner`` (an active reservation
        whose new parameters hold other parts) in the update's
        transaction: its plugin says which part meets each new request
        (``ResourcePlugin.active_parts``), each part's own plugin applies
        it as to any active reservation of its type (grow, extend), all
        or nothing; a part no request names keeps what it holds (and
        moves with the dates)."""
        plugin = self.plugins.get(owner.resource_type)
        value = plugin_values.Lease.of(lease)
        res_values = {res.id: res_value for res, res_value
                      in plugin_values.reservation_pairs(lease)}
        rows = {r.id: r for r in lease.reservations
                if r.part_of == owner.id and r.status != states.RES_DELETED}
        matched = plugin.active_parts(
            owner.params, old_params,
            [res_values[i] for i in sorted(rows)])
        requests = {part_id: (label, request)
                    for label, part_id, request in matched}
        for part_id, row in sorted(rows.items()):
            label, request = requests.get(part_id, (None, {}))
            part_plugin = self.plugins.get(row.resource_type)
            with _about(label):
                params = part_plugin.validate_change(dict(row.params or {}),
                                                     request)
                if params == row.params and not dates_moved:
                    continue
                row.params = part_plugin.update(ctx, old_value, value,
                                                res_values[part_id], params)
        owner.params = plugin.with_parts(
            owner.params, [part_id for _l, part_id, _r in matched])
        db_api.flush(ctx)

    def _prepare(self, ctx, lease, reservation_ids=None):
        """Let the plugins make what their pending reservations show
        users before the start (``ResourcePlugin.prepare``), after the
        commit; returns the lease as it is then."""
        called = False
        value = plugin_values.Lease.from_view(lease)
        for res in lease['reservations']:
            if reservation_ids is not None and res['id'] not in \
                    reservation_ids:
                continue
            plugin = self.plugins.get(res['resource_type'])
            if plugin.acts_in_cloud:
                plugin.prepare(ctx, value,
                               plugin_values.Reservation.from_view(res))
                called = True
        if not called:
            return lease
        return views.lease(db_api.lease_get(ctx, lease['id']))

    @staticmethod
    def _reschedule(lease, new, now):
        """Move the lease's pending events to the new dates.

        A before-end notice that was already given stays as it is; when the
        end moves, a new one is scheduled before the new end (if that is
        still ahead), so that a lease prolonged after its notice warns again.
        """
        wanted = {lease_events.START: new['start_date'],
                  lease_events.END: new['end_date'],
                  lease_events.BEFORE_END: new['before_end_date']}
        current_before_end = _before_end_of(lease)
        for ev in list(lease.events):
            if ev.event_type not in lease_events.EVENT_TYPES:
                continue  # a user's own event stays where it was asked
            if (ev.event_type == lease_events.BEFORE_END and
                    ev is not current_before_end):
                continue  # an earlier notice, history
            when = wanted.pop(ev.event_type)
            if ev.time == when:
                continue
            if ev.status != states.UNDONE:
                if ev.event_type == lease_events.BEFORE_END:
                    if when is not None and when > now:
                        wanted[lease_events.BEFORE_END] = when
                    continue
                raise exceptions.InvalidState(
                    kind='Lease', id=lease.id, status=lease.status,
                    reason='its %s event has already run' % ev.event_type)
            if when is None:
                lease.events.remove(ev)
            else:
                ev.time = ev.due_at = when
        if wanted.get(lease_events.BEFORE_END) is not None:
            lease.events.append(models.Event(**_event_values(
                lease_events.BEFORE_END, wanted[lease_events.BEFORE_END])))

    # -- deleting ------------------------------------------------------------

    def delete(self, ctx, lease_id):
        """Release and remove a lease (an active one is reclaimed first),
        then delete its trust.

        Any member of the lease's project may delete it, not only its
        creator: reclaiming and deleting the trust use Climate's service
        credentials or the trust itself, never the caller's.
        """
        borrowed = hunts.borrowed_of(ctx, lease_id)
        view = self._delete(ctx, lease_id)
        LOG.info('Lease %s deleted', lease_id)
        # after the commit: the hosts are free of its bookings now
        hunts.give_back_borrowed(ctx, self.hunter, borrowed)
        # after the commit: a delete that failed keeps a working trust;
        # an occurrence's is its series' (climate.manager.series)
        if view['series_id'] is None:
            trusts.delete(view['trust_id'], lease_id)
        self.deleted(ctx, [view])

    def deleted(self, ctx, views_):
        """After the commit of deletes: the notices, and a word to whoever
        waits for capacity."""
        for view in views_:
            self.notifier.send(ctx, lease_notifications.DELETE, view)
        # no engine wake-up: removing events never makes anything due
        # earlier; but what the leases held may be what others wait for
        self.released()

    @staticmethod
    def add_notice(lease, when):
        """A ``notification`` event at ``when`` on ``lease`` (locked, in
        the caller's transaction): the engine sends it to the lease's
        project as a notification and to its webhooks, once; wake it
        after the commit."""
        lease.events.append(models.Event(**_event_values(
            lease_events.NOTIFICATION, when)))

    def created(self, ctx, view, due_times):
        """After the commit of a new lease (not waiting, hunting or
        held): what its plugins make before the start, its notice, and
        the engine woken when it is due soon; returns its view then."""
        view = self._prepare(ctx, view)
        self.notifier.send(ctx, lease_notifications.CREATE, view)
        self._wake_if_due_soon(due_times)
        return view

    @db_api.retry_on_deadlock
    def _delete(self, ctx, lease_id):
        self._refuse_if_busy(ctx, lease_id)
        with db_api.writer(ctx):
            lease = db_api.lease_get(ctx, lease_id, _scope(ctx),
                                     for_update=True)
            return self.delete_locked(ctx, lease)

    def delete_locked(self, ctx, lease):
        """Release and remove ``lease``, locked in the caller's
        transaction (an active one reclaimed first); returns its view as
        it was."""
        with db_api.writer(ctx) as session:
            view = views.lease(lease)
            # what an active lease held until now outlives it
            db_usage.record_consumed(session, lease.id, dates.utcnow())
            reclaim = lease.status in (states.ACTIVE, states.ERROR)
            value = plugin_values.Lease.of(lease)
            for res, res_value in plugin_values.in_run_order(
                    False, plugin_values.reservation_pairs(lease)):
                plugin = self.plugins.get(res.resource_type)
                if reclaim and res.status != states.RES_DELETED:
                    plugin.on_end(ctx, value, res_value, None)
                plugin.delete(ctx, value, res_value)
            db_api.lease_delete(ctx, lease)
        return view

    @staticmethod
    def _refuse_if_busy(ctx, lease_id):
        """409 rather than wait behind an event engine working on it."""
        lease = db_api.lease_get(ctx, lease_id, _scope(ctx))
        running = [ev.event_type for ev in lease.events
                   if ev.status == states.IN_PROGRESS]
        if lease.status == states.HUNTING:
            # its hosts are being freed: it ends by its deadline at most
            raise exceptions.LeaseBusy(
                id=lease.id, status=lease.status,
                reason='its hosts are being freed; try again once it is '
                       'ACTIVE or TIMEDOUT')
        waits = (lease.status_reason or '').startswith(
            lease_events.START_WAITS)
        if lease.status == states.STARTING and not running and waits:
            raise exceptions.LeaseBusy(
                id=lease.id, status=lease.status,
                reason='its %s; try again once it is ACTIVE' % (
                    lease.status_reason))
        if lease.status in states.LEASE_BUSY or running:
            raise exceptions.LeaseBusy(
                id=lease.id, status=lease.status,
                reason='%s is running; try again in a moment' % (
                    running[0] if running else 'an event'))
