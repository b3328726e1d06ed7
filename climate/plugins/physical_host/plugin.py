"""The ``physical:host`` resource plugin: allocation, start/end, healing.

A reservation asks for ``min`` to ``max`` hosts matching
``hypervisor_properties`` (host facts) and ``resource_properties`` (extra
capabilities), both in the filter language of
``climate.scheduling.filters``.  It books each host whole in the capacity
ledger (``climate.db.ledger``, DESIGN.md decision 7): the host is the
provider ``str(id)``, and a booking is ``HOST = 1`` plus all the host's
usable ``VCPU``, ``MEMORY_MB`` and ``DISK_GB`` over the lease window.  A
host is free for it only when no booking of any class overlaps the
window: an instance slot (``virtual:instance``) on it makes it busy.

**Allocation never double-books** (DESIGN.md decision 2).  Inside the
lease transaction the allocator

1. reads the best-fitting free matching hosts
   (``db.hosts.free_candidates``: a bounded number of statements
   reading only the bookings near the window, ranked by the rule of
   ``climate.scheduling.hosts.choose``);
2. locks the picked host rows (``SELECT ... FOR UPDATE``, in id order),
   then their ledger inventory rows (the ledger's lock order);
3. re-reads, with a locking read, whether any of them got an overlapping
   booking meanwhile (a concurrent booker that held the lock has
   committed by now) and drops those, picking again for what is missing;
4. books them with ``ledger.book``, which re-checks the ledger's rule
   under the same locks, committed with the lease.

Every writer of a host's bookings -- a host reservation here, an
instance reservation through ``ledger.place`` -- holds the host's ledger
inventory lock until it commits, so a host can never carry two
overlapping host reservations, nor a host reservation and an instance
slot at once.  On SQLite, writers are serialized by ``BEGIN IMMEDIATE``.

**Start and end run inside the event transaction**, which holds the lease
row lock while the backend moves hosts (seconds with Nova).  That is
accepted: only this lease waits (its update/delete answer 409 "busy"
meanwhile), other leases' events run on other workers, and the backend
steps are idempotent, so a crash or rollback after a cloud change is
finished by the retry.
"""

import datetime

from oslo_config import cfg
from oslo_log import log as logging

from climate import dates
from climate.db import api as db_api
from climate.db import hosts as db_hosts
from climate.db import power as db_power
from climate import exceptions
from climate.plugins import base
from climate.plugins import common
from climate.plugins import host_filters
from climate.plugins.physical_host import backends
from climate.scheduling import hosts as sched
from climate.scheduling import power as plan_power
from climate import states

LOG = logging.getLogger(__name__)
#: How many more of the best-fitting free hosts a lease starting now
#: looks at for hosts that are on (the power planner's sleeping hosts go
#: after them).
AWAKE_LOOKAHEAD = 16
#: How many of the hosts a start waits for its reason names.
WAITING_NAMED = 5
CONF = cfg.CONF

RESOURCE_TYPE = 'physical:host'
PARAMS = ('min', 'max', 'hypervisor_properties', 'resource_properties',
          'before_end')
BEFORE_END_ACTIONS = ('', 'default', 'snapshot')
#: Most hosts one reservation may ask for.
MAX_HOSTS = 10000
#: Rounds of pick-lock-recheck before giving up under contention.
ALLOCATION_ROUNDS = 10
#: Replacements a healing pass tries for one lost host.
HEAL_CANDIDATES = 10


def _whole(value):
    """``value`` as an integer when it is one (or its decimal text)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    text = value.strip() if isinstance(value, str) else ''
    if text.isascii() and text.lstrip('-').isdigit() and len(text) < 20:
        return int(text)
    return None


def count_of(value, key):
    """``value`` as a host count from 1 to :data:`MAX_HOSTS`, else
    InvalidInput naming ``key`` (Climate's own routes)."""
    number = _whole(value)
    if number is None or not 1 <= number <= MAX_HOSTS:
        raise exceptions.InvalidInput(
            reason='%s must be a whole number from 1 to %d, not %r' % (
                key, MAX_HOSTS, value))
    return number


def _count(params, key):
    """``params[key]`` (``min`` or ``max``) as a host count, refused in
    Blazar's words."""
    value = params.get(key)
    if value is None:
        raise exceptions.MissingParameter(param=key)
    number = _whole(value)
    reason = '%s must be a whole number from 1 to %d, not %r' % (
        key, MAX_HOSTS, value)
    if number is not None and number < 1:
        raise exceptions.MalformedParameter(
            param='min and max (must be greater than or equal to 1)',
            reason=reason)
    if number is None or number > MAX_HOSTS:
        raise exceptions.MalformedParameter(param=key, reason=reason)
    return number


#: First stretch of time the availability search reads; it grows fourfold
#: until enough windows are certain, then reads everything.
SEARCH_HORIZON = datetime.timedelta(days=7)
SEARCH_HORIZON_MAX = datetime.timedelta(days=3 * 365)


def search_windows(ctx, matching, count, duration, earliest,
                   latest_end=None, limit=5, exclude_reservation=None):
    """``climate.scheduling.hosts.free_windows`` over the allocations of
    the hosts ``matching`` (ids).

    Reads the allocations of a growing horizon rather than all of them:
    allocations starting after the horizon cannot change a window that
    closes before it.  The search stops once ``limit`` windows are found,
    or once a stretch of feasible starts runs into the horizon: its start
    is certain, its end is not, so its ``latest_start`` is None.

    :returns: ``(windows, searched_until)``; ``searched_until`` is None
        when every allocation was read.
    """
    horizon = max(SEARCH_HORIZON, 4 * duration)
    while True:
        bound = earliest + horizon if horizon < SEARCH_HORIZON_MAX else None
        if bound is not None and latest_end is not None and \
                bound >= latest_end:
            bound = None
        last = latest_end if bound is None else bound
        busy = db_hosts.busy_intervals(ctx, matching, earliest, last,
                                       exclude_reservation)
        windows = sched.free_windows(matching, busy, count, duration,
                                     earliest, last, limit)
        if bound is None:
            return windows, None
        if windows and windows[-1]['latest_start'] + duration >= bound:
            windows[-1]['latest_start'] = None
            return windows, bound
        if len(windows) >= limit:
            return windows, bound
        horizon *= 4


class PhysicalHostPlugin(base.ResourcePlugin):
    resource_type = RESOURCE_TYPE
    description = 'Whole compute hosts, chosen by count and properties.'

    def __init__(self, owner=None):
        super().__init__(owner)
        self._backend = None
        self._matches = host_filters.MatchCache()

    @property
    def acts_in_cloud(self):
        return self.backend.acts_in_cloud

    @property
    def backend(self):
        """The inventory backend (``[hosts] inventory``), made on first
        use so that loading the plugin never calls a cloud."""
        if self._backend is None:
            self._backend = backends.load(CONF)
        return self._backend

    @property
    def heal_interval(self):
        """Seconds between two :meth:`heal` runs (0: never).  The static
        inventory never reports a host down: nothing to heal there, but
        for hosts the power planner could not wake."""
        if CONF.hosts.inventory == 'static' and not CONF.power.enabled:
            return 0
        return CONF.hosts.healing_interval

    # -- parameters ----------------------------------------------------------

    def validate(self, params):
        """Check ``min``/``max``, the filters and ``before_end``.

        :returns: the parameters with ``min``/``max`` as integers and the
            filters as given (strings), every key present.
        """
        unknown = sorted(set(params) - set(PARAMS))
        if unknown:
            raise exceptions.InvalidInput(
                reason='%s: not a physical:host parameter; accepted: %s' % (
                    ', '.join(unknown), ', '.join(PARAMS)))
        low, high = _count(params, 'min'), _count(params, 'max')
        if low > high:
            raise exceptions.InvalidRange(min=low, max=high)
        out = {'min': low, 'max': high}
        for key in ('hypervisor_properties', 'resource_properties'):
            value = params.get(key)
            if value is not None and not isinstance(value, str):
                raise exceptions.MalformedRequirements(
                    rqrms=value,
                    reason='%s must be a JSON filter in a string, e.g. '
                           '\'["=", "$memory_mb", "4096"]\'' % key)
            out[key] = value or ''
        for key in ('hypervisor_properties', 'resource_properties'):
            try:
                host_filters.parse_filters({key: out[key]})
            except exceptions.InvalidInput as exc:
                raise exceptions.MalformedRequirements(
                    rqrms=out[key], reason=exc.kwargs.get('reason') or
                    exc.message)
        before_end = params.get('before_end') or 'default'
        if not isinstance(before_end, str) or \
                before_end not in BEFORE_END_ACTIONS:
            raise exceptions.MalformedParameter(
                param='before_end',
                reason="before_end must be 'default' or 'snapshot', not %r" %
                (before_end,))
        out['before_end'] = before_end
        return out

    # -- allocation -----------------------------------------------------------

    def matching(self, ctx, params):
        """Ids of the reservable hosts matching the filters of ``params``
        (cached per inventory version: see
        :class:`climate.plugins.host_filters.MatchCache`)."""
        return self._matches.get(ctx, params)

    def _allocate(self, ctx, reservation_id, lease_id, matching, start, end,
                  need, want, exclude_reservation=None, skip=(), what=None,
                  needed=None):
        """Pick, lock, re-check and write up to ``want`` (at least
        ``need``) hosts over ``[start, end)``; returns their ids.  Fewer
        than ``need`` to be had: NotEnoughHosts (:meth:`_not_enough`, for
        ``needed`` hosts in all, ``need`` unless given), counted with the
        choice's own predicates, the hosts lost under lock to a concurrent
        writer left out."""
        accepted = []
        skip = set(skip)
        lost_to_others = set()
        # the ledger rows locked on the way, so that booking the hosts
        # found free under that lock does not lock and read them again
        inventories = {}
        for _round in range(ALLOCATION_ROUNDS):
            missing = want - len(accepted)
            if missing <= 0:
                break
            awake_first = self._awake_first(start)
            rows, free = db_hosts.free_candidates(
                ctx, matching, start, end,
                missing + AWAKE_LOOKAHEAD if awake_first else missing,
                sched.fit_horizon(start, end), exclude_reservation,
                skip | set(accepted))
            if free + len(accepted) < need or not rows:
                break
            # ranked by the choice rule already
            chosen = [row[0] for row in rows]
            if awake_first:
                chosen = sched.awake_first(
                    chosen, db_power.asleep(ctx, chosen))[:missing]
            locked = db_hosts.lock_hosts(ctx, chosen, inventories)
            lost = (set(chosen) - locked) | db_hosts.overlapping_hosts(
                ctx, locked, start, end, exclude_reservation)
            accepted.extend(h for h in chosen if h not in lost)
            skip |= lost
            lost_to_others |= lost
            if not lost:
                break
        if len(accepted) < need:
            raise self._not_enough(ctx, matching, needed or need, start,
                                   end, exclude_reservation, what,
                                   taken=lost_to_others)
        # with a reservation left out (an update), its own bookings on
        # the hosts were not seen: let the ledger read them
        db_hosts.allocations_add(
            ctx, reservation_id, lease_id, accepted, start, end,
            locked=inventories if exclude_reservation is None else None)
        return accepted

    @staticmethod
    def _awake_first(start):
        """Whether a window starting at ``start`` prefers hosts that are
        on: the power planner runs, and the window starts before a host
        asleep now could be woken for it."""
        if not CONF.power.enabled:
            return False
        lead = plan_power.default_lead(
            datetime.timedelta(seconds=CONF.power.default_boot_time),
            datetime.timedelta(seconds=CONF.power.wake_margin))
        return start < dates.utcnow() + lead

    def _not_enough(self, ctx, matching, count, start, end,
                    exclude_reservation=None, what=None, taken=()):
        """NotEnoughHosts saying how many match, how many are free and the
        earliest start with ``count`` free for as long.

        "Free" is what the choice offers (``db_hosts.free_hosts``: the
        statements of ``free_candidates``): reservable and enabled, no
        booking over the window; ``taken``, hosts the allocation found
        booked under lock (a concurrent writer's, which this
        transaction's snapshot may not show), are not.  So a refusal
        never counts as free a host the choice would not take."""
        free = [h for h in db_hosts.free_hosts(ctx, matching, start, end,
                                               exclude_reservation)
                if h not in set(taken)]
        usable = set(db_hosts.usable_hosts(ctx, matching))
        if len(usable) < count:
            later = 'never: only %d host(s) match' % len(usable)
            outlook = 'Never %d: only %d host(s) match and are usable.' % (
                count, len(usable))
        else:
            windows, _until = search_windows(
                ctx, sorted(usable), count, end - start, start, limit=1,
                exclude_reservation=exclude_reservation)
            when = windows[0]['start'] if windows else None
            later = ('from %s UTC' % common.fmt(when) if when else
                     'not within the calendar')
            outlook = '%d would %sbe free for as long %s.' % (
                count, '' if when else 'not ', later)
        notes = ''
        if len(usable) < len(set(matching)):
            notes += (' %d of them are down, disabled or not reservable.' %
                      (len(set(matching)) - len(usable)))
        if len(free) >= count:
            # free by the committed bookings, booked under lock meanwhile
            notes += (' Concurrent requests took the free ones meanwhile; '
                      'try again.')
        return exceptions.NotEnoughHosts(
            reason='%s%d host(s) match the filters and %d of them are free '
                   'from %s to %s UTC; %d needed. %s%s' % (
                       (what + ': ') if what else '', len(matching),
                       len(free), common.fmt(start), common.fmt(end), count,
                       outlook, notes),
            matching=len(matching), free=len(free),
            earliest_start=later)

    def reserve(self, ctx, lease, reservation):
        """Allocate ``min``..``max`` hosts over the lease window (best fit);
        NotEnoughHosts (409) when fewer than ``min`` are free."""
        start = lease.start_date
        end = lease.end_date
        matching = self.matching(ctx, reservation.params)
        got = self._allocate(ctx, reservation.id, lease.id, matching,
                             start, end, reservation.params['min'],
                             reservation.params['max'])
        LOG.debug('Reservation %s holds hosts %s', reservation.id, got)
        return reservation.id

    def book_free(self, ctx, lease, reservation, count):
        """A best-effort lease that hunts the rest: book ``count`` free
        matching hosts over the lease window (none when 0); NotEnoughHosts
        when they were taken meanwhile."""
        if count <= 0:
            return []
        start = lease.start_date
        end = lease.end_date
        matching = self.matching(ctx, reservation.params)
        return self._allocate(ctx, reservation.id, lease.id, matching,
                              start, end, count, count)

    def book_hosts(self, ctx, lease, reservation, host_ids, start):
        """Book the hosts ``host_ids`` (freed by a best-effort hunt) into
        the reservation from ``start`` to the lease's end; NotEnoughHosts
        when one of them is taken."""
        end = lease.end_date
        return self._allocate(ctx, reservation.id, lease.id,
                              list(host_ids), start, end, len(host_ids),
                              len(host_ids))

    def update(self, ctx, old_lease, lease, reservation, new_params):
        """Move, resize or re-filter a reservation; the lease stays as it
        was (the transaction rolls back) when that is impossible.

        Pending: hosts that still match and stay free are kept, the others
        released, and new ones picked as needed.  Active: the start is
        fixed and the hosts carry servers, so every current host must stay
        free over the new window (else 409 with the longest extension
        possible), the filters cannot change and ``max`` cannot drop below
        the hosts held; missing hosts are added and joined to the
        reservation's aggregate at once.
        """
        res_id = reservation.id
        old_start = old_lease.start_date
        old_end = old_lease.end_date
        start = lease.start_date
        end = lease.end_date
        params = dict(new_params)
        low, high = params['min'], params['max']
        refiltered = any(params.get(k, '') != reservation.params.get(k, '')
                         for k in ('hypervisor_properties',
                                   'resource_properties'))
        matching = self.matching(ctx, params)
        current = [a.computehost_id
                   for a in db_hosts.allocations_of(ctx, res_id)]
        active = reservation.status == states.RES_ACTIVE

        locked = db_hosts.lock_hosts(ctx, current) if current else set()
        # an active lease's past is settled: only what is to come can clash
        since = max(start, dates.utcnow()) if active else start
        clash = db_hosts.overlapping_hosts(ctx, current, since, end,
                                           res_id) if current else set()
        if active:
            if refiltered:
                raise exceptions.Conflict(
                    reason='the filters of an active reservation cannot '
                           'change; its hosts are in use')
            if len(current) > high:
                raise exceptions.Conflict(
                    reason='reservation %s holds %d hosts; an active '
                           'reservation cannot shrink below them (max %d)' %
                    (res_id, len(current), high))
            if clash:
                raise self._longest_extension(ctx, res_id, current, old_end,
                                              end)
            keep = current
        else:
            still = set(matching) if refiltered else set(current)
            keep = [h for h in current
                    if h in locked and h in still and h not in clash]
            keep = keep[:high]
        dropped = [h for h in current if h not in keep]
        if dropped:
            db_hosts.allocations_remove(ctx, res_id, dropped)
        if (start, end) != (old_start, old_end):
            db_hosts.allocations_move(
                ctx, res_id, None if start == old_start else start, end)
        added = []
        if len(keep) < high:
            need = max(0, low - len(keep))
            # hosts added to an active lease are held from now on
            added = self._allocate(ctx, res_id, lease.id, matching, since,
                                   end, need, high - len(keep),
                                   exclude_reservation=res_id,
                                   skip=set(current), needed=low,
                                   what='cannot %s reservation %s' % (
                                       'grow' if active else 'move', res_id))
        if active and added:
            self.backend.replace(res_id, lease.project_id, [],
                                 [host_filters.host_facts(h) for h in
                                  db_hosts.hosts_by_ids(ctx, added)])
        return params

    def _longest_extension(self, ctx, res_id, host_ids, old_end, wanted_end):
        # any booking of another reservation, instance slots included
        busy = db_hosts.busy_intervals(ctx, host_ids, old_end,
                                       exclude_reservation=res_id)
        limits = [sched.free_until(busy.get(h, ()), old_end)
                  for h in host_ids]
        limits = [x for x in limits if x is not None]
        latest = min(limits) if limits else None
        return exceptions.NotEnoughHosts(
            reason='reservation %s cannot run until %s UTC: its hosts are '
                   'reserved by other leases from %s UTC; it can end at '
                   '%s UTC at the latest' % (
                       res_id, common.fmt(wanted_end), common.fmt(latest),
                       common.fmt(latest)))

    def delete(self, ctx, lease, reservation):
        """Release the reservation's hosts."""
        db_hosts.allocations_remove(ctx, reservation.id)

    # -- events ---------------------------------------------------------------

    def _hosts(self, ctx, reservation_id):
        ids = [a.computehost_id
               for a in db_hosts.allocations_of(ctx, reservation_id)]
        return [host_filters.host_facts(h)
                for h in db_hosts.hosts_by_ids(ctx, ids)]

    def in_use(self, ctx, lease, reservation):
        """A server on any of the reservation's hosts (the backend's
        reading; None from a backend that knows no servers)."""
        if not self.backend.reports_servers:
            return None
        return any(self.backend.host_has_servers(host)
                   for host in self._hosts(ctx, reservation.id))

    def on_start(self, ctx, lease, reservation, event):
        """Hand the hosts to the project (backend ``start``)."""
        self.backend.start(reservation.id, lease.project_id,
                           self._hosts(ctx, reservation.id))

    def before_end(self, ctx, lease, reservation, event):
        """``before_end: snapshot``: snapshot the servers on the hosts."""
        if reservation.params.get('before_end') == 'snapshot':
            self.backend.snapshot(reservation.id,
                                  self._hosts(ctx, reservation.id))

    def on_end(self, ctx, lease, reservation, event=None):
        """Take the hosts back (backend ``end``) and free them."""
        self.backend.end(reservation.id,
                         self._hosts(ctx, reservation.id))
        db_hosts.allocations_remove(ctx, reservation.id)

    # -- power ----------------------------------------------------------------

    @property
    def waits_at_start(self):
        return CONF.power.enabled

    def start_waits_for(self, ctx, lease, reservation, now):
        """The hosts the power planner has off or waking: the lease gets
        its hosts once they are up.  Not past ``[power] wake_grace`` after
        its start: healing has replaced such a host by then, or flagged
        the lease, and the start goes on with what it holds."""
        if not CONF.power.enabled or now >= lease.start_date + \
                datetime.timedelta(seconds=CONF.power.wake_grace):
            return None
        asleep = self._asleep_text(ctx, reservation, lease, now)
        return asleep and '%s to boot' % asleep

    def start_gave_up_on(self, ctx, lease, reservation, now):
        """Past ``[power] wake_grace``, the hosts of the reservation still
        off or waking, which its start no longer waits for."""
        if not CONF.power.enabled or now < lease.start_date + \
                datetime.timedelta(seconds=CONF.power.wake_grace):
            return None
        asleep = self._asleep_text(ctx, reservation, lease, now)
        return asleep and '%s did not boot within [power] wake_grace ' \
            '(%d s)' % (asleep, CONF.power.wake_grace)

    @staticmethod
    def _asleep_text(ctx, reservation, lease, now):
        """The hosts the reservation holds that the planner has off or
        waking, as the reasons name them ("host(s) c1 (waking), ..."), or
        None."""
        held = [a.computehost_id
                for a in db_hosts.allocations_of(ctx, reservation.id)
                if a.end_date > now and
                a.start_date <= max(now, lease.start_date)]
        asleep = db_power.asleep(ctx, held)
        if not asleep:
            return None
        # a reservation may hold thousands: the reason names a few
        named = sorted(asleep)[:WAITING_NAMED]
        names = {row.id: row.hypervisor_hostname
                 for row in db_hosts.hosts_by_ids(ctx, named)}
        more = len(asleep) - len(named)
        return 'host(s) %s%s' % (', '.join(
            '%s (%s)' % (names.get(host_id, host_id), asleep[host_id])
            for host_id in named), ' and %d more' % more if more else '')

    # -- healing --------------------------------------------------------------

    def heal(self, ctx):
        """Replace hosts that went down inside pending or active
        reservations; flag those that cannot be healed.

        Hosts the backend reports down, and hosts the power planner has
        not woken ``[power] wake_grace`` after the booking start it woke
        them for, become unreservable; each of their allocations still
        to come moves to a free matching host (joined to
        the aggregate at once when the reservation is active) and the
        reservation gets ``resources_changed``; without such a host it gets
        ``missing_resources`` and its lease ``degraded``.  Hosts back up
        become reservable again, which clears the flag of reservations
        left with no down host.  Returns the ids of the reservations it
        changed.
        """
        now = dates.utcnow()
        # every host, not only those in use: a replacement must be up too
        # (one backend call whatever the count: Nova lists its services)
        watched = {h.id: h for h in db_hosts.all_hosts(ctx)}
        if not watched:
            return []
        down_names = {h['hypervisor_hostname'] for h in
                      self.backend.down_hosts(
                          [host_filters.host_facts(h)
                           for h in watched.values()])}
        down = {i for i, h in watched.items()
                if h.hypervisor_hostname in down_names}
        if CONF.power.enabled:
            late = db_power.late_wakes(ctx, now - datetime.timedelta(
                seconds=CONF.power.wake_grace)) & set(watched)
            if late - down:
                LOG.warning('Hosts %s did not wake in time for their '
                            'bookings: healed as down hosts',
                            ', '.join(str(i) for i in sorted(late - down)))
            down |= late
        with db_api.writer(ctx):
            db_hosts.host_set_reservable(ctx, sorted(down), False)
            db_hosts.host_set_reservable(
                ctx, sorted(set(watched) - down), True)
        changed = set()
        for alloc, res, lease in db_hosts.allocations_on_hosts(
                ctx, sorted(down), now):
            try:
                if self._heal_allocation(ctx, alloc.id, res.id, lease.id,
                                         alloc.computehost_id, now):
                    changed.add(res.id)
            except Exception:
                LOG.exception('Could not heal reservation %s (host %s)',
                              res.id, alloc.computehost_id)
        changed |= self._clear_flags(ctx)
        return sorted(changed)

    @db_api.retry_on_deadlock
    def _heal_allocation(self, ctx, alloc_id, res_id, lease_id, old_host,
                         now):
        with db_api.writer(ctx):
            # the lease lock orders healing with this lease's events
            lease = db_api.lease_get(ctx, lease_id, for_update=True)
            if lease.status not in states.LEASE_HOLDING:
                return False
            res = next(r for r in lease.reservations if r.id == res_id)
            allocs = db_hosts.allocations_of(ctx, res_id)
            alloc = next((a for a in allocs if a.id == alloc_id), None)
            if alloc is None or alloc.computehost_id != old_host:
                return False
            start = max(alloc.start_date, now)
            new = self._swap_to_free(ctx, res, alloc, allocs, start)
            if new is None:
                if not res.missing_resources:
                    res.missing_resources = True
                    lease.degraded = True
                    LOG.warning('Reservation %s lost host %s and no free '
                                'host matches: missing resources', res_id,
                                old_host)
                    return True
                return False
            if res.status == states.RES_ACTIVE:
                rows = {h.id: h for h in db_hosts.hosts_by_ids(
                    ctx, [old_host, new])}
                self.backend.replace(res_id, lease.project_id,
                                     [host_filters.host_facts(rows[old_host])],
                                     [host_filters.host_facts(rows[new])])
            res.resources_changed = True
            LOG.info('Reservation %s: host %s replaced by %s', res_id,
                     old_host, new)
            db_api.flush(ctx)
            return True

    def _swap_to_free(self, ctx, res, alloc, allocs, start, avoid=()):
        """Move ``alloc`` of ``res`` (whose allocations are ``allocs``)
        from ``start`` to a free matching host that is none of its own
        nor of ``avoid``, in the caller's transaction; returns the new
        host's id, None when no host is free."""
        matching = self.matching(ctx, res.params)
        skip = {a.computehost_id for a in allocs} | set(avoid)
        new = next(self._free_hosts(ctx, matching, start, alloc.end_date,
                                    skip), None)
        if new is not None:
            db_hosts.allocation_swap(ctx, alloc.id, alloc.computehost_id,
                                     new, start)
        return new

    def move_off(self, ctx, lease, res, alloc_id, avoid):
        """Move allocation ``alloc_id`` of ``res`` (a reservation of the
        locked ``lease`` that has not started) whole to a free matching
        host outside ``avoid`` (a maintenance window's hosts); returns
        the new host's id, None when no host is free."""
        allocs = db_hosts.allocations_of(ctx, res.id)
        alloc = next((a for a in allocs if a.id == alloc_id), None)
        if alloc is None:
            return None
        new = self._swap_to_free(ctx, res, alloc, allocs, alloc.start_date,
                                 avoid)
        if new is not None:
            res.resources_changed = True
            LOG.info('Reservation %s: host %s moved to %s (maintenance)',
                     res.id, alloc.computehost_id, new)
        return new

    def free_host_for(self, ctx, res, alloc_id, avoid):
        """The host :meth:`move_off` would likely take (read only: no lock,
        so a concurrent booking may take it first), or None."""
        allocs = db_hosts.allocations_of(ctx, res.id)
        alloc = next((a for a in allocs if a.id == alloc_id), None)
        if alloc is None:
            return None
        rows, _free = db_hosts.free_candidates(
            ctx, self.matching(ctx, res.params), alloc.start_date,
            alloc.end_date, 1, sched.fit_horizon(alloc.start_date,
                                                 alloc.end_date),
            exclude_hosts={a.computehost_id for a in allocs} | set(avoid))
        return rows[0][0] if rows else None

    def _free_hosts(self, ctx, matching, start, end, skip):
        """Best-fitting free hosts over the window, locked and re-checked,
        best first (generator)."""
        rows, _free = db_hosts.free_candidates(
            ctx, matching, start, end, HEAL_CANDIDATES,
            sched.fit_horizon(start, end), exclude_hosts=skip)
        for host_id, _prev, _next in rows:
            if db_hosts.lock_hosts(ctx, [host_id]) and not \
                    db_hosts.overlapping_hosts(ctx, [host_id], start, end):
                yield host_id

    def _clear_flags(self, ctx):
        """Clear missing_resources where no allocation is on a down host."""
        down = {h.id for h in db_hosts.unreservable_hosts(ctx)}
        cleared = set()
        for res, lease in db_hosts.flagged_reservations(ctx):
            hosts = {a.computehost_id
                     for a in db_hosts.allocations_of(ctx, res.id)}
            if hosts & down:
                continue
            with db_api.writer(ctx):
                locked = db_api.lease_get(ctx, lease.id, for_update=True)
                for r in locked.reservations:
                    if r.id == res.id:
                        r.missing_resources = False
                locked.degraded = any(r.missing_resources
                                      for r in locked.reservations)
            cleared.add(res.id)
        return cleared
