"""The ``nova`` instance backend: reserved capacity as Nova and Placement
see it.

At the start of a ``virtual:instance`` reservation ``<id>`` whose slots are
booked on some hosts (``units`` slots on each), Climate makes:

* a custom resource class ``CUSTOM_RESERVATION_<ID>`` in Placement;
* on Climate's child provider ``climate-<hypervisor hostname>`` under the
  compute node provider of each booked host (made on first use, shared by
  the instance reservations of that host), an inventory of that class with
  ``total`` = the host's units (all of them ``reserved`` when the slots are
  held by servers Climate places itself -- a woken stack's, with their own
  flavor, ``slots_held`` -- so that the flavor boots nothing beside
  them).  A child holding a reservation's class is a
  member of the Placement aggregate whose uuid is the reservation id, which
  is how a later resize or end finds them all again;
* a Nova aggregate named ``<id>`` holding the booked hosts, with metadata
  ``climate:reservation=<id>``, ``climate:owner=<project>`` (read by
  ``ClimateFilter``) and ``reservation=<id>`` (read by Nova's
  ``AggregateInstanceExtraSpecsFilter``).  Hosts stay in any other
  aggregate they are in (the freepool): a host may carry the slots of
  several instance reservations at once;
* a server group ``reservation:<id>`` in the project when ``affinity`` is
  true (``affinity``) or false (``anti-affinity``), made as the lease's
  user through its trust so that it is the project's;
* last, a private flavor whose id is the reservation id, named
  ``reservation:<id>``, of the reservation's shape (or a copy of its
  source flavor, extra specs included), with extra specs
  ``resources:CUSTOM_RESERVATION_<ID>=1`` and
  ``aggregate_instance_extra_specs:reservation=<id>``, usable by the
  project alone.

A server booted with the flavor asks Placement for VCPU, MEMORY_MB and
DISK_GB *and* one unit of the reservation's class in its unnumbered request
group.  Since Placement 1.29 (Nova asks with 1.36) such a group may be
satisfied by several providers of one tree: the compute node gives the
VCPU/MEMORY_MB/DISK_GB and its Climate child the reservation's unit.  Only
the booked hosts have the class, and no more than their units of it, so
servers land on reserved capacity only, ``amount`` servers at most: the
next one gets "No valid host".  The filters add the project check (a
private flavor is usable by its project, but an admin can see it).

Why a child provider and not an inventory on the compute node itself:
nova-compute owns the compute node's inventory.  Each periodic update
(``update_provider_tree``) sets that provider's inventory to exactly what
the virt driver reports; a foreign class on it survives only until
nova-compute refreshes its cache of the provider (``[compute]
resource_provider_association_refresh``, 300 s), and then is deleted.
Children nova-compute did not make are left alone: the virt driver only
updates the providers it knows, and nova-compute writes a provider only
when its own view of it changed.

Why the child stays when the last reservation of its host ends (empty, no
inventory): nova-compute caches the whole provider tree of its node and,
before every build on the host and every periodic update, reads the
allocations of each provider it has cached.  A deleted child it cached
answers 404 there, and every build on that host fails ("Exceeded maximum
number of retries") until nova-compute re-reads the tree, up to
``resource_provider_association_refresh`` seconds later (seen on Nova
2026.1).  So Climate never deletes its children; it removes its
inventories, aggregates and resource classes, which nova-compute reads
without harm.  Sharing one child per host also means that no
reservation's end deletes a provider another one is writing to.

**Idempotent and verified.**  Every step looks at what exists first and
makes only what is missing (a retried or half-done start completes; a
second end finds nothing to do), and re-reads what it changed: a step
Nova or Placement did not apply raises
:class:`climate.exceptions.CloudUnavailable`, as do their errors, and the
event engine retries with backoff.

**The end** first closes the reservation's inventories (``reserved =
total``: Placement then refuses new servers of the flavor at once), deletes
every server built with the flavor, in any project, and every consumer
still holding the reservation's class, waits until they are gone, then
deletes the flavor, the server group, the aggregate (hosts removed first),
the inventories (and the children's membership of the reservation's
Placement aggregate), and the resource class.  Nothing of the reservation
is left in Nova or Placement; Climate's (empty) child providers stay.
"""

import concurrent.futures
import threading
import time
import uuid

from novaclient import api_versions
from novaclient import exceptions as nova_exc
from oslo_log import log as logging

from climate.clients import nova as nova_clients
from climate.clients import placement as placement_clients
from climate import exceptions
from climate.plugins.virtual_instance.backends import base
from climate.plugins.virtual_instance.backends import nova_common
from climate.plugins.virtual_instance.backends import nova_servers

LOG = logging.getLogger(__name__)

OWNER_KEY = 'climate:owner'
RESERVATION_KEY = 'climate:reservation'
#: Aggregate metadata key of Nova's AggregateInstanceExtraSpecsFilter.
AGGREGATE_KEY = base.RESERVATION_PREFIX
#: The flavor extra spec pinning servers to the reservation's aggregate.
FLAVOR_AGGREGATE_SPEC = 'aggregate_instance_extra_specs:' + AGGREGATE_KEY
#: Prefix of the child providers' names.
CHILD_PREFIX = 'climate-'
#: Placement's limit on provider names.
NAME_MAX = 200

#: Seconds the end waits for the reservation's servers to be gone.
SERVER_DELETE_TIMEOUT = 120
#: Seconds before a server still there is asked to be deleted again.
SERVER_REDELETE = 10
#: Pause between two looks at servers being deleted.
POLL_INTERVAL = 0.5


def child_name(hostname):
    """Name of Climate's child provider under ``hostname``'s compute node
    (cut to Placement's 200 characters)."""
    return CHILD_PREFIX + hostname[:NAME_MAX - len(CHILD_PREFIX)]


def placement_aggregate(reservation_id):
    """The Placement aggregate (a uuid) grouping a reservation's children:
    the reservation id itself when it is a uuid."""
    try:
        return str(uuid.UUID(reservation_id))
    except ValueError:
        return str(uuid.uuid5(uuid.NAMESPACE_URL,
                              'climate:reservation:' + reservation_id))


def _hostname(facts):
    return facts['hypervisor_hostname']


def _affinity(value):
    """True (affinity), False (anti-affinity) or None (no server group)
    from what the reservation stored."""
    if value is None or isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ('', 'none', 'null'):
        return None
    return text in ('true', '1', 'yes', 'on', 't', 'y')


class NovaInstanceBackend(base.InstanceBackend):
    """Instance reservations in Nova and Placement (see module)."""

    name = 'nova'
    acts_in_cloud = True

    def __init__(self, conf):
        super().__init__(conf)
        self._nova = None
        self._placement = None
        self._server_actions = None
        self._lock = threading.Lock()

    # -- plumbing ----------------------------------------------------------

    @property
    def nova(self):
        """novaclient on Climate's service session (made on first use)."""
        with self._lock:
            if self._nova is None:
                with nova_common.Calls('connecting'):
                    self._nova = nova_clients.bounded_service_client(
                        self.conf, nova_common.CALL_TIMEOUT)
            return self._nova

    @property
    def placement(self):
        """Placement on Climate's service session (made on first use)."""
        with self._lock:
            if self._placement is None:
                with nova_common.Calls('connecting', 'Placement'):
                    self._placement = placement_clients.service_client(
                        self.conf)
            return self._placement

    def _fan_out(self, what, func, items):
        """``func(item)`` for every item on at most ``[hosts]
        max_parallel`` threads; every item is tried, failures raised
        together (a bug is raised as it is)."""
        items = list(items)

        def attempt(item):
            try:
                return func(item), None
            except Exception as exc:
                return None, exc

        workers = min(self.conf.hosts.max_parallel, len(items))
        if workers <= 1:
            outcomes = [attempt(item) for item in items]
        else:
            with concurrent.futures.ThreadPoolExecutor(
                    max_workers=workers,
                    thread_name_prefix='climate-instances') as pool:
                outcomes = list(pool.map(attempt, items))
        errors = [exc for _r, exc in outcomes if exc is not None]
        for exc in errors:
            if not isinstance(exc, exceptions.ClimateException):
                raise exc
        if len(errors) == 1:
            raise errors[0]
        if errors:
            raise exceptions.CloudUnavailable(
                service='Nova/Placement', reason='%s failed %d times: %s' % (
                    what, len(errors), '; '.join(str(e) for e in errors[:3])))
        return [result for result, _e in outcomes]

    @property
    def servers(self):
        """The pre-created servers' actions (``nova_servers``)."""
        with self._lock:
            if self._server_actions is None:
                self._server_actions = nova_servers.ServerActions(self)
            return self._server_actions

    def server(self, server_id):
        return self.servers.server(server_id)

    def boot(self, reservation, project_id, user_session):
        return self.servers.boot(reservation, project_id, user_session)

    def hold(self, reservation):
        return self.servers.hold(reservation)

    def wake(self, reservation, project_id, host, user_session,
             move_running=False):
        return self.servers.wake(reservation, project_id, host, user_session,
                                 move_running)

    def release(self, reservation):
        return self.servers.release(reservation)

    def discard(self, reservation):
        return self.servers.discard(reservation)

    # -- flavor() ----------------------------------------------------------

    def flavor(self, flavor_id):
        """Shape, Placement resources and traits of an existing flavor.

        ``disk_gb`` is what Nova asks Placement for: root + ephemeral disk
        + swap (rounded up to GiB).  ``resources`` are the flavor's
        ``resources[N]:<class>`` extra specs (amounts of one class in
        several request groups added up); ``hw:cpu_policy=dedicated`` asks
        PCPU instead of VCPU, as Nova (and Blazar's flavor plugin) count
        it, unless ``resources:`` says otherwise.  ``traits`` are its
        ``trait[N]:`` extra specs; a value other than required/forbidden
        is refused (400), as Blazar does.
        """
        flavor_id = str(flavor_id)
        try:
            with nova_common.Calls('reading flavor %s' % flavor_id):
                flavor = self.nova.flavors.get(flavor_id)
                specs = flavor.get_keys()
        except exceptions.CloudUnavailable as exc:
            if nova_common.nova_not_found(exc):
                raise exceptions.InvalidInput(
                    reason='flavor_id: flavor %s could not be found.' %
                    flavor_id) from exc
            raise
        return nova_common.flavor_shape(
            flavor.id, flavor.vcpus, flavor.ram, flavor.disk,
            nova_common.field(flavor, 'OS-FLV-EXT-DATA:ephemeral', 0),
            nova_common.field(flavor, 'swap', 0), specs)

    # -- Placement ---------------------------------------------------------

    def _compute_node(self, hostname):
        with nova_common.Calls(
                'looking up the resource provider of %s' % hostname,
                'Placement'):
            root = self.placement.provider_by_name(hostname)
        if root is None:
            raise exceptions.CloudUnavailable(
                service='Placement', reason='no resource provider named %s '
                '(the compute node of that hypervisor)' % hostname)
        return root

    def _children(self, rid):
        """The reservation's child providers now in Placement."""
        with nova_common.Calls(
                'listing the providers of reservation %s' % rid,
                'Placement'):
            return self.placement.providers(
                member_of=placement_aggregate(rid))

    def _open(self, rid, rc, facts, units, closed=False):
        """Climate's child under ``facts``'s compute node with ``units`` of
        ``rc``, in the reservation's Placement aggregate; verified.
        ``closed``: all of them reserved (the flavor boots nothing)."""
        hostname = _hostname(facts)
        root = self._compute_node(hostname)
        name = child_name(hostname)
        reserved = units if closed else 0
        with nova_common.Calls(
                'giving %s %d unit(s) of %s' % (hostname, units, rc),
                'Placement'):
            child = self.placement.ensure_child(root['uuid'], name)
            self.placement.add_to_aggregate(child['uuid'],
                                            placement_aggregate(rid))
            self.placement.set_inventory(child['uuid'], rc, total=units,
                                         reserved=reserved)
            _generation, inventories = self.placement.inventories(
                child['uuid'])
        have = inventories.get(rc) or {}
        if have.get('total') != units or have.get('reserved') != reserved:
            raise exceptions.CloudUnavailable(
                service='Placement', reason='provider %s has %s of %s, not '
                '%d' % (name, have or 'no inventory', rc, units))
        return child

    def _close(self, child, rc):
        """No new allocation of ``rc`` on ``child`` (reserved = total);
        existing ones stay."""
        with nova_common.Calls(
                'closing inventory %s of %s' % (rc, child['name']),
                'Placement'):
            try:
                _generation, inventories = self.placement.inventories(
                    child['uuid'])
            except placement_clients.NotFound:
                return
            inv = inventories.get(rc)
            if inv is None or inv['reserved'] >= inv['total']:
                return
            self.placement.set_inventory(
                child['uuid'], rc, total=inv['total'], reserved=inv['total'],
                max_unit=inv['max_unit'])

    def _drop(self, rid, child, rc):
        """Remove ``rc``'s inventory from ``child``, then the child from the
        reservation's Placement aggregate (the child itself stays, see
        module).  An inventory servers still use is closed instead, left
        for the end: returns False."""
        try:
            with nova_common.Calls(
                    'removing %s from %s' % (rc, child['name']), 'Placement'):
                self.placement.remove_inventory(child['uuid'], rc)
                self.placement.remove_from_aggregate(
                    child['uuid'], placement_aggregate(rid))
        except exceptions.CloudUnavailable as exc:
            if isinstance(exc.__cause__, placement_clients.NotFound):
                return True
            if not isinstance(exc.__cause__, placement_clients.Conflict) or \
                    isinstance(exc.__cause__,
                               placement_clients.GenerationConflict):
                raise
            LOG.warning('Provider %s still holds allocations of %s: closed, '
                        'left for the reservation\'s end', child['name'], rc)
            self._close(child, rc)
            return False
        return True

    def _placement_up(self, rid, rc, hosts, closed=False):
        """Class and inventories exactly as ``hosts`` says (``closed``:
        reserved whole); hosts no longer booked lose theirs (or have them
        closed)."""
        with nova_common.Calls('creating resource class %s' % rc, 'Placement'):
            self.placement.ensure_resource_class(rc)
        wanted = {child_name(_hostname(f)) for f, _u in hosts}
        self._fan_out('opening inventories', lambda hu: self._open(
            rid, rc, hu[0], hu[1], closed=closed), hosts)
        stale = [c for c in self._children(rid) if c['name'] not in wanted]
        for child in stale:
            self._drop(rid, child, rc)

    # -- Nova aggregate ----------------------------------------------------

    def _aggregate(self, rid):
        with nova_common.Calls('listing aggregates'):
            found = [a for a in self.nova.aggregates.list() if a.name == rid]
        return found[0] if found else None

    def aggregate_up(self, rid, project_id, names, extra=None):
        """The aggregate ``rid`` with its metadata (and ``extra``
        metadata), holding exactly ``names``; published to the schedulers
        and verified."""
        metadata = dict(extra or {})
        metadata.update({RESERVATION_KEY: rid, OWNER_KEY: project_id,
                         AGGREGATE_KEY: rid})
        agg = self._aggregate(rid)
        if agg is None:
            try:
                with nova_common.Calls('creating aggregate %s' % rid):
                    agg = self.nova.aggregates.create(rid, None)
            except exceptions.CloudUnavailable:
                agg = self._aggregate(rid)  # made meanwhile (409)
                if agg is None:
                    raise
        hosts = set(nova_common.field(agg, 'hosts', []))

        def add(name):
            try:
                with nova_common.Calls(
                        'adding %s to aggregate %s' % (name, rid)):
                    self.nova.aggregates.add_host(agg, name)
            except exceptions.CloudUnavailable as exc:
                if not isinstance(exc.__cause__, nova_exc.Conflict):
                    raise

        self._fan_out('adding hosts to aggregate %s' % rid, add,
                      sorted(set(names) - hosts))
        for name in sorted(hosts - set(names)):
            self._remove_host(agg, name)
        # setting the metadata last also casts the aggregate, as it is now
        # with every host added, to the schedulers (see the host backend)
        with nova_common.Calls('setting metadata of aggregate %s' % rid):
            agg = self.nova.aggregates.set_metadata(agg, metadata)
        have_meta = nova_common.field(agg, 'metadata', {})
        have_hosts = set(nova_common.field(agg, 'hosts', []))
        if any(have_meta.get(k) != v for k, v in metadata.items()) or \
                have_hosts != set(names):
            raise exceptions.CloudUnavailable(
                service='Nova', reason='aggregate %s has hosts %s and '
                'metadata %s, not %s and %s' % (
                    rid, sorted(have_hosts), have_meta, sorted(names),
                    metadata))
        return agg

    def _remove_host(self, agg, name):
        try:
            with nova_common.Calls(
                    'removing %s from aggregate %s' % (name, agg.name)):
                self.nova.aggregates.remove_host(agg, name)
        except exceptions.CloudUnavailable as exc:
            if not nova_common.nova_not_found(exc):
                raise

    def aggregate_down(self, rid):
        agg = self._aggregate(rid)
        if agg is None:
            return
        for name in nova_common.field(agg, 'hosts', []):
            self._remove_host(agg, name)
        try:
            with nova_common.Calls('deleting aggregate %s' % rid):
                self.nova.aggregates.delete(agg.id)
        except exceptions.CloudUnavailable as exc:
            if not nova_common.nova_not_found(exc):
                raise
        if self._aggregate(rid) is not None:
            raise exceptions.CloudUnavailable(
                service='Nova', reason='aggregate %s still exists after its '
                'deletion' % rid)

    # -- server group ------------------------------------------------------

    def _group_by_name(self, rid):
        name = base.flavor_name(rid)
        with nova_common.Calls('listing server groups'):
            groups = self.nova.server_groups.list(all_projects=True)
        return [g for g in groups if g.name == name]

    def _server_group(self, reservation, user_session):
        """The reservation's server group in the user's project, made as
        the user when missing; None when affinity is unset."""
        affinity = _affinity(reservation.get('affinity'))
        if affinity is None:
            return None
        rid = reservation['id']
        known = reservation.get('server_group_id')
        if known:
            try:
                with nova_common.Calls('reading server group %s' % known):
                    return self.nova.server_groups.get(known).id
            except exceptions.CloudUnavailable as exc:
                if not nova_common.nova_not_found(exc):
                    raise
        found = self._group_by_name(rid)
        if found:
            return found[0].id
        policy = 'affinity' if affinity else 'anti-affinity'
        with nova_common.Calls(
                'creating server group %s as the lease\'s user' %
                base.flavor_name(rid)):
            user_nova = nova_clients.client(user_session(), self.conf)
            if user_nova.api_version >= api_versions.APIVersion('2.64'):
                group = user_nova.server_groups.create(
                    name=base.flavor_name(rid), policy=policy)
            else:
                group = user_nova.server_groups.create(
                    name=base.flavor_name(rid), policies=[policy])
        LOG.info('Reservation %s: server group %s (%s)', rid, group.id,
                 policy)
        return group.id

    def _server_group_down(self, reservation):
        ids = {g.id for g in self._group_by_name(reservation['id'])}
        if reservation.get('server_group_id'):
            ids.add(reservation['server_group_id'])
        for group_id in sorted(ids):
            try:
                with nova_common.Calls('deleting server group %s' % group_id):
                    self.nova.server_groups.delete(group_id)
            except exceptions.CloudUnavailable as exc:
                if not nova_common.nova_not_found(exc):
                    raise
        if self._group_by_name(reservation['id']):
            raise exceptions.CloudUnavailable(
                service='Nova', reason='server group %s still exists after '
                'its deletion' % base.flavor_name(reservation['id']))

    # -- flavor ------------------------------------------------------------

    def _source(self, reservation):
        """The source flavor's fields and extra specs, None when the
        reservation was given as a shape (or its source is gone)."""
        source_id = reservation.get('flavor_id')
        if not source_id or source_id == reservation['id']:
            return None
        try:
            with nova_common.Calls('reading source flavor %s' % source_id):
                flavor = self.nova.flavors.get(source_id)
                specs = dict(flavor.get_keys() or {})
        except exceptions.CloudUnavailable as exc:
            if not nova_common.nova_not_found(exc):
                raise
            # deleted since the reservation was made: its recorded shape
            LOG.warning('Source flavor %s of reservation %s is gone; '
                        'the reservation\'s shape is used', source_id,
                        reservation['id'])
            return None
        return {'ram': flavor.ram, 'vcpus': flavor.vcpus,
                'disk': flavor.disk or 0,
                'ephemeral': nova_common.field(
                    flavor, 'OS-FLV-EXT-DATA:ephemeral', 0),
                'swap': nova_common.field(flavor, 'swap', 0) or 0,
                'extra_specs': specs}

    def _flavor_spec(self, reservation, rc):
        """(create arguments, extra specs) of the reservation's flavor."""
        rid = reservation['id']
        source = self._source(reservation)
        if source is not None:
            shape = {k: source[k] for k in ('ram', 'vcpus', 'disk',
                                            'ephemeral', 'swap')}
            specs = dict(source['extra_specs'])
        else:
            shape = {'ram': int(reservation['memory_mb']),
                     'vcpus': int(reservation['vcpus']),
                     'disk': int(reservation['disk_gb']),
                     'ephemeral': 0, 'swap': 0}
            specs = {}
        specs['resources:%s' % rc] = '1'
        specs[FLAVOR_AGGREGATE_SPEC] = rid
        return shape, specs

    def _flavor_up(self, reservation, project_id, rc):
        """The private flavor ``rid``: shape, extra specs, the project's
        access; verified."""
        rid = reservation['id']
        shape, specs = self._flavor_spec(reservation, rc)
        flavor = self._get_flavor(rid)
        if flavor is not None and not _same_shape(flavor, shape):
            # made for an earlier shape by a start that did not finish
            LOG.warning('Flavor %s has another shape: made again', rid)
            self._delete_flavor(rid)
            flavor = None
        if flavor is None:
            try:
                with nova_common.Calls('creating flavor %s' % rid):
                    flavor = self.nova.flavors.create(
                        base.flavor_name(rid), shape['ram'], shape['vcpus'],
                        shape['disk'], flavorid=rid,
                        ephemeral=shape['ephemeral'], swap=shape['swap'],
                        is_public=False)
            except exceptions.CloudUnavailable as exc:
                if not isinstance(exc.__cause__, nova_exc.Conflict):
                    raise
                flavor = self._get_flavor(rid)  # made meanwhile
                if flavor is None:
                    raise
        with nova_common.Calls('setting extra specs of flavor %s' % rid):
            have = flavor.get_keys() or {}
            missing = {k: v for k, v in specs.items() if have.get(k) != v}
            if missing:
                flavor.set_keys(missing)
                have = flavor.get_keys() or {}
        with nova_common.Calls(
                'giving project %s flavor %s' % (project_id, rid)):
            access = self._access(rid)
            if project_id not in access:
                try:
                    self.nova.flavor_access.add_tenant_access(rid, project_id)
                except nova_exc.Conflict:
                    pass
                access = self._access(rid)
        if any(have.get(k) != v for k, v in specs.items()) or \
                project_id not in access:
            raise exceptions.CloudUnavailable(
                service='Nova', reason='flavor %s has extra specs %s and '
                'access %s, not %s and %s' % (rid, have, sorted(access),
                                              specs, project_id))
        return flavor

    def _access(self, rid):
        return {a.tenant_id for a in self.nova.flavor_access.list(flavor=rid)}

    def _get_flavor(self, rid):
        try:
            with nova_common.Calls('reading flavor %s' % rid):
                return self.nova.flavors.get(rid)
        except exceptions.CloudUnavailable as exc:
            if nova_common.nova_not_found(exc):
                return None
            raise

    def _delete_flavor(self, rid):
        try:
            with nova_common.Calls('deleting flavor %s' % rid):
                self.nova.flavors.delete(rid)
        except exceptions.CloudUnavailable as exc:
            if not nova_common.nova_not_found(exc):
                raise
        if self._get_flavor(rid) is not None:
            raise exceptions.CloudUnavailable(
                service='Nova', reason='flavor %s still exists after its '
                'deletion' % rid)

    # -- servers -----------------------------------------------------------

    def _servers(self, rid, children):
        """Ids of the servers to delete: built with the flavor (any
        project), or holding a unit of the reservation's class."""
        ids = set()
        if self._get_flavor(rid) is not None:
            with nova_common.Calls('listing servers of flavor %s' % rid):
                ids |= {s.id for s in self.nova.servers.list(
                    search_opts={'all_tenants': True, 'flavor': rid},
                    limit=-1)}
        rc = base.resource_class(rid)
        for child in children:
            with nova_common.Calls(
                    'reading allocations on %s' % child['name'], 'Placement'):
                held = self.placement.allocations(child['uuid'])
            # the child is shared: only the consumers of this reservation
            ids |= {consumer for consumer, alloc in held.items()
                    if rc in (alloc.get('resources') or {})}
        return ids

    def _delete_servers(self, rid, children):
        """Delete the reservation's servers and wait until none is left
        (a consumer that is no server, e.g. a migration, is waited for)."""
        deadline = time.monotonic() + SERVER_DELETE_TIMEOUT
        asked = {}
        while True:
            ids = self._servers(rid, children)
            if not ids:
                return
            now = time.monotonic()
            for server_id in sorted(ids):
                # a deletion Nova lost is asked again, not every poll
                if now - asked.get(server_id, -SERVER_REDELETE) < \
                        SERVER_REDELETE:
                    continue
                LOG.info('Reservation %s ends: deleting server %s', rid,
                         server_id)
                try:
                    with nova_common.Calls('deleting server %s' % server_id):
                        self.nova.servers.delete(server_id)
                except exceptions.CloudUnavailable as exc:
                    if not nova_common.nova_not_found(exc):
                        raise
                asked[server_id] = now
            if time.monotonic() > deadline:
                raise exceptions.CloudUnavailable(
                    service='Nova', reason='servers %s of reservation %s '
                    'still there %d s after their deletion' % (
                        ', '.join(sorted(ids)), rid, SERVER_DELETE_TIMEOUT))
            time.sleep(POLL_INTERVAL)

    # -- the contract ------------------------------------------------------

    def _booked(self, hosts):
        """``[(facts, units)]`` with units > 0, one entry per host."""
        merged = {}
        for facts, units in hosts:
            if units and units > 0:
                name = _hostname(facts)
                f, n = merged.get(name, (facts, 0))
                merged[name] = (f, n + int(units))
        return [merged[n] for n in sorted(merged)]

    def _bring(self, reservation, project_id, hosts, user_session):
        rid = reservation['id']
        rc = base.resource_class(rid)
        booked = self._booked(hosts)
        # the slots of a reservation whose servers Climate places itself
        # (a woken stack's, with their own flavor) are theirs: its flavor
        # must not boot more servers into them
        self._placement_up(rid, rc, booked,
                           closed=bool(reservation.get('slots_held')))
        agg = self.aggregate_up(
            rid, project_id,
            sorted({nova_common.service(f) for f, _u in booked}))
        group_id = self._server_group(reservation, user_session)
        # the flavor last: the project can boot once everything else is
        # in place
        flavor = self._flavor_up(reservation, project_id, rc)
        return {'flavor_id': flavor.id, 'server_group_id': group_id,
                'aggregate_id': agg.id}

    def prepare(self, reservation, project_id, user_session):
        """What Blazar makes when the reservation is *created*: the
        resource class, the flavor (with the project's access), the
        aggregate (no host yet) and the server group; the start then only
        adds inventories and hosts.

        Templates need this: Heat's ``OS::Blazar::Lease`` is complete as
        soon as the lease is created, and an ``OS::Nova::Server`` of the
        same stack using the reservation's ``flavor_id`` is created right
        after, before the start.  Until the start, Placement has no unit of
        the reservation's class, so a boot with the flavor finds no valid
        host.  Idempotent; calling it again after a change of a pending
        reservation's shape makes the flavor again.

        :returns: the same dict as :meth:`start`.
        """
        rid = reservation['id']
        rc = base.resource_class(rid)
        with nova_common.Calls('creating resource class %s' % rc, 'Placement'):
            self.placement.ensure_resource_class(rc)
        existing = self._aggregate(rid)
        # hosts are the start's business: a prepare after it keeps them
        agg = self.aggregate_up(rid, project_id, sorted(
            nova_common.field(existing, 'hosts', [])
            if existing is not None else []))
        group_id = self._server_group(reservation, user_session)
        flavor = self._flavor_up(reservation, project_id, rc)
        LOG.info('Reservation %s prepared: flavor %s, aggregate %s', rid,
                 flavor.id, agg.id)
        return {'flavor_id': flavor.id, 'server_group_id': group_id,
                'aggregate_id': agg.id}

    def start(self, reservation, project_id, hosts, user_session):
        """Class, inventories, aggregate, server group and flavor (see
        module); a retried start completes what is missing."""
        made = self._bring(reservation, project_id, hosts, user_session)
        LOG.info('Reservation %s started: %s on %d host(s)',
                 reservation['id'], made, len(self._booked(hosts)))
        return made

    def resize(self, reservation, project_id, hosts, user_session):
        """Inventories and aggregate brought to ``hosts``: new hosts get a
        child, changed units a new total, hosts no longer booked lose
        theirs (closed instead while their servers hold units)."""
        made = self._bring(reservation, project_id, hosts, user_session)
        LOG.info('Reservation %s resized to %s', reservation['id'],
                 [(_hostname(f), u) for f, u in self._booked(hosts)])
        return made

    def end(self, reservation, hosts):
        """Servers, flavor, server group, aggregate, inventories, child
        providers and resource class, in that order (see module)."""
        rid = reservation['id']
        rc = base.resource_class(rid)
        children = self._children(rid)
        # children a lost membership would hide: by name under the hosts
        seen = {c['uuid'] for c in children}
        for facts, _units in hosts:
            name = child_name(_hostname(facts))
            with nova_common.Calls('looking up %s' % name, 'Placement'):
                child = self.placement.provider_by_name(name)
            if child is not None and child['uuid'] not in seen:
                children.append(child)
                seen.add(child['uuid'])
        self._fan_out('closing inventories', lambda c: self._close(c, rc),
                      children)
        self._delete_servers(rid, children)
        self._delete_flavor(rid)
        self._server_group_down(reservation)
        self.aggregate_down(rid)
        for child in children:
            if not self._drop(rid, child, rc):
                raise exceptions.CloudUnavailable(
                    service='Placement', reason='provider %s still holds '
                    'allocations of %s' % (child['name'], rc))
        with nova_common.Calls('deleting resource class %s' % rc, 'Placement'):
            self.placement.delete_resource_class(rc)
            left = self.placement.resource_class_exists(rc)
        if left or self._children(rid):
            raise exceptions.CloudUnavailable(
                service='Placement', reason='resource class %s or Placement '
                'aggregate %s left after the end' % (rc, rid))
        LOG.info('Reservation %s ended: nothing of it left in Nova or '
                 'Placement', rid)


def _same_shape(flavor, shape):
    return (flavor.ram == shape['ram'] and flavor.vcpus == shape['vcpus']
            and (flavor.disk or 0) == shape['disk']
            and (nova_common.field(flavor, 'OS-FLV-EXT-DATA:ephemeral', 0)
                 or 0) == (shape['ephemeral'] or 0)
            and (nova_common.field(flavor, 'swap', 0) or 0)
            == (shape['swap'] or 0))
