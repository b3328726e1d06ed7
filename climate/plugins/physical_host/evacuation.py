"""Freeing hosts by live migration: what Nova and Placement say, and the moves.

The Nova side of a best-effort host reservation (the plan itself is
:mod:`climate.scheduling.evacuation`, pure):

1. :func:`candidates` reads the servers of the hosts that could be freed
   (every project's, with their flavor's size) and whether each host's
   nova-compute is up;
2. :func:`receivers` reads what the hosts that may take servers have free,
   from Placement;
3. ``climate.scheduling.evacuation.plan(...)`` decides;
4. :func:`run_plan` live-migrates wave after wave until the deadline and
   says which hosts are now empty.

Calls use Climate's service session (admin in Nova: servers of every
project, hypervisors, live migration; a reader of Placement) at Nova
microversion :data:`MICROVERSION`: 2.47 embeds the flavor's size in a
server, 2.30 lets a live migration name its target *and* go through
Nova's scheduler (``force=False``), which checks the target again
(capacity, Climate's filter, the compute service) at migration time.
``block_migration='auto'`` lets Nova choose from the storage the two
hosts share.

Nova and Placement errors while reading are raised as
:class:`climate.exceptions.CloudUnavailable`; a move that fails is not
raised but reported in the :class:`Outcome` of :func:`run_plan`.
"""

import collections
import math
import time

from keystoneauth1 import exceptions as ks_exc
from novaclient import exceptions as nova_exc
from oslo_log import log as logging

from climate.clients import nova as nova_clients
from climate.clients import placement as placement_clients
from climate import exceptions
from climate.plugins.physical_host.backends import nova as nova_backend
from climate.scheduling import capacity

LOG = logging.getLogger(__name__)

#: The Nova microversion of every call (see the module).
MICROVERSION = '2.60'
#: Seconds one live migration may take at most (the plan's deadline may
#: cut it shorter).
MIGRATION_TIMEOUT = 300
#: Pause between two looks at a server being migrated.
POLL_INTERVAL = nova_backend.POLL_INTERVAL
#: Statuses of a Nova migration that failed or was given up.
FAILED = ('error', 'failed', 'cancelled')
#: Placement classes -> the planner's resources.
RESOURCES = {'VCPU': 'vcpus', 'MEMORY_MB': 'memory_mb', 'DISK_GB': 'disk_gb'}

TASK_STATE = 'OS-EXT-STS:task_state'
HOST = 'OS-EXT-SRV-ATTR:host'


class MigrationFailed(Exception):
    """One live migration did not end with the server on its target."""

    def __init__(self, server_id, target, reason):
        self.server_id = server_id
        self.target = target
        self.reason = reason
        super().__init__('server %s to %s: %s' % (server_id, target, reason))


class Outcome(collections.namedtuple(
        'Outcome', 'freed moved failed skipped leftovers timed_out')):
    """What :func:`run_plan` did.

    ``freed``: hosts of the plan found empty at the end (plan order);
    ``moved``: ids of the servers now on their target (or deleted by
    their owner meanwhile); ``failed``: ``{server id: reason}``;
    ``skipped``: ids of servers not attempted (the deadline passed, or
    another move from their host had failed); ``leftovers``: ``{host:
    [server ids]}`` of the plan's hosts still holding servers;
    ``timed_out``: the deadline passed before every host was freed.
    """

    @property
    def complete(self):
        """Every host of the plan is empty."""
        return not self.leftovers


def service_clients(conf=None):
    """``(nova, placement)`` on Climate's service session; the Nova client
    at :data:`MICROVERSION`, its calls bounded in time like the nova
    inventory's."""
    with nova_backend.Calls('connecting'):
        nova = nova_clients.bounded_service_client(
            conf, nova_backend.CALL_TIMEOUT, version=MICROVERSION)
    return nova, placement_clients.service_client(conf)


def server_facts(server):
    """The planner's view of a Nova server (microversion >= 2.47): its
    project, status, task and the size it takes on a host.  Local disk
    is the flavor's root disk (none when booted from a volume: no image),
    ephemeral disk and swap (MB, rounded up to GB), as Placement counts
    DISK_GB."""
    flavor = getattr(server, 'flavor', None) or {}
    image = getattr(server, 'image', None)
    disk = None
    if 'disk' in flavor:
        disk = ((flavor['disk'] if image else 0) +
                (flavor.get('ephemeral') or 0) +
                int(math.ceil((flavor.get('swap') or 0) / 1024.0)))
    return {'id': server.id, 'project_id': server.tenant_id,
            'status': server.status,
            'task_state': getattr(server, TASK_STATE, None),
            'vcpus': flavor.get('vcpus'), 'memory_mb': flavor.get('ram'),
            'disk_gb': disk}


def _services_up(nova):
    """{host: (up, enabled)} of the nova-compute services."""
    with nova_backend.Calls('listing compute services'):
        services = nova.services.list(binary='nova-compute')
    return {s.host: (s.state == 'up', s.status == 'enabled')
            for s in services}


def servers_on(nova, host):
    """Every server on ``host`` (all projects, every page)."""
    with nova_backend.Calls('listing servers on %s' % host):
        return nova.servers.list(search_opts={'all_tenants': True,
                                              'host': host}, limit=-1)


def candidates(nova, names, workers=1):
    """The planner's candidates: for each compute host in ``names``, its
    servers (:func:`server_facts`) and ``up`` (its nova-compute is up;
    a disabled one can still send its servers away).  Hosts are read on
    at most ``workers`` threads."""
    services = _services_up(nova)
    outcomes = nova_backend.attempt_all(
        lambda name: [server_facts(s) for s in servers_on(nova, name)],
        names, workers)
    found = []
    for name, servers, exc in outcomes:
        if exc is not None:
            raise exc
        found.append({'name': name, 'servers': servers,
                      'up': services.get(name, (False, False))[0]})
    return found


def free_capacity(inventories, usages):
    """``{vcpus, memory_mb, disk_gb}`` free on a provider: Placement's
    usable capacity, ``(total - reserved) * allocation_ratio``, minus what
    is allocated (never below zero; a class without inventory: zero)."""
    free = {}
    for rc, resource in RESOURCES.items():
        inv = inventories.get(rc)
        if inv is None:
            free[resource] = 0
            continue
        usable = capacity.usable(capacity.Inventory(
            inv['total'], inv.get('reserved', 0),
            inv.get('allocation_ratio', 1.0)))
        free[resource] = max(0, usable - usages.get(rc, 0))
    return free


def receivers(nova, placement, exclude=(), workers=1):
    """``{compute host: free resources}`` of the hosts that may take
    servers: every hypervisor whose nova-compute is up and enabled, but
    those in ``exclude`` (Climate's own hosts, the candidates being freed:
    the caller decides), read from Placement (its compute node provider,
    named after the hypervisor)."""
    with nova_backend.Calls('listing hypervisors'):
        hypervisors = nova.hypervisors.list(detailed=True)
    wanted = {}
    for hyp in hypervisors:
        host = (getattr(hyp, 'service', None) or {}).get('host')
        if host is None or host in exclude:
            continue
        if getattr(hyp, 'state', None) == 'up' and \
                getattr(hyp, 'status', None) == 'enabled':
            wanted[host] = hyp.hypervisor_hostname

    def read(host):
        name = wanted[host]
        try:
            found = placement.provider_by_name(name)
            if found is None:
                return {r: 0 for r in RESOURCES.values()}
            _generation, inventories = placement.inventories(found['uuid'])
            return free_capacity(inventories,
                                 placement.usages(found['uuid']))
        except (placement_clients.PlacementError,
                ks_exc.ClientException) as exc:
            raise exceptions.CloudUnavailable(
                service='Placement', reason='reading the free capacity of '
                '%s: %s' % (name, exc)) from exc

    free = {}
    for host, room, exc in nova_backend.attempt_all(read, sorted(wanted),
                                                    workers):
        if exc is not None:
            raise exc
        free[host] = room
    return free


def _latest_migration(nova, server_id):
    """Nova's last live migration record of the server, or None."""
    with nova_backend.Calls('listing migrations of %s' % server_id):
        found = nova.migrations.list(instance_uuid=server_id,
                                     migration_type='live-migration')
    return max(found, key=lambda m: m.id) if found else None


def live_migrate(nova, server_id, target, timeout=MIGRATION_TIMEOUT):
    """Live-migrate the server to the compute host ``target`` and wait
    until it is there, ACTIVE or PAUSED again, with no task.

    A server already on ``target`` is a success (a retried run), and so is
    a server its owner deleted meanwhile (its host is free of it).

    :returns: the server as Nova has it at the end, or None when gone.
    :raises MigrationFailed: Nova refused the migration, the migration
        failed (the server stays where it was or is in ERROR), or it was
        not done after ``timeout`` seconds (it is not aborted: Nova may
        still finish it).
    """
    deadline = time.monotonic() + timeout

    def get():
        try:
            with nova_backend.Calls('reading server %s' % server_id):
                return nova.servers.get(server_id)
        except exceptions.CloudUnavailable as exc:
            if isinstance(exc.__cause__, nova_exc.NotFound):
                return None
            raise

    server = get()
    if server is None:
        return None
    if getattr(server, HOST, None) == target and \
            not getattr(server, TASK_STATE, None):
        return server
    try:
        nova.servers.live_migrate(server_id, target, 'auto', force=False)
    except nova_exc.NotFound:
        return None
    except (nova_exc.ClientException, ks_exc.ClientException) as exc:
        # 400 (target unknown or down), 409 (server busy or not movable)
        raise MigrationFailed(server_id, target, 'Nova refused: %s' % (
            exc,)) from exc
    LOG.info('Live-migrating server %s from %s to %s', server_id,
             getattr(server, HOST, None), target)
    while True:
        server = get()
        if server is None:
            return None
        if server.status == 'ERROR':
            raise MigrationFailed(server_id, target, 'the server is in ERROR')
        if not getattr(server, TASK_STATE, None) and \
                server.status != 'MIGRATING':
            if getattr(server, HOST, None) == target:
                return server
            # settled elsewhere: the migration failed or was rolled back
            migration = _latest_migration(nova, server_id)
            status = getattr(migration, 'status', None)
            raise MigrationFailed(server_id, target, '%s, the server is on '
                                  '%s' % ('migration %s' % status if status
                                          in FAILED else 'not migrated',
                                          getattr(server, HOST, None)))
        if time.monotonic() >= deadline:
            raise MigrationFailed(server_id, target, 'not done after %d s '
                                  '(%s)' % (timeout, getattr(
                                      server, TASK_STATE, None)))
        time.sleep(POLL_INTERVAL)


def run_plan(nova, plan, timeout, workers=None,
             migration_timeout=MIGRATION_TIMEOUT):
    """Carry out a ``climate.scheduling.evacuation.Plan``: its waves one
    after the other, each wave's moves at once (at most ``workers``
    threads; default: the wave's size), until ``timeout`` seconds from now.

    A move that fails stops the moves left on its host (that host will not
    be freed), not the others.  No wave starts after the deadline, and a
    move running then gives up waiting (Nova may still finish it).  The
    plan's hosts are looked at once more at the end: a host is freed only
    when Nova shows no server on it (one may have been booted there
    meanwhile: the caller should close the hosts to new servers first).

    :returns: an :class:`Outcome`.
    """
    deadline = time.monotonic() + timeout
    moved, skipped, failed = [], [], {}
    blocked = set()

    def move(step):
        left = deadline - time.monotonic()
        if left <= 0:
            raise MigrationFailed(step.server, step.target,
                                  'the deadline passed')
        return live_migrate(nova, step.server, step.target,
                            min(migration_timeout, left))

    for wave in plan.waves:
        todo = [m for m in wave if m.source not in blocked]
        skipped += [m.server for m in wave if m.source in blocked]
        if not todo:
            continue
        if time.monotonic() >= deadline:
            skipped += [m.server for m in todo]
            continue
        outcomes = nova_backend.attempt_all(move, todo, workers or len(todo))
        for step, _server, exc in outcomes:
            if exc is None:
                moved.append(step.server)
                continue
            if not isinstance(exc, (MigrationFailed,
                                    exceptions.ClimateException)):
                raise exc  # a bug, not a cloud's answer
            LOG.warning('Evacuation of %s: %s', step.source, exc)
            failed[step.server] = getattr(exc, 'reason', None) or str(exc)
            blocked.add(step.source)
    leftovers = {}
    for host in plan.hosts:
        left = [s.id for s in servers_on(nova, host)]
        if left:
            leftovers[host] = left
    freed = [h for h in plan.hosts if h not in leftovers]
    timed_out = bool(leftovers) and time.monotonic() >= deadline
    LOG.info('Evacuation: %d of %d host(s) freed, %d server(s) moved, %d '
             'failed, %d skipped%s', len(freed), len(plan.hosts), len(moved),
             len(failed), len(skipped), ' (deadline passed)'
             if timed_out else '')
    return Outcome(freed, moved, failed, skipped, leftovers, timed_out)
