"""The event engine: runs start, end and before-end events exactly once.

Several managers run one engine each against the same database.  An engine

1. claims due events in SQL (``db.api.events_claim``): owner, a fresh
   token, and ``due_at`` pushed to the claim's expiry, with SKIP LOCKED
   where the database has it;
2. runs each claimed event in two transactions.  The first locks the lease,
   checks the claim is still its own and marks the lease STARTING or
   TERMINATING.  The second locks the lease and the event again, checks the
   claim's token once more, calls the plugins, and commits their SQL
   effects together with the event's DONE.  A manager killed in the middle
   rolls the second transaction back; it stops stamping its heartbeat, the
   other managers declare it dead a few seconds later, release its claims
   and run the event again (``climate.manager.heartbeat``; without a
   heartbeat, when its claim expires).  Plugins' cloud actions are
   idempotent, so that re-run finishes the job.  Releasing a claim clears
   its token, and the token is checked under the event's row lock in the
   very transaction that commits: a manager declared dead while only slow
   can never commit an event after its claim was released (see
   ``climate.db.managers``).  When no plugin
   of the lease acts in a cloud (``acts_in_cloud``), both steps run in one
   transaction: nobody could see the intermediate state anyway;
3. on failure, puts the event back with an exponential backoff, or, after
   ``event_max_attempts``, marks the event and the lease ERROR with the
   reason;

   Each of these transactions is retried whole when the database picks it
   as a deadlock's victim: a claim locks events before their lease (it
   cannot know the leases first) and re-renders their bodies, the engine
   locks a lease before its events, so the two can meet in a deadlock.  A
   lost deadlock is not the event's failure; unretried, it cost an attempt
   or, in the third transaction, left the event claimed until its claim
   expired;
4. sleeps until the next due time, or until woken by a fanout RPC from a
   manager that changed a lease.

A user's event of type ``notification`` (and the lease's before-end
notice) is a notice: running it sends ``climate.lease.event.notification``
(``climate.lease.before_end``) and writes one delivery per matching
webhook of the lease's project in the transaction that marks the event
DONE (``climate.manager.webhooks``), which the managers' delivery workers
send afterwards: a notice is recorded exactly once, and no endpoint ever
holds a lease up.  A notification waits for no other event of its lease
and holds none back.
"""

import concurrent.futures
import datetime
import threading
import time
import uuid

from oslo_config import cfg
from oslo_log import log as logging
from oslo_utils import timeutils

from climate import context as climate_context
from climate import dates
from climate.db import api as db_api
from climate.db import usage as db_usage
from climate import exceptions
from climate import lease_events
from climate.manager import heartbeat
from climate.manager import lease_types
from climate.manager import trusts
from climate.manager import views
from climate.manager import webhooks
from climate.notifications import lease as lease_notifications
from climate import states

LOG = logging.getLogger(__name__)
CONF = cfg.CONF

# A lease's events run in this order, whatever their due times say: an event
# that comes due while an earlier one has not run is not claimed (and, if
# claimed in a race, waits this long before looking again, not counted as an
# attempt).
_RUN_ORDER = {lease_events.START: 0, lease_events.BEFORE_END: 1,
              lease_events.END: 2}
# Across leases, due events are claimed ends first (they free resources that
# starts due at the same moment may need), then starts (users wait on them),
# then before-end notices and users' notifications (notices both: nothing
# waits for them).
_CLAIM_ORDER = (lease_events.END, lease_events.START, lease_events.BEFORE_END,
                lease_events.NOTIFICATION)
_WAIT_FOR_EARLIER = datetime.timedelta(seconds=1)
# How long a saturated engine waits for more free slots before claiming.
_REFILL_WAIT = 0.05


_NOTIFICATION = {lease_events.START: lease_notifications.START,
                 lease_events.END: lease_notifications.END,
                 lease_events.BEFORE_END: lease_notifications.BEFORE_END,
                 lease_events.NOTIFICATION:
                     lease_notifications.EVENT_NOTIFICATION}


class ClaimLost(Exception):
    """Another engine took this event over, or its claim was released
    (this manager was declared dead); leave it alone."""


def backoff(attempts, base, ceiling):
    """Seconds to wait after the ``attempts``-th failed attempt."""
    return min(ceiling, base * (2 ** max(0, attempts - 1)))


class EventEngine:
    """Claims and runs due events; one per manager process."""

    def __init__(self, owner, plugins, notifier, wake_all=None):
        """:param wake_all: wakes every manager's engine (this one's
            too), called when claims of a dead manager were released."""
        self.owner = owner
        self.plugins = plugins
        self.notifier = notifier
        #: called (no argument) after an event recorded webhook
        #: deliveries: the manager's delivery worker looks at once
        self.deliveries_recorded = None
        #: called (no argument) after an end, or a failed start that gave
        #: back what it held: the waiting leases are tried at once
        self.capacity_released = None
        #: the manager's ``climate.manager.hunts.Hunter``: hosts a
        #: best-effort lease borrowed are given back at its end
        self.hunter = None
        self.heartbeat = heartbeat.Heartbeat(
            owner, on_takeover=wake_all or self.wake)
        self._wakeup = threading.Event()
        self._stopping = threading.Event()
        self._thread = None
        self._workers = CONF.manager.event_workers
        self._pool = concurrent.futures.ThreadPoolExecutor(
            self._workers, thread_name_prefix='climate-event')
        self._slots = threading.Semaphore(self._workers * 2)

    # -- lifecycle -----------------------------------------------------------

    def start(self):
        """Register this manager's heartbeat, start the engine's loop in a
        thread of its own."""
        self.heartbeat.start()
        self._thread = threading.Thread(target=self._loop, daemon=True,
                                        name='climate-event-engine')
        self._thread.start()

    def stop(self, timeout=30):
        """Stop claiming, let running events finish; give back the claims
        of events not started yet and remove the heartbeat, so that other
        managers take them at once."""
        self._stopping.set()
        self._wakeup.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self._pool.shutdown(wait=True, cancel_futures=True)
        self.heartbeat.stop(timeout)

    def wake(self):
        """Look for due events now rather than at the planned time."""
        self._wakeup.set()

    # -- the loop ------------------------------------------------------------

    def _loop(self):
        ctx = climate_context.admin_context()
        while not self._stopping.is_set():
            if not self.heartbeat.alive():
                # the others may be declaring this manager dead: whatever
                # it claimed now would be released at once
                self._stopping.wait(CONF.manager.heartbeat_interval)
                continue
            try:
                claimed = self.run_once(ctx)
            except Exception:
                LOG.exception('Event engine pass failed; retrying')
                claimed = 0
                self._stopping.wait(1)
            if claimed:
                continue
            self._sleep(ctx)

    def _sleep(self, ctx):
        timeout = CONF.manager.max_sleep
        try:
            nxt = db_api.next_due(ctx, _RUN_ORDER, _CLAIM_ORDER)
        except Exception:
            LOG.exception('Cannot read the next due time')
            nxt = None
        if nxt is not None:
            # not dates.utcnow(): truncated to the second, it would wake
            # the engine up to a second late
            wait = (nxt - timeutils.utcnow()).total_seconds()
            timeout = max(0.0, min(timeout, wait))
        if timeout > 0:
            self._wakeup.wait(timeout)
        self._wakeup.clear()

    def run_once(self, ctx):
        """Claim what is due and hand it to the workers; returns the count."""
        free = 0
        while self._slots.acquire(blocking=False):
            free += 1
            if free >= CONF.manager.event_claim_batch:
                break
        if not free:
            # All slots busy: wait for one, then give the others a moment to
            # free up too, so that one claim pass (a few queries) fetches a
            # few events rather than one each time an event finishes.  The
            # workers are not idle meanwhile: half the slots are queued work.
            self._slots.acquire()
            free = 1
            deadline = time.monotonic() + _REFILL_WAIT
            while free < min(self._workers, CONF.manager.event_claim_batch):
                left = deadline - time.monotonic()
                if left <= 0 or not self._slots.acquire(timeout=left):
                    break
                free += 1
        token = str(uuid.uuid4())
        now = dates.utcnow()
        try:
            ids = db_api.events_claim(
                ctx, self.owner, token, now, free,
                datetime.timedelta(seconds=CONF.manager.event_claim_ttl),
                _RUN_ORDER, _CLAIM_ORDER)
        except Exception:
            for _ in range(free):
                self._slots.release()
            raise
        for _ in range(free - len(ids)):
            self._slots.release()
        for claimed in ids:
            future = self._pool.submit(self.run_event, claimed.event_id,
                                       token, claimed.lease_id)
            future.add_done_callback(lambda _f: self._slots.release())
        return len(ids)

    # -- one event -----------------------------------------------------------

    def run_event(self, event_id, token, lease_id=None):
        """Run one claimed event; never raises.

        ``lease_id`` (from the claim) saves looking it up.
        """
        ctx = climate_context.admin_context()
        counted = False
        try:
            event_type, lease = self._prepare(ctx, event_id, token,
                                              lease_id)
            if event_type is None:
                # released or rescheduled: the loop may be sleeping past its
                # new due time
                self.wake()
                return
            counted = True
            if lease is None:
                lease = self._execute(ctx, event_id, token)
            # the lease's next event, due already but not claimable while
            # this one ran, can be claimed now
            self.wake()
            if event_type in webhooks.DELIVERED_TYPES and \
                    self.deliveries_recorded is not None:
                self.deliveries_recorded()
            if event_type == lease_events.END:
                self._give_back_borrowed(ctx, lease)
                self._released()
            self._notify(ctx, event_type, lease, event_id)
        except ClaimLost:
            LOG.info('Event %s was taken over by another manager (or its '
                     'claim released: this manager was declared dead)',
                     event_id)
        except exceptions.LeaseNotFound:
            LOG.info('Lease of event %s was deleted meanwhile', event_id)
        except Exception as exc:
            LOG.warning('Event %s failed: %s', event_id, exc,
                        exc_info=not isinstance(
                            exc, exceptions.ClimateException))
            try:
                rolled_back = self._failed(ctx, event_id, token, exc,
                                           counted)
                if rolled_back is not None:
                    # a typed lease's start that gave up: ERROR, and
                    # what it held is free for the waiting leases
                    self.notifier.send(ctx, lease_notifications.UPDATE,
                                       rolled_back)
                    self._released()
                self.wake()
            except (ClaimLost, exceptions.LeaseNotFound):
                pass
            except Exception:
                LOG.exception('Cannot record the failure of event %s; its '
                              'claim will expire and it will run again',
                              event_id)

    def _give_back_borrowed(self, ctx, lease):
        """After the end of a best-effort lease that borrowed hosts: out
        of the inventory again (never fails the end: logged)."""
        if lease.get('lease_type') != lease_types.BEST_EFFORT:
            return
        from climate.manager import hunts
        try:
            hunts.give_back_borrowed(ctx, self.hunter,
                                     hunts.borrowed_of(ctx, lease['id']))
        except Exception:
            LOG.exception('Lease %s: giving back its borrowed hosts failed',
                          lease['id'])

    def _released(self):
        if self.capacity_released is not None:
            self.capacity_released()

    def _locked(self, ctx, event_id, token, lease_id=None):
        """Lock the lease, then the event, and check the claim is ours."""
        if lease_id is None:
            event = db_api.event_get(ctx, event_id)
            if event is None:
                raise exceptions.LeaseNotFound(id='of event %s' % event_id)
            lease_id = event.lease_id
        lease = db_api.lease_get(ctx, lease_id, for_update=True)
        event = db_api.event_get(ctx, event_id, for_update=True)
        if (event is None or event.status != states.IN_PROGRESS or
                event.claim_token != token):
            raise ClaimLost()
        return lease, event

    def _release(self, event, due):
        """Give the event back unclaimed, due again at ``due``."""
        db_api.set_status(event, 'event', states.UNDONE)
        event.due_at = due
        event.claimed_by = event.claim_token = None

    @db_api.retry_on_deadlock
    def _prepare(self, ctx, event_id, token, lease_id=None):
        """First transaction: check the event may run, mark the lease.

        Returns ``(event type, None)``, or ``(None, None)`` when the event
        must wait or has nothing to do.  When no plugin of the lease acts in
        a cloud, the event runs in this same transaction and the result is
        ``(event type, lease view)``.
        """
        with db_api.writer(ctx):
            lease, event = self._locked(ctx, event_id, token, lease_id)
            now = dates.utcnow()
            if event.time > now:
                # the lease was rescheduled after the claim
                self._release(event, event.time)
                return None, None
            if event.event_type == lease_events.NOTIFICATION:
                # a notice of the user's: no plugin, no order, one
                # transaction
                event.attempts += 1
                return event.event_type, self._apply(ctx, lease, event)
            rank = _RUN_ORDER[event.event_type]
            # (a user's own event, of another type, never runs here and
            # blocks nothing)
            if any(_RUN_ORDER.get(e.event_type, rank) < rank and
                   e.status in (states.UNDONE, states.IN_PROGRESS)
                   for e in lease.events):
                # an earlier event of this lease (late, retrying, or held by
                # another manager) must run first
                self._release(event, now + _WAIT_FOR_EARLIER)
                return None, None
            if (event.event_type == lease_events.BEFORE_END and
                    lease.status != states.ACTIVE):
                # before_end of a lease that never became active: nothing to
                # warn about
                event.attempts += 1
                db_api.set_status(event, 'event', states.DONE)
                return None, None
            self._begin_attempt(lease, event)
            if not self._acts_in_cloud(lease):
                return event.event_type, self._apply(ctx, lease, event)
            return event.event_type, None

    @staticmethod
    def _begin_attempt(lease, event):
        """Count the attempt; the lease shows STARTING or TERMINATING
        until the event is done (or gives up)."""
        event.attempts += 1
        if event.event_type == lease_events.START:
            db_api.set_status(lease, 'lease', states.STARTING)
        elif (event.event_type == lease_events.END and
              lease.status != states.TERMINATED):
            db_api.set_status(lease, 'lease', states.TERMINATING)

    def _acts_in_cloud(self, lease):
        return any(self.plugins.get(res.resource_type).acts_in_cloud
                   for res in lease.reservations
                   if res.status != states.RES_DELETED)

    @db_api.retry_on_deadlock
    def _execute(self, ctx, event_id, token):
        """Second transaction: the plugins' actions and the event's DONE."""
        with db_api.writer(ctx):
            lease, event = self._locked(ctx, event_id, token)
            return self._apply(ctx, lease, event)

    def _apply(self, ctx, lease, event):
        """Run the plugins' actions and mark the event DONE (in the
        caller's transaction); returns the lease view to notify."""
        view = views.lease(lease)
        event_view = views.event(event)
        if event.event_type == lease_events.END:
            # what the lease held is kept before its bookings go
            with db_api.writer(ctx) as session:
                db_usage.record_consumed(session, lease.id, dates.utcnow())
        notice = event.event_type == lease_events.NOTIFICATION
        for res, res_view in views.in_run_order(
                event.event_type != lease_events.END,
                zip(lease.reservations, view['reservations'])):
            if notice or res.status == states.RES_DELETED:
                continue
            plugin = self.plugins.get(res.resource_type)
            if event.event_type == lease_events.START:
                plugin.on_start(ctx, view, res_view, event_view)
                db_api.set_status(res, 'reservation', states.RES_ACTIVE)
            elif event.event_type == lease_events.END:
                plugin.on_end(ctx, view, res_view, event_view)
                db_api.set_status(res, 'reservation', states.RES_DELETED)
            else:
                plugin.before_end(ctx, view, res_view, event_view)
        if (lease.status_reason or '').startswith(
                event.event_type + ' attempt'):
            # the retry note of this very event is stale now
            lease.status_reason = None
        if event.event_type == lease_events.START:
            db_api.set_status(lease, 'lease', states.ACTIVE)
        elif event.event_type == lease_events.END:
            db_api.set_status(lease, 'lease', states.TERMINATED)
            # Before the commit, so that a crash cannot forget it; a
            # re-run of this event finds it gone, which is harmless
            # since reclaiming never uses the trust.  A trust Keystone
            # would not delete stays on the row (logged), the lease
            # still ends.
            if trusts.delete(lease.trust_id, lease.id):
                lease.trust_id = None
        db_api.set_status(event, 'event', states.DONE)
        event.last_error = None
        event.claimed_by = event.claim_token = None
        db_api.flush(ctx)
        result = views.lease(lease)
        if event.event_type in webhooks.DELIVERED_TYPES:
            # with the event's DONE: recorded once, whoever runs it
            webhooks.enqueue(ctx, lease.project_id, result,
                             views.event(event), dates.utcnow())
        return result

    @db_api.retry_on_deadlock
    def _failed(self, ctx, event_id, token, exc, counted=True):
        """Third transaction: schedule a retry or give up with the reason.

        ``counted``: the attempt was recorded by a committed first
        transaction (not so when the event ran, and failed, in one).
        Returns the lease's view when its capacity was given back (a typed
        lease's start that gave up, ``climate.manager.lease_types``), else
        None.
        """
        reason = '%s: %s' % (type(exc).__name__.replace('_Remote', ''), exc)
        with db_api.writer(ctx):
            lease, event = self._locked(ctx, event_id, token)
            if not counted:
                # the attempt ran in one transaction, rolled back whole
                self._begin_attempt(lease, event)
            event.last_error = reason[:4000]
            limit = CONF.manager.event_max_attempts
            if event.event_type == lease_events.START:
                limit = lease_types.start_attempts(lease.lease_type, limit)
            if event.attempts >= limit:
                db_api.set_status(event, 'event', states.EVENT_ERROR)
                event.claimed_by = event.claim_token = None
                what = '%s failed after %d attempt%s: %s' % (
                    event.event_type, event.attempts,
                    '' if event.attempts == 1 else 's', reason)
                gave_back = (event.event_type == lease_events.START and
                             lease_types.rolled_back(lease.lease_type))
                if gave_back:
                    what, gave_back = self._give_back(ctx, lease, what)
                db_api.set_status(lease, 'lease', states.ERROR, reason=what)
                LOG.error('Event %s of lease %s gave up: %s', event.id,
                          lease.id, reason)
                if not gave_back:
                    return None
                db_api.flush(ctx)
                return views.lease(lease)
            delay = backoff(event.attempts, CONF.manager.event_retry_backoff,
                            CONF.manager.event_retry_max_backoff)
            # rounded up, so that the wait is never shorter than the backoff
            retry_at = dates.ceil_second(
                timeutils.utcnow() + datetime.timedelta(seconds=delay))
            self._release(event, retry_at)
            lease.status_reason = (
                '%s attempt %d of %d failed (%s); next attempt at %s UTC' % (
                    event.event_type, event.attempts, limit, reason,
                    retry_at.strftime('%Y-%m-%d %H:%M:%S')))[:4000]
            return None

    def _give_back(self, ctx, lease, what):
        """A typed lease whose start gave up: take back what the start
        made in the cloud (each plugin's ``on_end``, idempotent), then
        release its bookings, so that it is never left half-provisioned
        and holds nothing.  Its events still to come are dropped: it ends
        in ERROR.  Returns ``(reason, whether released)``: when the cloud
        could not take something back, the bookings stay until the end,
        whose event reclaims again, and the reason says so."""
        view = views.lease(lease)
        now = dates.utcnow()
        pairs = views.in_run_order(
            False, zip(lease.reservations, view['reservations']))
        failures = []
        for res, res_view in pairs:
            if res.status == states.RES_DELETED:
                continue
            try:
                self.plugins.get(res.resource_type).on_end(
                    ctx, view, res_view, None)
            except Exception as exc:
                LOG.warning('Lease %s: could not take back reservation %s '
                            'after its failed start: %s', lease.id, res.id,
                            exc)
                failures.append('%s (%s)' % (res.id, exc))
        if failures:
            return ('%s; taking back what the start made failed for %s: '
                    'the reservations are held until the lease\'s end, '
                    'which tries again' % (what, ', '.join(failures)),
                    False)
        with db_api.writer(ctx) as session:
            db_usage.record_consumed(session, lease.id, now)
        for res, res_view in pairs:
            self.plugins.get(res.resource_type).delete(ctx, view, res_view)
            db_api.set_status(res, 'reservation', states.RES_ERROR)
        for ev in list(lease.events):
            if ev.status == states.UNDONE:
                lease.events.remove(ev)
        return ('%s; everything the start made was taken back and the '
                'reservations released' % what, True)

    def _notify(self, ctx, event_type, lease, event_id=None):
        if event_type != lease_events.NOTIFICATION:
            self.notifier.send(ctx, _NOTIFICATION[event_type], lease)
            return
        # which of the lease's notices this is
        event = next((ev for ev in lease['events'] if ev['id'] == event_id),
                     None)
        self.notifier.send(ctx, _NOTIFICATION[event_type], lease,
                           event=event)
