"""The ``nova`` inventory: hypervisors of Nova, moved between aggregates.

Every reservable host sits in the freepool aggregate (``[hosts]
aggregate_freepool_name``, metadata ``climate:freepool=true``).  At lease
start the hosts of a reservation move into an aggregate named after the
reservation id, with metadata ``climate:owner=<project id>`` and
``climate:reservation=<reservation id>``, which Climate's Nova scheduler
filter (``climate/nova_filter/climate_filter.py``) reads; at the end the
servers left on them are deleted, they return to the freepool and the
aggregate is deleted.

**Idempotent and verified.**  The event engine re-runs a start or end that
failed or whose manager died halfway, so each step first looks at what is
there and only does what is missing (a host already in an aggregate, an
aggregate already gone, a server already deleted are successes), and each
call ends by re-reading the aggregates it changed: a step Nova did not
apply raises :class:`climate.exceptions.CloudUnavailable`, which retries the
event with backoff.  A host moves by "add to the new aggregate, then remove
from the old one": in between it sits in both, where the filter applies the
reservation's rules, so a host is never in neither aggregate (which would
make it an ordinary host open to anyone).

**Parallel.**  Per-host work (aggregate moves, server deletion) runs on at
most ``[hosts] max_parallel`` threads; every host is attempted even when
some fail, and the failures are reported together.

Nova errors (unreachable API, 5xx, unexpected answers) are raised as
``CloudUnavailable``.  Calls use Climate's service session
(``climate.clients.nova.service_client``), which needs an admin role in
Nova (aggregates, hypervisors, services, servers of every project).
"""

import concurrent.futures
import json
import threading
import time

from keystoneauth1 import exceptions as ks_exc
from novaclient import exceptions as nova_exc
from oslo_log import log as logging

from climate.clients import calls as cloud_calls
from climate.clients import nova as nova_clients
from climate import exceptions
from climate.plugins.physical_host.backends import base

LOG = logging.getLogger(__name__)

OWNER_KEY = 'climate:owner'
RESERVATION_KEY = 'climate:reservation'
FREEPOOL_KEY = 'climate:freepool'
#: The reason a best-effort hunt gives Nova for the compute services of the
#: hosts it frees (``climate.manager.workers.hunts``): closed on purpose,
#: so that Nova places no new server there, not down.
HUNT_DISABLED_REASON = 'climate: freed for best-effort lease %s'


#: The reason a power backend gives Nova for the compute service of a host
#: it powers off (``climate.plugins.physical_host.power.nova_service``):
#: only a service disabled with it is enabled again when the host wakes.
POWER_DISABLED_REASON = 'climate: powered off until %s'


def disabled_with(service, reason):
    """Whether a compute service's disabled reason is ``reason`` (a
    template with one ``%s``) filled in."""
    prefix = reason.split('%s')[0]
    return (getattr(service, 'disabled_reason', None) or '').startswith(
        prefix)


def closed_by_hunt(service):
    """Whether a disabled compute service was disabled by a hunt."""
    return disabled_with(service, HUNT_DISABLED_REASON)


def closed_by_power(service):
    """Whether a compute service was disabled by a power off (Climate's
    power planner, through the power backends' Nova service step)."""
    return service.status == 'disabled' and \
        disabled_with(service, POWER_DISABLED_REASON)


#: Seconds one Nova call may take when ``[service_auth] timeout`` is unset.
CALL_TIMEOUT = 60
#: Seconds the end waits for the servers of one host to be gone.
SERVER_DELETE_TIMEOUT = 120
#: Seconds before a server still there is asked to be deleted again.
SERVER_REDELETE = 10
#: Seconds ``before_end: snapshot`` waits for the snapshots of one host.
SNAPSHOT_TIMEOUT = 600
#: Pause between two looks at servers being deleted or snapshotted.
POLL_INTERVAL = 0.5
#: Server task states of a snapshot in progress.
SNAPSHOT_TASKS = ('image_snapshot', 'image_snapshot_pending',
                  'image_pending_upload', 'image_uploading')


def _name(host):
    """The name Nova's aggregates and server filters know a host by."""
    return host.get('service_name') or host['hypervisor_hostname']


def _unavailable(exc, doing):
    return cloud_calls.unavailable('Nova', doing, exc)


class Calls(cloud_calls.CloudCalls):
    """Context manager turning Nova and transport errors into
    CloudUnavailable, naming what was being done."""

    def __init__(self, doing, service='Nova'):
        super().__init__(doing, service, (nova_exc.ClientException,
                                          ks_exc.ClientException))


class NovaBackend(base.InventoryBackend):
    name = 'nova'

    def __init__(self, conf):
        super().__init__(conf)
        self._client = None
        self._lock = threading.Lock()

    # -- plumbing ----------------------------------------------------------

    @property
    def nova(self):
        """novaclient on Climate's service session (made on first use)."""
        with self._lock:
            if self._client is None:
                with Calls('connecting'):
                    self._client = nova_clients.bounded_service_client(
                        self.conf, CALL_TIMEOUT)
            return self._client

    @property
    def freepool_name(self):
        return self.conf.hosts.aggregate_freepool_name

    def _fan_out(self, what, func, items):
        """``func(item)`` for every item on at most ``max_parallel``
        threads; every item is tried, failures raised together (a bug, not
        a Climate error, is raised as it is)."""
        items = list(items)
        outcomes = attempt_all(func, items, self.conf.hosts.max_parallel)
        errors = [(item, exc) for item, _r, exc in outcomes
                  if exc is not None]
        for item, exc in errors:
            LOG.warning('%s failed for %s: %s', what, _label(item), exc)
            if not isinstance(exc, exceptions.ClimateException):
                raise exc
        if len(errors) == 1:
            raise errors[0][1]
        if errors:
            raise exceptions.CloudUnavailable(
                service='Nova', reason='%s failed for %s: %s' % (
                    what, ', '.join(_label(i) for i, _e in errors), '; '.join(
                        str(e) for _i, e in errors[:3])))
        return [result for _i, result, _e in outcomes]

    # -- aggregates --------------------------------------------------------

    def _aggregates_named(self, *names):
        """{name: aggregate} of the aggregates among ``names`` (one call)."""
        with Calls('listing aggregates'):
            return {a.name: a for a in self.nova.aggregates.list()
                    if a.name in names}

    def _aggregate(self, name, metadata, found):
        """The aggregate ``name`` with at least ``metadata``, created or
        completed when needed; a concurrent creator is tolerated.
        ``found``: what :meth:`_aggregates_named` returned (one lookup
        serves both aggregates of a step)."""
        agg = found.get(name)
        if agg is None:
            try:
                with Calls('creating aggregate %s' % name):
                    agg = self.nova.aggregates.create(name, None)
                LOG.info('Created aggregate %s (%s)', name, agg.id)
            except exceptions.CloudUnavailable as exc:
                # 409: someone else made it meanwhile
                agg = self._aggregates_named(name).get(name)
                if agg is None:
                    raise exc
        current = _field(agg, 'metadata', {})
        if any(current.get(k) != v for k, v in metadata.items()):
            with Calls('setting metadata of aggregate %s' % name):
                agg = self.nova.aggregates.set_metadata(agg, metadata)
            if any(_field(agg, 'metadata', {}).get(k) != v
                   for k, v in metadata.items()):
                raise exceptions.CloudUnavailable(
                    service='Nova', reason='aggregate %s has metadata %s, '
                    'not %s' % (name, _field(agg, 'metadata', {}), metadata))
        return agg

    def _freepool(self, found=None):
        if found is None:
            found = self._aggregates_named(self.freepool_name)
        return self._aggregate(self.freepool_name, {FREEPOOL_KEY: 'true'},
                               found)

    def _pair(self, reservation_id, project_id):
        """The reservation's aggregate and the freepool, made or completed
        as needed."""
        found = self._aggregates_named(reservation_id, self.freepool_name)
        return (self._aggregate(reservation_id, {
                    OWNER_KEY: project_id, RESERVATION_KEY: reservation_id},
                    found),
                self._freepool(found))

    def _add(self, agg, host):
        """Add ``host`` (a name) to ``agg``; already there (409) is fine."""
        _membership(self.nova.aggregates.add_host, nova_exc.Conflict, agg,
                    host, 'adding %s to')

    def _remove(self, agg, host):
        """Remove ``host`` from ``agg``; already out (404) is fine."""
        _membership(self.nova.aggregates.remove_host, nova_exc.NotFound, agg,
                    host, 'removing %s from')

    def _move(self, hosts, to_agg, from_agg):
        """Move host names into ``to_agg`` then out of ``from_agg`` (None:
        no source), in parallel; both are then published and checked.

        :returns: the two aggregates as Nova has them now.
        """
        have = set(_field(to_agg, 'hosts', []))
        gone = set(_field(from_agg, 'hosts', [])) if from_agg is not None \
            else set()

        def move(host):
            if host not in have:
                self._add(to_agg, host)
            if from_agg is not None and host in gone:
                self._remove(from_agg, host)

        self._fan_out('moving hosts to aggregate %s' % to_agg.name, move,
                      hosts)
        fresh_to = self._publish(to_agg)
        fresh_from = self._publish(from_agg) if from_agg is not None \
            else None
        missing = [h for h in hosts if h not in _field(fresh_to, 'hosts', [])]
        stuck = [h for h in hosts
                 if fresh_from is not None and
                 h in _field(fresh_from, 'hosts', [])]
        if missing or stuck:
            raise exceptions.CloudUnavailable(
                service='Nova', reason='after the move, %s not in aggregate '
                '%s and %s still in aggregate %s' % (
                    missing or 'none', to_agg.name, stuck or 'none',
                    from_agg.name if from_agg is not None else '-'))
        return fresh_to, fresh_from

    def _publish(self, agg):
        """Make every nova-scheduler see the whole, current ``agg``, and
        return it as Nova's database has it now (the check of a move).

        Each host added or removed makes nova-api cast the aggregate *as
        that request saw it* to the schedulers, which keep the last one
        they get.  Parallel moves on one aggregate thus leave them with a
        partial view (a reserved host shown in no aggregate, so open to
        anyone) until the next change.  Setting the aggregate's own
        metadata again changes nothing in Nova's database but casts the
        aggregate as it is now, after every move has committed, and
        answers with it.
        """
        metadata = {k: v for k, v in _field(agg, 'metadata', {}).items()
                    if k.startswith('climate:')}
        with Calls('refreshing aggregate %s in the schedulers' % agg.name):
            return self.nova.aggregates.set_metadata(agg, metadata)

    # -- servers -----------------------------------------------------------

    def _servers_on(self, host, limit=None):
        opts = {'all_tenants': True, 'host': host}
        with Calls('listing servers on %s' % host):
            return self.nova.servers.list(search_opts=opts, limit=limit)

    def _delete_servers(self, host, reservation_id):
        """Delete every server on ``host`` and wait until none is left."""
        deadline = time.monotonic() + SERVER_DELETE_TIMEOUT
        asked = {}  # server id -> when its deletion was last asked
        while True:
            servers = self._servers_on(host)
            if not servers:
                return
            now = time.monotonic()
            for server in servers:
                # a deletion Nova lost (e.g. nova-compute restarted) is
                # asked again, not every poll
                if now - asked.get(server.id, -SERVER_REDELETE) < \
                        SERVER_REDELETE:
                    continue
                LOG.info('Reservation %s ends: deleting server %s on %s',
                         reservation_id, server.id, host)
                try:
                    self.nova.servers.delete(server.id)
                except nova_exc.NotFound:
                    pass
                except (nova_exc.ClientException,
                        ks_exc.ClientException) as exc:
                    raise _unavailable(exc, 'deleting server %s on %s' % (
                        server.id, host)) from exc
                asked[server.id] = now
            if time.monotonic() > deadline:
                raise exceptions.CloudUnavailable(
                    service='Nova', reason='servers %s on %s still there '
                    '%d s after their deletion' % (
                        ', '.join(s.id for s in servers), host,
                        SERVER_DELETE_TIMEOUT))
            time.sleep(POLL_INTERVAL)

    # -- the contract ------------------------------------------------------

    def describe_host(self, name):
        """Facts of the hypervisor ``name`` (hypervisor_hostname, else the
        compute service's host name)."""
        found = None
        try:
            with Calls('looking up hypervisor %s' % name):
                found = [h for h in self.nova.hypervisors.search(
                    name, detailed=True) if h.hypervisor_hostname == name]
        except exceptions.CloudUnavailable as exc:
            if not isinstance(exc.__cause__, nova_exc.NotFound):
                raise
        if not found:
            with Calls('listing hypervisors'):
                found = [h for h in self.nova.hypervisors.list(detailed=True)
                         if (getattr(h, 'service', None) or {}).get('host')
                         == name]
        if not found:
            raise exceptions.HostNotInCloud(host=name)
        if len(found) > 1:
            # one compute service with several nodes (ironic): the name
            # must pick one node
            raise exceptions.MultipleHostsFound(
                host=name, count=len(found), names=', '.join(
                    h.hypervisor_hostname for h in found))
        hyp = found[0]
        cpu_info = getattr(hyp, 'cpu_info', None)
        if isinstance(cpu_info, (dict, list)):
            cpu_info = json.dumps(cpu_info, sort_keys=True)
        return {
            'hypervisor_hostname': hyp.hypervisor_hostname,
            'service_name': (getattr(hyp, 'service', None) or {}).get(
                'host') or hyp.hypervisor_hostname,
            'vcpus': getattr(hyp, 'vcpus', None),
            'memory_mb': getattr(hyp, 'memory_mb', None),
            'local_gb': getattr(hyp, 'local_gb', None),
            'cpu_info': cpu_info,
            'hypervisor_type': getattr(hyp, 'hypervisor_type', None),
            'hypervisor_version': getattr(hyp, 'hypervisor_version', None),
        }

    #: Inventory fields :meth:`capacity` reports for each class.
    CAPACITY_FIELDS = ('total', 'reserved', 'allocation_ratio', 'min_unit',
                       'max_unit', 'step_size')
    #: Classes :meth:`capacity` reports.
    CAPACITY_CLASSES = ('VCPU', 'MEMORY_MB', 'DISK_GB')

    def capacity(self, facts):
        """VCPU, MEMORY_MB and DISK_GB of the host as Placement has them:
        the inventories of its compute node resource provider (named after
        the hypervisor), which nova-compute keeps from the virt driver and
        the ``*_allocation_ratio`` / ``reserved_host_*`` options of
        nova.conf.  A class Placement does not list is left out."""
        # imported here: only the nova inventory talks to Placement
        from climate.clients import placement as placement_clients
        name = facts['hypervisor_hostname']
        try:
            with self._lock:
                if getattr(self, '_placement', None) is None:
                    self._placement = placement_clients.service_client(
                        self.conf)
            root = self._placement.provider_by_name(name)
            if root is None:
                raise exceptions.CloudUnavailable(
                    service='Placement', reason='no resource provider named '
                    '%s (nova-compute has not reported that hypervisor '
                    'yet)' % name)
            _generation, inventories = self._placement.inventories(
                root['uuid'])
        except (placement_clients.PlacementError,
                ks_exc.ClientException) as exc:
            raise exceptions.CloudUnavailable(
                service='Placement', reason='reading the inventory of '
                '%s: %s' % (name, exc)) from exc
        return {rc: {k: inventories[rc][k] for k in self.CAPACITY_FIELDS}
                for rc in self.CAPACITY_CLASSES if rc in inventories}

    def host_has_servers(self, host):
        return bool(self._servers_on(_name(host), limit=1))

    def host_servers(self, host):
        return [{'name': getattr(s, 'name', None), 'uuid': s.id}
                for s in self._servers_on(_name(host),
                                          limit=base.MAX_SERVERS_SHOWN)]

    def enroll(self, host):
        """Into the freepool (created on first use)."""
        name = _name(host)
        pool, _none = self._move([name], self._freepool(), None)
        LOG.info('Host %s enrolled in aggregate %s', name, pool.name)

    def withdraw(self, host):
        """Out of the freepool; a host not in it (or no freepool) is fine.
        Refuses a host still inside a reservation aggregate."""
        name = _name(host)
        with Calls('listing aggregates'):
            aggregates = self.nova.aggregates.list()
        for agg in aggregates:
            if name in _field(agg, 'hosts', []) and \
                    RESERVATION_KEY in _field(agg, 'metadata', {}):
                raise exceptions.HostAllocated(
                    id=host.get('id', name), host=name,
                    reservations=_field(agg, 'metadata', {})[RESERVATION_KEY])
        pool = next((a for a in aggregates if a.name == self.freepool_name),
                    None)
        if pool is None:
            return
        if name in _field(pool, 'hosts', []):
            self._remove(pool, name)
        if name in _field(self._publish(pool), 'hosts', []):
            raise exceptions.CloudUnavailable(
                service='Nova', reason='%s is still in aggregate %s' % (
                    name, pool.name))

    def start(self, reservation_id, project_id, hosts):
        names = [_name(h) for h in hosts]
        agg, pool = self._pair(reservation_id, project_id)
        self._move(names, agg, pool)
        LOG.info('Reservation %s started: %d host(s) in aggregate %s',
                 reservation_id, len(names), agg.id)

    def snapshot(self, reservation_id, hosts):
        """Snapshot each server on the hosts once (image name
        ``climate-<reservation>-<server>``, image metadata
        ``climate_reservation``/``climate_server``) and wait until Nova
        has finished taking them."""
        def host_snapshots(host):
            servers = self._servers_on(host)
            taken = []
            for server in servers:
                if self._snapshot_once(reservation_id, server):
                    taken.append(server.id)
            self._wait_snapshots(host, taken)
            return taken

        done = self._fan_out('snapshotting servers',
                             host_snapshots, [_name(h) for h in hosts])
        LOG.info('Reservation %s: snapshots of %d server(s) taken',
                 reservation_id, sum(len(d) for d in done))

    def _glance(self, method, url, **kwargs):
        with Calls('%s %s on Glance' % (method, url)):
            return self.nova.client.session.request(
                url, method, endpoint_filter={
                    'service_type': 'image',
                    'interface': self.conf.nova.interface,
                    'region_name': self.conf.nova.region_name}, **kwargs)

    def _snapshot_images(self, reservation_id, server_id):
        """Images already made for this server and reservation."""
        name = 'climate-%s-%s' % (reservation_id, server_id)
        resp = self._glance('GET', '/v2/images', params={'name': name})
        return resp.json().get('images', [])

    def _give(self, image, project_id):
        """Make the snapshot the server's project's: Nova gives it to the
        project that asked for it, Climate's service project."""
        if image.get('owner') == project_id:
            return
        self._glance('PATCH', '/v2/images/%s' % image['id'], json=[
            {'op': 'replace', 'path': '/owner', 'value': project_id}],
            headers={'Content-Type':
                     'application/openstack-images-v2.1-json-patch'})

    def _snapshot_once(self, reservation_id, server):
        """Ask for the snapshot unless one exists or is being taken."""
        if getattr(server, 'OS-EXT-STS:task_state', None) in SNAPSHOT_TASKS:
            return True
        images = [i for i in self._snapshot_images(reservation_id, server.id)
                  if i.get('status') not in ('killed', 'deleted',
                                             'pending_delete')]
        if images:
            for image in images:
                self._give(image, server.tenant_id)
            return False
        name = 'climate-%s-%s' % (reservation_id, server.id)
        with Calls('snapshotting server %s' % server.id):
            image_id = self.nova.servers.create_image(
                server.id, name, metadata={
                    'climate_reservation': reservation_id,
                    'climate_server': server.id})
        self._give({'id': str(image_id)}, server.tenant_id)
        LOG.info('Reservation %s: snapshot %s (%s) asked', reservation_id,
                 name, image_id)
        return True

    def _wait_snapshots(self, host, server_ids):
        deadline = time.monotonic() + SNAPSHOT_TIMEOUT
        pending = set(server_ids)
        while pending:
            for server_id in sorted(pending):
                try:
                    with Calls('reading server %s' % server_id):
                        server = self.nova.servers.get(server_id)
                except exceptions.CloudUnavailable as exc:
                    if isinstance(exc.__cause__, nova_exc.NotFound):
                        pending.discard(server_id)  # deleted by its owner
                        continue
                    raise
                if getattr(server, 'OS-EXT-STS:task_state', None) not in \
                        SNAPSHOT_TASKS:
                    pending.discard(server_id)
            if not pending:
                return
            if time.monotonic() > deadline:
                raise exceptions.CloudUnavailable(
                    service='Nova', reason='snapshots of %s on %s not done '
                    'after %d s' % (', '.join(sorted(pending)), host,
                                    SNAPSHOT_TIMEOUT))
            time.sleep(POLL_INTERVAL)

    def end(self, reservation_id, hosts):
        """Delete the servers, hosts back to the freepool, aggregate
        deleted.  Hosts found in the aggregate count too (a replacement
        Climate forgot about must not stay reserved)."""
        agg = self._aggregates_named(reservation_id).get(reservation_id)
        names = [_name(h) for h in hosts]
        if agg is not None:
            names += [h for h in _field(agg, 'hosts', []) if h not in names]
        self._fan_out('deleting servers',
                      lambda host: self._delete_servers(host, reservation_id),
                      names)
        pool = self._freepool()
        if agg is None:
            # a previous run deleted the aggregate: the hosts were back
            # already; make sure of it
            self._move(names, pool, None)
            return
        self._move(names, pool, agg)
        try:
            with Calls('deleting aggregate %s' % reservation_id):
                self.nova.aggregates.delete(agg.id)
        except exceptions.CloudUnavailable as exc:
            if not isinstance(exc.__cause__, nova_exc.NotFound):
                raise
        if reservation_id in self._aggregates_named(reservation_id):
            raise exceptions.CloudUnavailable(
                service='Nova', reason='aggregate %s still exists after its '
                'deletion' % reservation_id)
        LOG.info('Reservation %s ended: %d host(s) back in %s',
                 reservation_id, len(names), pool.name)

    def replace(self, reservation_id, project_id, old_hosts, new_hosts):
        """New hosts join the reservation aggregate, old ones go back to
        the freepool (their servers stay: the host is usually down and the
        operator evacuates it)."""
        agg, pool = self._pair(reservation_id, project_id)
        if new_hosts:
            agg, pool = self._move([_name(h) for h in new_hosts], agg, pool)
        if old_hosts:
            self._move([_name(h) for h in old_hosts], pool, agg)

    def down_hosts(self, hosts):
        """Hosts whose nova-compute is down, disabled, or unknown to Nova
        (one call to os-services whatever the count).  A service a
        best-effort hunt disabled is not down: the hunt closed it while it
        frees the host for its lease and opens it again once the host is
        booked; reading it as down made the host unreservable under the
        hunt, which then could not book what it had freed.  Nor is the
        service of a host Climate powered off, down as it is: it sleeps
        until its next booking, and healing would move that booking away
        and make the host unreservable."""
        with Calls('listing compute services'):
            services = self.nova.services.list(binary='nova-compute')
        healthy = {s.host for s in services
                   if (s.state == 'up' and (s.status == 'enabled' or
                                            closed_by_hunt(s))) or
                   closed_by_power(s)}
        return [h for h in hosts if _name(h) not in healthy]


def attempt_all(func, items, workers):
    """``(item, func(item), None)`` or ``(item, None, exception)`` for every
    item, in their order, run on at most ``workers`` threads (one: in the
    caller's thread); an item failing does not stop the others."""
    items = list(items)

    def attempt(item):
        try:
            return item, func(item), None
        except Exception as exc:
            return item, None, exc

    workers = min(workers, len(items))
    if workers <= 1:
        return [attempt(item) for item in items]
    with concurrent.futures.ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix='climate-nova') as pool:
        return list(pool.map(attempt, items))


def _field(agg, key, default):
    """An aggregate's ``hosts`` or ``metadata`` as Nova's answer had it.

    novaclient fetches the aggregate again when an attribute its answer
    lacked is read (the answer to a creation has neither): one call per
    read that a new aggregate does not need.
    """
    info = agg.to_dict() if hasattr(agg, 'to_dict') else vars(agg)
    return info.get(key) or default


def _membership(call, done, agg, host, doing):
    """``call(agg, host)``; the error ``done`` means a previous run did it
    (the move is verified afterwards anyway)."""
    try:
        call(agg, host)
    except done:
        pass
    except (nova_exc.ClientException, ks_exc.ClientException) as exc:
        raise _unavailable(exc, (doing + ' aggregate %s') % (
            host, agg.name)) from exc


def _label(item):
    return item if isinstance(item, str) else repr(item)
