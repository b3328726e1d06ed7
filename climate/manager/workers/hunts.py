"""Best-effort leases: the hunt for hosts outside the inventory.

A ``best_effort`` lease (``climate.lease.types``) asks for
compute hosts now.  When the inventory has enough free hosts it is an
``immediate`` lease.  When it has too few, and the inventory is Nova's,
Climate looks at the cloud's other hypervisors, those it does not manage:
a host whose only obstacle is other projects' servers can be freed by
live-migrating them elsewhere (``climate.scheduling.evacuation`` decides,
``climate.plugins.physical_host.evacuation`` talks to Nova).

1. At the create (:meth:`Hunter.plan`): a plan for the missing number of
   hosts; no plan, the create's 409 names why, and nothing is written or
   touched.  A plan: the lease is written ``IN_PROGRESS`` with the free
   hosts of the inventory booked, and the plan, its deadline (``[leases]
   best_effort_timeout`` from now) in ``leases.hunt``; the answer is 201.
2. A :class:`HuntWorker` in each manager makes passes under the
   ``lease_hunts`` work lock (``climate.db.work_locks``: one
   manager at a time; a manager that dies releases it with its database
   connection and the next pass of another manager takes the hunt over,
   from the plan stored on the lease: every step is idempotent).  For a
   hunting lease it disables the compute services of the hosts to free,
   so that Nova places no new server there, runs the plan until the
   deadline, registers the freed hosts into the inventory, *borrowed*
   (``hunt['borrowed']``), books them into the reservation, re-enables
   their compute services (the hosts are Climate's from now on: its
   filter keeps unreserved servers off them as off any reservable host)
   and makes the lease STARTING with its events; the event engine starts
   it (ACTIVE).  A pass that did not free every host tries again at the
   next pass, until the deadline.
3. The deadline passed: ``TIMEDOUT``; the hosts registered are removed
   from the inventory again, the compute services re-enabled, the
   bookings released, the reason on the lease.
4. When a lease that borrowed hosts ends or is deleted, its borrowed
   hosts are removed from the inventory (:func:`give_back_borrowed`),
   unless another lease booked one meanwhile (it stays, logged).

No database transaction is open while servers move: the lease is read,
then the plan runs, then each step writes in a transaction of its own.
"""

import datetime

from oslo_config import cfg
from oslo_log import log as logging
from oslo_utils import timeutils

from climate import context as climate_context
from climate.db import api as db_api
from climate.db import hosts as db_hosts
from climate.db import models
from climate.db import work_locks
from climate import exceptions
from climate.lease import events as lease_events
from climate.lease import input as lease_input
from climate.manager.workers import base as worker_base
from climate.notifications import lease as lease_notifications
from climate.plugins.physical_host.backends import nova as nova_backend
from climate.plugins.physical_host import evacuation
from climate.plugins.physical_host import inventory as host_inventory
from climate.scheduling import evacuation as planner
from climate import states

LOG = logging.getLogger(__name__)
CONF = cfg.CONF

LOCK_NAME = 'lease_hunts'
HOST_TYPE = 'physical:host'
#: The reason a hunt gives Nova for the compute services it disables (the
#: healing pass does not read such a service as down).
DISABLED_REASON = nova_backend.HUNT_DISABLED_REASON
#: What a hunting lease's reason says before the outcome of its last
#: unfinished pass.
LAST_PASS = '; last pass at '


def host_name(row):
    """The name Nova's services and servers know a registered host by."""
    return row.service_name or row.hypervisor_hostname


def plan_to_json(plan):
    """A ``climate.scheduling.evacuation.Plan`` as JSON."""
    return {'hosts': list(plan.hosts),
            'waves': [[list(move) for move in wave] for wave in plan.waves]}


def plan_from_json(data):
    """The ``Plan`` :func:`plan_to_json` wrote."""
    waves = [[planner.Move(*move) for move in wave] for wave in data['waves']]
    return planner.Plan(list(data['hosts']),
                        [move for wave in waves for move in wave], waves)


class NovaEvacuation:
    """The cloud side of a hunt, on Climate's service session; the unit
    tests replace it with a fake of the same methods."""

    def __init__(self, conf=None):
        self._conf = conf
        self._clients = None

    @property
    def clients(self):
        """``(nova, placement)``, made on first use."""
        if self._clients is None:
            self._clients = evacuation.service_clients(self._conf)
        return self._clients

    def plan(self, project_id, count, registered):
        """A plan freeing ``count`` hosts among the hypervisors not in
        ``registered`` (names of the inventory's hosts), their servers
        going to the other hypervisors outside the inventory."""
        nova, placement = self.clients
        workers = CONF.hosts.max_parallel
        with nova_backend.Calls('listing hypervisors'):
            hypervisors = nova.hypervisors.list(detailed=True)
        names = sorted({(getattr(h, 'service', None) or {}).get('host')
                        for h in hypervisors} - {None} - set(registered))
        if not names:
            return planner.Refusal(
                'the cloud has no compute host outside Climate\'s '
                'inventory', 0, {})
        found = evacuation.candidates(nova, names, workers)
        # a candidate receives only when it is not chosen (the planner)
        room = evacuation.receivers(nova, placement, set(registered),
                                    workers)
        return planner.plan(found, room, count, project_id,
                            parallel=workers)

    def _services(self, names):
        nova, _placement = self.clients
        with nova_backend.Calls('listing compute services'):
            services = nova.services.list(binary='nova-compute')
        return nova, [s for s in services if s.host in set(names)]

    def close(self, names, reason):
        """Disable the compute services of ``names``: Nova's scheduler
        places no new server there (migrations out still run)."""
        nova, services = self._services(names)
        for service in services:
            if service.status != 'disabled':
                with nova_backend.Calls(
                        'disabling compute service of %s' % service.host):
                    nova.services.disable_log_reason(service.id, reason)

    def reopen(self, names):
        """Enable the compute services of ``names`` again."""
        nova, services = self._services(names)
        for service in services:
            if service.status == 'disabled':
                with nova_backend.Calls(
                        'enabling compute service of %s' % service.host):
                    nova.services.enable(service.id)

    def run(self, plan, timeout):
        """``evacuation.run_plan`` within ``timeout`` seconds."""
        nova, _placement = self.clients
        return evacuation.run_plan(nova, plan, timeout,
                                   workers=CONF.hosts.max_parallel)


class Hunter:
    """Plans and carries out hunts; one per manager, shared by its lease
    service (the plan at a create) and its :class:`HuntWorker`."""

    def __init__(self, plugins, layer=None):
        """:param layer: the cloud side (:class:`NovaEvacuation` when
            None, made on first use)."""
        self.plugins = plugins
        self._layer = layer

    @property
    def layer(self):
        if self._layer is None:
            self._layer = NovaEvacuation(CONF)
        return self._layer

    @staticmethod
    def active():
        """Whether a hunt can happen: only Nova's inventory has hosts
        outside it to free (the static one has no cloud)."""
        return CONF.hosts.inventory == 'nova'

    def inventory(self):
        return host_inventory.Inventory(self.plugins.get(HOST_TYPE))

    def plan(self, ctx, project_id, count):
        """A plan (or Refusal) freeing ``count`` hosts for the project."""
        registered = [host_name(h) for h in db_hosts.all_hosts(ctx)]
        return self.layer.plan(project_id, count, registered)

    # -- one hunt --------------------------------------------------------

    def hunt(self, ctx, lease_id, leases):
        """One pass on a hunting lease; returns its status afterwards
        (None when it is gone)."""
        lease = db_api.lease_get(ctx, lease_id)
        if lease.status != states.HUNTING:
            return lease.status
        hunt = dict(lease.hunt or {})
        plan = plan_from_json(hunt['plan'])
        deadline = datetime.datetime.fromisoformat(hunt['deadline'])
        left = (deadline - timeutils.utcnow()).total_seconds()
        if left <= 0:
            return self.time_out(ctx, lease_id, leases, hunt.get('note') or
                                 'the hosts were not freed in time')
        began = timeutils.utcnow()
        try:
            self.layer.close(plan.hosts, DISABLED_REASON % lease_id)
            outcome = self.layer.run(plan, left)
        except exceptions.ClimateException as exc:
            # Nova away: the next pass tries again until the deadline
            LOG.warning('Hunt of lease %s: %s', lease_id, exc)
            self._note(ctx, lease_id, str(exc))
            return states.HUNTING
        took = (timeutils.utcnow() - began).total_seconds()
        if not outcome.complete:
            note = 'servers still on %s%s' % (
                ', '.join(sorted(outcome.leftovers)),
                '; failed: %s' % '; '.join(
                    '%s (%s)' % item for item in sorted(
                        outcome.failed.items())) if outcome.failed else '')
            LOG.info('Hunt of lease %s incomplete after %.1f s: %s',
                     lease_id, took, note)
            if timeutils.utcnow() >= deadline:
                return self.time_out(ctx, lease_id, leases, note)
            self._note(ctx, lease_id, note)
            return states.HUNTING
        LOG.info('Hunt of lease %s freed %s in %.1f s', lease_id,
                 ', '.join(plan.hosts), took)
        try:
            borrowed = self._register(ctx, lease_id, hunt, plan.hosts)
            view = leases.hunted(ctx, lease_id, borrowed)
        except exceptions.ClimateException as exc:
            LOG.warning('Hunt of lease %s: taking the freed hosts failed: '
                        '%s', lease_id, exc)
            if timeutils.utcnow() >= deadline:
                return self.time_out(ctx, lease_id, leases, str(exc))
            self._note(ctx, lease_id, str(exc))
            return states.HUNTING
        # the hosts are Climate's now: its filter guards them
        try:
            self.layer.reopen(plan.hosts)
        except exceptions.ClimateException as exc:
            # the lease is granted; the give-back at its end enables them
            LOG.error('Hunt of lease %s: cannot enable the compute services '
                      'of %s again: %s', lease_id, ', '.join(plan.hosts), exc)
        if view is None:
            return None
        leases.notifier.send(ctx, lease_notifications.UPDATE, view)
        leases.wake()
        return view['status']

    def _register(self, ctx, lease_id, hunt, names):
        """Register the freed hosts (borrowed), each recorded on the lease
        in a transaction of its own; returns their ids."""
        known = {host_name(h): h.id for h in db_hosts.all_hosts(ctx)}
        borrowed = list(hunt.get('borrowed') or [])
        for name in names:
            if name in known:
                if known[name] not in borrowed:
                    # in the inventory, not by this hunt: not ours to take
                    raise exceptions.Conflict(
                        reason='host %s was registered meanwhile' % name)
                continue
            host = self.inventory().create(ctx, {'name': name})
            # the row's id (the view shows it as text)
            borrowed.append(int(host['id']))
            self._save(ctx, lease_id, borrowed=borrowed)
        return borrowed

    @db_api.retry_on_deadlock
    def _save(self, ctx, lease_id, **changes):
        with db_api.writer(ctx):
            lease = db_api.lease_get(ctx, lease_id, for_update=True)
            lease.hunt = dict(lease.hunt or {}, **changes)
            if 'note' in changes and lease.status == states.HUNTING:
                # the user (and a test waiting on the lease) sees what the
                # hunt is doing, not only that it has not finished
                plan = lease.status_reason or ''
                plan = plan.split(LAST_PASS)[0]
                lease.status_reason = '%s%s%s UTC: %s' % (
                    plan, LAST_PASS, timeutils.utcnow().strftime('%H:%M:%S'),
                    changes['note'])

    def _note(self, ctx, lease_id, note):
        try:
            self._save(ctx, lease_id, note=note[:2000])
        except exceptions.LeaseNotFound:
            pass

    def time_out(self, ctx, lease_id, leases, reason):
        """TIMEDOUT: every host the hunt took given back, the bookings
        released; returns the status."""
        lease = db_api.lease_get(ctx, lease_id)
        hunt = dict(lease.hunt or {})
        give_back_borrowed(ctx, self, hunt.get('borrowed') or [])
        self.layer.reopen(hunt['plan']['hosts'])
        view = leases.timed_out(
            ctx, lease_id, 'best effort: the hosts were not freed by %s UTC '
            '([leases] best_effort_timeout): %s; every host taken was given '
            'back' % (hunt['deadline'][:19].replace('T', ' '), reason))
        if view is not None:
            LOG.info('Lease %s TIMEDOUT: %s', lease_id,
                     view['status_reason'])
            leases.notifier.send(ctx, lease_notifications.UPDATE, view)
            leases.released()
            return view['status']
        return None


def give_back_borrowed(ctx, hunter, host_ids):
    """Remove the borrowed hosts from the inventory and make sure their
    compute services are enabled; one another lease booked meanwhile (or
    one with servers) stays in the inventory, logged."""
    if not host_ids or hunter is None:
        return
    inventory = hunter.inventory()
    names = [host_name(h) for h in db_hosts.hosts_by_ids(ctx, host_ids)]
    for host_id in host_ids:
        try:
            inventory.delete(ctx, host_id)
            LOG.info('Borrowed host %s given back', host_id)
        except exceptions.NotFound:
            continue  # given back already
        except exceptions.ClimateException as exc:
            LOG.warning('Borrowed host %s stays in the inventory: %s',
                        host_id, exc)
    if names:
        try:
            # enabled at the hunt's end already, unless Nova was away then
            hunter.layer.reopen(names)
        except exceptions.ClimateException as exc:
            LOG.error('Cannot enable the compute services of %s again: %s',
                      ', '.join(names), exc)


def borrowed_of(ctx, lease_id):
    """The ids of the hosts a lease borrowed (none for most leases)."""
    with db_api.reader(ctx) as session:
        hunt = session.query(models.Lease.hunt).filter(
            models.Lease.id == lease_id).scalar()
    return list((hunt or {}).get('borrowed') or [])


class HuntWorker(worker_base.Worker):
    """A manager's thread that hunts hosts for best-effort leases; woken
    when a lease hunts.  A pass stopped midway leaves its hunts to the
    next pass, here or in another manager."""

    name = 'climate-hunts'
    failure = 'Pass over the hunting leases failed'
    pause = 0  # the next pass is a poll interval away anyway

    def __init__(self, leases, hunter):
        super().__init__()
        self.leases = leases
        self.hunter = hunter
        self._ctx = climate_context.admin_context()

    def work(self):
        self.run_pass(self._ctx)
        return False

    def due_in(self):
        return CONF.leases.hunt_poll_interval

    def run_pass(self, ctx):
        """One pass over the hunting leases, oldest first; returns
        ``{lease id: status after}``."""
        done = {}
        if not hunting(ctx):
            return done  # no lock taken while nothing hunts
        # not waited for: a hunt runs for minutes, and the manager that
        # holds it hunts every lease in its pass
        with work_locks.work_lock(LOCK_NAME, wait=False) as held:
            for lease_id in hunting(ctx) if held else ():
                if self._stopping.is_set():
                    break
                try:
                    done[lease_id] = self.hunter.hunt(ctx, lease_id,
                                                      self.leases)
                except exceptions.LeaseNotFound:
                    done[lease_id] = None
        return done


def hunting(ctx):
    """Ids of the IN_PROGRESS leases, oldest first."""
    with db_api.reader(ctx) as session:
        return [row[0] for row in session.query(models.Lease.id).filter(
            models.Lease.status == states.HUNTING).order_by(
                models.Lease.created_at, models.Lease.id)]


def events_now(start, end):
    """The event rows of a lease granted now until ``end`` (a hunt's, a
    waiting lease's): its start, its end and the default before-end
    notice."""
    values = []
    before_end = lease_input.default_before_end(
        start, end, CONF.manager.minutes_before_end_lease)
    for event_type, when in ((lease_events.START, start),
                             (lease_events.END, end),
                             (lease_events.BEFORE_END, before_end)):
        if when is not None:
            values.append(models.Event(
                event_type=event_type, time=when, due_at=when,
                status=states.UNDONE))
    return values
