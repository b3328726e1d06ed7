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
   and run the event again (``climate.manager.workers.heartbeat``; without a
   heartbeat, when its claim expires).  Plugins' cloud actions are
   idempotent, so that re-run finishes the job.  Releasing a claim clears
   its token, and the token is checked under the event's row lock in the
   very transaction that commits: a manager declared dead while only slow
   can never commit an event after its claim was released (see
   ``climate.db.managers``).  When no plugin
   of the lease acts in a cloud (``acts_in_cloud``), both steps run in one
   transaction: nobody could see the intermediate state anyway; and the
   claims of such leases run several to a transaction
   (``climate.manager.workers.batch_events``: the same rules and the same
   check of each claim under its row lock, one commit; a batch that fails
   is rolled back and each of its events runs alone);
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
import random
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
from climate.lease import events as lease_events
from climate.lease import types as lease_types
from climate.lease import views
from climate.manager import outages
from climate.manager import trusts
from climate.manager import webhooks
from climate.manager.workers import base as worker_base
from climate.manager.workers import batch_events
from climate.manager.workers import heartbeat
from climate.notifications import lease as lease_notifications
from climate.plugins import values as plugin_values
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
# How soon a start held back by its resources (hosts booting) looks again:
# the power planner reads a booting host every 30 s at most.
_WAIT_FOR_RESOURCES = datetime.timedelta(seconds=5)
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


def _chunks(claims, size):
    """``claims`` cut into as few jobs of at most ``size`` as can be, of
    even lengths (two batches of 13 rather than 25 and 1)."""
    if not claims:
        return []
    count = -(-len(claims) // size)
    per = -(-len(claims) // count)
    return [claims[i:i + per] for i in range(0, len(claims), per)]


def backoff(attempts, base, ceiling):
    """Seconds to wait after the ``attempts``-th failed attempt."""
    return min(ceiling, base * (2 ** max(0, attempts - 1)))


class EventEngine(worker_base.Worker):
    """Claims and runs due events; one per manager process."""

    name = 'climate-event-engine'
    failure = 'Event engine pass failed; retrying'

    def __init__(self, owner, plugins, notifier, wake_all=None):
        """:param wake_all: wakes every manager's engine (this one's
            too), called when claims of a dead manager were released."""
        super().__init__()
        self.owner = owner
        self.plugins = plugins
        self.notifier = notifier
        #: called (no argument) after an event recorded webhook
        #: deliveries: the manager's delivery worker looks at once
        self.deliveries_recorded = None
        #: called (no argument) after an end, or a failed start that gave
        #: back what it held: the waiting leases are tried at once
        self.capacity_released = None
        #: the manager's ``climate.manager.workers.hunts.Hunter``: hosts a
        #: best-effort lease borrowed are given back at its end
        self.hunter = None
        self.heartbeat = heartbeat.Heartbeat(
            owner, on_takeover=wake_all or self.wake)
        self._ctx = climate_context.admin_context()
        self._workers = CONF.manager.event_workers
        self._pool = concurrent.futures.ThreadPoolExecutor(
            self._workers, thread_name_prefix='climate-event')
        self._slots = threading.Semaphore(self._workers * 2)

    # -- lifecycle -----------------------------------------------------------

    def start(self):
        """Register this manager's heartbeat, start the engine's loop in a
        thread of its own."""
        self.heartbeat.start()
        super().start()

    def stop(self, timeout=30):
        """Stop claiming, let running events finish; give back the claims
        of events not started yet and remove the heartbeat, so that other
        managers take them at once."""
        super().stop(timeout)
        self._pool.shutdown(wait=True, cancel_futures=True)
        self.heartbeat.stop(timeout)

    # -- the loop ------------------------------------------------------------

    def work(self):
        if not self.heartbeat.alive():
            # the others may be declaring this manager dead: whatever it
            # claimed now would be released at once
            self.hold(CONF.manager.heartbeat_interval)
            return True  # alive again, maybe: look at once
        # a claim made: more may be due already
        return bool(self.run_once(self._ctx))

    def due_in(self):
        return self.seconds_until(
            lambda: db_api.next_due(self._ctx, _RUN_ORDER, _CLAIM_ORDER),
            CONF.manager.max_sleep)

    def failed(self, exc):
        if not outages.lost_to_writers(exc):
            return super().failed(exc)
        # a claim that lost to other managers' claims on every retry (on
        # Galera, where SKIP LOCKED is one node's: managers writing to
        # other nodes claim the same rows and lose at certification) is
        # contention, not a fault: said in one line, tried again soon, at
        # a time of its own so that the managers stop colliding
        LOG.warning('Event claim lost to other managers after its retries '
                    '(%s); claiming again', str(exc).splitlines()[0])
        self.hold(random.uniform(0.05, 0.5))
        return True

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
        size = CONF.manager.event_batch_size
        try:
            ids = db_api.events_claim(
                ctx, self.owner, token, now,
                min(CONF.manager.event_claim_batch, free * size),
                datetime.timedelta(seconds=CONF.manager.event_claim_ttl),
                _RUN_ORDER, _CLAIM_ORDER)
        except Exception:
            for _ in range(free):
                self._slots.release()
            raise
        # a slot per job: an event alone, or a batch of them
        jobs = self._jobs(ctx, ids, size, free, token)
        for _ in range(free - len(jobs)):
            self._slots.release()
        for job in jobs:
            if len(job) == 1:
                future = self._pool.submit(self.run_event, job[0].event_id,
                                           token, job[0].lease_id)
            else:
                future = self._pool.submit(batch_events.run, self, job,
                                           token)
            future.add_done_callback(lambda _f: self._slots.release())
        return len(ids)

    def _jobs(self, ctx, claims, size, free, token):
        """The claims cut into at most ``free`` jobs: the events of leases
        acting in a cloud one to a job, as the engine always ran them
        (they wait on the cloud: in parallel, a few at a time), the
        others in batches of at most ``size`` (``batch_events``).  The
        jobs go in the order of their first claim (the earliest due
        first); the claims of the jobs beyond ``free`` are given back at
        once, due now: held, they would wait behind the cloud's calls,
        perhaps past their claims' expiry."""
        if size == 1 or len(claims) <= 1:
            return [[claim] for claim in claims]
        try:
            types = db_api.resource_types_of(
                ctx, [claim.lease_id for claim in claims])
        except Exception:
            LOG.exception('Cannot read the resource types of %d claimed '
                          'events; they run in batches, which run those '
                          'of leases acting in a cloud alone', len(claims))
            return _chunks(claims, size)
        alone, together = [], []
        for claim in claims:
            (alone if self._types_act_in_cloud(types.get(claim.lease_id))
             else together).append(claim)
        position = {claim: i for i, claim in enumerate(claims)}
        jobs = sorted(_chunks(together, size) + [[c] for c in alone],
                      key=lambda job: position[job[0]])
        left = [claim for job in jobs[free:] for claim in job]
        if left:
            try:
                db_api.events_unclaim(ctx, token,
                                      [c.event_id for c in left],
                                      dates.utcnow())
            except Exception:
                LOG.exception('Cannot give back %d claimed events; they '
                              'run past the slots', len(left))
                for claim in left:
                    self.submit(self.run_event, claim.event_id, token,
                                claim.lease_id)
        return jobs[:free]

    def _types_act_in_cloud(self, resource_types):
        return any(self.plugins.get(resource_type).acts_in_cloud
                   for resource_type in resource_types or ())

    def submit(self, function, *args):
        """Run ``function(*args)`` in the engine's pool, outside its
        slots (the events a batch leaves to run alone: at most a batch's
        worth per slot); False when the engine is stopping."""
        try:
            self._pool.submit(function, *args)
        except RuntimeError:  # shut down: the claims go to the others
            return False
        return True

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
            self.after_commit(ctx, event_type, lease, event_id)
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

    def after_commit(self, ctx, event_type, lease, event_id, notify=True):
        """What follows an event's commit: wake-ups, a best-effort
        lease's borrowed hosts given back at its end, the notification
        (``lease``: the view the commit left; ``notify`` False: the
        caller sends it, with others, :meth:`notify_many`)."""
        # the lease's next event, due already but not claimable while
        # this one ran, can be claimed now
        self.wake()
        if event_type in webhooks.DELIVERED_TYPES and \
                self.deliveries_recorded is not None:
            self.deliveries_recorded()
        if event_type == lease_events.END:
            self._give_back_borrowed(ctx, lease)
            self._released()
        if notify:
            self._notify(ctx, event_type, lease, event_id)

    def _give_back_borrowed(self, ctx, lease):
        """After the end of a best-effort lease that borrowed hosts: out
        of the inventory again (never fails the end: logged)."""
        if lease.get('lease_type') != lease_types.BEST_EFFORT:
            return
        from climate.manager.workers import hunts
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
            if not self.admit(ctx, lease, event, dates.utcnow()):
                return None, None
            if (event.event_type == lease_events.NOTIFICATION or
                    not self.acts_in_cloud(lease)):
                # a notice (no plugin) or SQL only: one transaction
                return event.event_type, self._apply(ctx, lease, event)
            return event.event_type, None

    @staticmethod
    def rank(event_type):
        """Where ``event_type`` runs among its lease's events (a user's
        event, which waits for nothing, after the engine's own)."""
        return _RUN_ORDER.get(event_type, len(_RUN_ORDER))

    def admit(self, ctx, lease, event, now):
        """Whether a claimed event runs now, its lease and event locked
        and its claim checked: True with its attempt counted and the lease
        marked; False when it was put back (rescheduled, or waiting for an
        earlier event of its lease) or had nothing to do, recorded on the
        rows (in the caller's transaction)."""
        if event.time > now:
            # the lease was rescheduled after the claim
            self._release(event, event.time)
            return False
        if lease.status == states.HELD:
            # not a lease until confirmed (climate.lease.holds): the
            # confirm makes its events due again, the expiry removes them
            self._release(event, max(now, lease.hold_expires_at) +
                          _WAIT_FOR_EARLIER)
            return False
        if event.event_type == lease_events.NOTIFICATION:
            # a notice of the user's: no plugin, no order
            event.attempts += 1
            return True
        rank = _RUN_ORDER[event.event_type]
        # (a user's own event, of another type, never runs here and
        # blocks nothing)
        if any(_RUN_ORDER.get(e.event_type, rank) < rank and
               e.status in (states.UNDONE, states.IN_PROGRESS)
               for e in lease.events):
            # an earlier event of this lease (late, retrying, or held by
            # another manager) must run first
            self._release(event, now + _WAIT_FOR_EARLIER)
            return False
        if event.event_type == lease_events.START:
            why = self._start_waits_for(ctx, lease, now)
            if why:
                self._release(event, now + _WAIT_FOR_RESOURCES)
                db_api.set_status(lease, 'lease', states.STARTING)
                lease.status_reason = ('%s%s; waited %d s so far' % (
                    lease_events.START_WAITS, why, max(0, (
                        now - lease.start_date).total_seconds())))[:4000]
                return False
        if (event.event_type == lease_events.BEFORE_END and
                lease.status != states.ACTIVE):
            # before_end of a lease that never became active: nothing to
            # warn about
            event.attempts += 1
            db_api.set_status(event, 'event', states.DONE)
            return False
        self._begin_attempt(lease, event)
        return True

    def _start_waits_for(self, ctx, lease, now):
        """What holds the lease's start back (``plugin.start_waits_for``
        of its live reservations, joined, read in the caller's
        transaction), or None."""
        return self._ask_waiting(ctx, lease, now, 'start_waits_for')

    def _start_gave_up_on(self, ctx, lease, now):
        """What the start no longer waits for though it is not ready
        (``plugin.start_gave_up_on``, joined), or None."""
        return self._ask_waiting(ctx, lease, now, 'start_gave_up_on')

    def _ask_waiting(self, ctx, lease, now, method):
        waiting = [res for res in lease.reservations
                   if res.status != states.RES_DELETED and
                   self.plugins.get(res.resource_type).waits_at_start]
        if not waiting:
            return None
        value = plugin_values.Lease.of(lease)
        reasons = [getattr(self.plugins.get(res.resource_type), method)(
            ctx, value, plugin_values.Reservation.of(res), now)
            for res in waiting]
        reasons = [r for r in reasons if r]
        return '; '.join(reasons) if reasons else None

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

    def acts_in_cloud(self, lease):
        """Whether a plugin of the lease's live reservations acts in a
        cloud: its events then run in two transactions."""
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
        self.apply_changes(ctx, lease, event)
        db_api.flush(ctx)
        return self.applied(ctx, lease, event)

    def apply_changes(self, ctx, lease, event):
        """The plugins' actions and the rows' new states, unflushed (a
        batch writes those of all its events at once)."""
        value = plugin_values.Lease.of(lease)
        event_value = plugin_values.Event.of(event)
        if event.event_type == lease_events.END:
            # what the lease held is kept before its bookings go
            with db_api.writer(ctx) as session:
                db_usage.record_consumed(session, lease.id, dates.utcnow())
        notice = event.event_type == lease_events.NOTIFICATION
        for res, res_value in plugin_values.in_run_order(
                event.event_type != lease_events.END,
                plugin_values.reservation_pairs(lease)):
            if notice or res.status == states.RES_DELETED:
                continue
            plugin = self.plugins.get(res.resource_type)
            if event.event_type == lease_events.START:
                plugin.on_start(ctx, value, res_value, event_value)
                db_api.set_status(res, 'reservation', states.RES_ACTIVE)
            elif event.event_type == lease_events.END:
                plugin.on_end(ctx, value, res_value, event_value)
                db_api.set_status(res, 'reservation', states.RES_DELETED)
            else:
                plugin.before_end(ctx, value, res_value, event_value)
        if (lease.status_reason or '').startswith(
                event.event_type + ' attempt'):
            # the retry note of this very event is stale now
            lease.status_reason = None
        elif (event.event_type == lease_events.START and
              (lease.status_reason or '').startswith(lease_events.START_WAITS)):
            # what the lease waited for is kept, in the past tense; a
            # wait that ended at the plugin's bound, not with the
            # resources ready, says what is still missing
            now = dates.utcnow()
            late = max(0, (now - lease.start_date).total_seconds())
            missing = self._start_gave_up_on(ctx, lease, now)
            if missing:
                lease.status_reason = 'started %d s after its start date, ' \
                    'its resources not all ready: %s' % (late, missing)
            else:
                lease.status_reason = 'started %d s after its start ' \
                    'date, once its resources were ready (%s)' % (
                        late, lease.status_reason[
                            len(lease_events.START_WAITS):].split(
                            '; waited ')[0])
            lease.status_reason = lease.status_reason[:4000]
        if event.event_type == lease_events.START:
            db_api.set_status(lease, 'lease', states.ACTIVE)
        elif event.event_type == lease_events.END:
            db_api.set_status(lease, 'lease', states.TERMINATED)
            # Before the commit, so that a crash cannot forget it; a
            # re-run of this event finds it gone, which is harmless
            # since reclaiming never uses the trust.  A trust Keystone
            # would not delete stays on the row (logged), the lease
            # still ends.  An occurrence's trust is its series', deleted
            # once the series is over (climate.manager.series).
            if lease.series_id is None and \
                    trusts.delete(lease.trust_id, lease.id):
                lease.trust_id = None
        db_api.set_status(event, 'event', states.DONE)
        event.last_error = None
        event.claimed_by = event.claim_token = None

    @staticmethod
    def applied(ctx, lease, event):
        """After :meth:`apply_changes`, its rows written: the lease view
        to notify, and the event's webhook deliveries recorded (in the
        caller's transaction)."""
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
        lease's start that gave up, ``climate.lease.types``), else
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
        value = plugin_values.Lease.of(lease)
        now = dates.utcnow()
        pairs = plugin_values.in_run_order(
            False, plugin_values.reservation_pairs(lease))
        failures = []
        for res, res_value in pairs:
            if res.status == states.RES_DELETED:
                continue
            try:
                self.plugins.get(res.resource_type).on_end(
                    ctx, value, res_value, None)
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
        for res, res_value in pairs:
            self.plugins.get(res.resource_type).delete(ctx, value,
                                                       res_value)
            db_api.set_status(res, 'reservation', states.RES_ERROR)
        for ev in list(lease.events):
            if ev.status == states.UNDONE:
                lease.events.remove(ev)
        return ('%s; everything the start made was taken back and the '
                'reservations released' % what, True)

    def _notify(self, ctx, event_type, lease, event_id=None):
        self.notifier.send(ctx, *self._notice(event_type, lease, event_id))

    def notify_many(self, ctx, ran):
        """The notifications of events run together: ``(event type, lease
        view, event id)`` each, their leases' usage read at once."""
        self.notifier.send_many(ctx, [
            self._notice(event_type, lease, event_id)
            for event_type, lease, event_id in ran])

    @staticmethod
    def _notice(event_type, lease, event_id):
        """``(action, lease, event)`` of an event's notification; the
        event only for a user's notice (which of the lease's it is)."""
        if event_type != lease_events.NOTIFICATION:
            return _NOTIFICATION[event_type], lease, None
        event = next((ev for ev in lease['events'] if ev['id'] == event_id),
                     None)
        return _NOTIFICATION[event_type], lease, event
