"""The contract between the ``physical:host`` plugin and the cloud.

An inventory backend says where hosts live and moves them at lease start
and end.  Two are shipped, chosen by ``[hosts] inventory``:

* ``nova`` (``backends/nova.py``): hypervisors through novaclient; every
  reservable host sits in the ``[hosts] aggregate_freepool_name`` aggregate
  (metadata ``climate:freepool=true``); at start a reservation aggregate
  named after the reservation id (metadata ``climate:owner=<project id>``,
  ``climate:reservation=<reservation id>``) receives the hosts.
* ``static`` (``backends/static.py``): operator-declared hosts with
  properties, no cloud calls; start and end only notify.

``hosts`` arguments are lists of facts dicts as returned by
:meth:`InventoryBackend.describe_host` (at least ``hypervisor_hostname`` and
``service_name``).  Every method is idempotent: the event engine retries a
failed start or end, and a crashed manager's event runs again elsewhere, so
each step must finish a half-done job rather than fail or do it twice.
Cloud errors are raised as :class:`climate.exceptions.CloudUnavailable`,
which makes the event retry with backoff.
"""

import abc

#: Servers :meth:`InventoryBackend.host_servers` lists at most.
MAX_SERVERS_SHOWN = 10

#: The capacity classes of a compute host in the ledger: ``(resource
#: class, fact, allocation ratio key)``.
CAPACITY_FACTS = (('VCPU', 'vcpus', 'cpu_allocation_ratio'),
                  ('MEMORY_MB', 'memory_mb', 'ram_allocation_ratio'),
                  ('DISK_GB', 'local_gb', 'disk_allocation_ratio'))


class InventoryBackend(abc.ABC):
    """Where hosts live in the cloud. Every method is idempotent; the nova
    backend verifies each step (re-reads what it changed)."""

    #: ``'nova'`` or ``'static'``: the value of ``[hosts] inventory``.
    name = None
    #: False for a backend whose start and end call no cloud service (see
    #: ``ResourcePlugin.acts_in_cloud``).
    acts_in_cloud = True

    def __init__(self, conf):
        """``conf`` is the oslo.config object (``[hosts]`` is registered)."""
        self.conf = conf

    @abc.abstractmethod
    def describe_host(self, name):
        """Facts of a hypervisor by hypervisor_hostname (or service host name):
        dict(hypervisor_hostname, service_name, vcpus, memory_mb, local_gb,
        cpu_info, hypervisor_type, hypervisor_version). Raises
        climate.exceptions.HostNotInCloud (404) when the cloud doesn't know
        it, MultipleHostsFound (409) when the name picks several."""

    #: Whether :meth:`host_has_servers` reads real servers (idle reclaim
    #: trusts only such a backend's "no server").
    reports_servers = True

    @abc.abstractmethod
    def host_has_servers(self, host):
        """True when servers run on ``host`` (a facts dict)."""

    @abc.abstractmethod
    def host_servers(self, host):
        """The servers running on ``host`` (a facts dict), as Blazar names
        them in its error: ``[{'name': ..., 'uuid': ...}]``, at most
        :data:`MAX_SERVERS_SHOWN`.  The inventory refuses to add or remove
        a host with servers (409 HostHasServers)."""

    @abc.abstractmethod
    def enroll(self, host):
        """Inventory create: put ``host`` into the freepool (idempotent)."""

    @abc.abstractmethod
    def withdraw(self, host):
        """Inventory delete: take ``host`` out of the freepool (idempotent;
        a host already out is fine)."""

    @abc.abstractmethod
    def start(self, reservation_id, project_id, hosts):
        """Lease start: create (or find) the aggregate named
        ``reservation_id`` with metadata ``{'climate:owner': project_id,
        'climate:reservation': reservation_id}`` and move ``hosts`` out of
        the freepool into it.  A retried or half-done start completes."""

    @abc.abstractmethod
    def snapshot(self, reservation_id, hosts):
        """``before_end: snapshot``: snapshot the servers running on
        ``hosts`` (idempotent: a server already snapshotted for this
        reservation is not snapshotted again)."""

    @abc.abstractmethod
    def end(self, reservation_id, hosts):
        """Lease end: delete the servers on ``hosts``, put the hosts back in
        the freepool and delete the aggregate ``reservation_id``.  A
        retried or half-done end completes; an aggregate already gone is
        fine."""

    @abc.abstractmethod
    def replace(self, reservation_id, project_id, old_hosts, new_hosts):
        """Healing swap in an active reservation: ``old_hosts`` leave the
        aggregate ``reservation_id`` (back to the freepool), ``new_hosts``
        come from the freepool into it."""

    def capacity(self, facts):
        """What the host ``facts`` offers to the capacity ledger:
        ``{resource class: {'total', 'reserved', 'allocation_ratio',
        'min_unit', 'max_unit', 'step_size'}}`` for ``VCPU``,
        ``MEMORY_MB`` and ``DISK_GB`` (the caller adds ``HOST`` and
        leaves out classes with a total of 0).

        Default, from the facts themselves: ``vcpus``, ``memory_mb`` and
        ``local_gb`` with the ratios ``cpu_allocation_ratio``,
        ``ram_allocation_ratio``, ``disk_allocation_ratio`` (1.0 when
        absent or null), nothing reserved, one unit up to the whole
        total.  A backend that knows better (Placement) overrides it.
        """
        found = {}
        for cls, fact, ratio in CAPACITY_FACTS:
            total = int(facts.get(fact) or 0)
            given = facts.get(ratio, 1.0)
            found[cls] = {'total': total, 'reserved': 0,
                          'allocation_ratio': 1.0 if given is None
                          else float(given),
                          'min_unit': 1, 'max_unit': max(1, total),
                          'step_size': 1}
        return found

    @abc.abstractmethod
    def down_hosts(self, hosts):
        """The subset of ``hosts`` (facts dicts) whose nova-compute service
        is down or disabled; the static backend reports none."""
