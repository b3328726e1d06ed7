"""A sleeping Nova host's ``nova-compute`` service is disabled, with a
reason naming Climate.

Wraps a power backend when ``[hosts] inventory = nova`` and ``[power]
manage_nova_service`` (``climate.plugins.physical_host.power.load``):

* **before power off**, the host's compute service is disabled with the
  reason ``climate: powered off until <time>``
  (:data:`climate.plugins.physical_host.backends.nova.POWER_DISABLED_REASON`),
  so that Nova's scheduler places nothing on it while it goes down and
  operators see why it is closed; then, with the service closed, the host
  must run no server (servers booted without a reservation may land on
  freepool hosts): if one runs, the service is opened again and the
  power off refused (:class:`~climate.plugins.physical_host.power.base.
  HostBusy`, retried later);
* **after power on**, once the switch says the host is on, the service is
  enabled again.

Only a service whose reason starts with ``climate: powered off`` is ever
enabled: a service an operator (or a best-effort hunt) disabled stays as
it is, and its reason is not overwritten.  Each step reads the service
first and does only what is missing, so a repeated action is harmless.
"""

import datetime
import threading

from oslo_log import log as logging

from climate.clients import nova as nova_clients
from climate.plugins.physical_host.backends import base as inventory_base
from climate.plugins.physical_host.backends import nova as nova_backend
from climate.plugins.physical_host.power import base

LOG = logging.getLogger(__name__)

REASON = nova_backend.POWER_DISABLED_REASON
BINARY = 'nova-compute'


def compute_host(host):
    """The host name Nova's services and server filters know ``host`` by."""
    return host.get('service_name') or host['hypervisor_hostname']


#: Whether a compute service was disabled by a power off (the inventory
#: backend reads it too: such a host is asleep, not down).
closed_by_power = nova_backend.closed_by_power


def until_text(until):
    """``until`` as the disabled reason shows it (a datetime in UTC, ISO
    8601, to the second)."""
    if until is None:
        return 'its next booking'
    if isinstance(until, datetime.datetime):
        if until.utcoffset() is not None:
            until = until.astimezone(datetime.timezone.utc).replace(
                tzinfo=None)
        return until.strftime('%Y-%m-%dT%H:%M:%SZ')
    return str(until)


class NovaServiceGuard(base.PowerBackend):
    """``inner``'s power actions with the host's compute service closed
    while it sleeps (see module)."""

    def __init__(self, conf, inner, nova=None):
        """:param nova: a novaclient client (default: Climate's service
            client, made on first use)."""
        super().__init__(conf)
        self.inner = inner
        self.name = inner.name
        self.service = inner.service
        self._nova = nova
        self._lock = threading.Lock()

    @property
    def nova(self):
        with self._lock:
            if self._nova is None:
                with nova_backend.Calls('connecting'):
                    self._nova = nova_clients.bounded_service_client(
                        self.conf, nova_backend.CALL_TIMEOUT)
            return self._nova

    def _service(self, host):
        """The host's compute service, or None when Nova has none."""
        name = compute_host(host)
        with nova_backend.Calls('reading the compute service of %s' % name):
            services = self.nova.services.list(host=name, binary=BINARY)
        found = [s for s in services if s.host == name]
        return found[0] if found else None

    def _close(self, host, until):
        """Disable the service unless it is; True when Climate's power
        off holds it closed."""
        service = self._service(host)
        if service is None:
            LOG.warning('Host %s has no nova-compute service: powering it '
                        'off without closing one', compute_host(host))
            return False
        reason = REASON % until_text(until)
        if service.status == 'disabled':
            if not closed_by_power(service):
                LOG.info('The compute service of %s is disabled (%s): left '
                         'as it is', service.host, service.disabled_reason)
                return False
            if service.disabled_reason == reason:
                return True
        with nova_backend.Calls(
                'disabling the compute service of %s' % service.host):
            self.nova.services.disable_log_reason(service.id, reason)
        LOG.info('Compute service of %s disabled: %s', service.host, reason)
        return True

    def _open(self, host):
        """Enable the service if a power off disabled it."""
        service = self._service(host)
        if service is None or not closed_by_power(service):
            return
        with nova_backend.Calls(
                'enabling the compute service of %s' % service.host):
            self.nova.services.enable(service.id)
        LOG.info('Compute service of %s enabled: the host is on',
                 service.host)

    def _servers(self, host):
        name = compute_host(host)
        with nova_backend.Calls('listing servers on %s' % name):
            return self.nova.servers.list(
                search_opts={'all_tenants': True, 'host': name},
                limit=inventory_base.MAX_SERVERS_SHOWN)

    # -- the contract ------------------------------------------------------

    def state(self, host):
        return self.inner.state(host)

    def request(self, host, wanted, current):
        self.inner.request(host, wanted, current)

    def power_watts(self, host):
        return self.inner.power_watts(host)

    def power_off(self, host, until=None):
        """Close the compute service, check no server runs, power off.

        :param until: when the host is needed again (text or datetime),
            shown in the service's disabled reason.
        """
        if not self.inner.state(host).reached(base.OFF):
            closed = self._close(host, until)
            servers = self._servers(host)
            if servers:
                if closed:
                    self._open(host)
                raise base.HostBusy(
                    service='Nova', reason='servers %s run on %s: not '
                    'powered off' % (', '.join(s.id for s in servers),
                                     compute_host(host)))
        else:
            # already off (a repeated action): the service stays closed
            self._close(host, until)
        return self.inner.power_off(host, until)

    def power_on(self, host):
        """Power on, then open the compute service once the host is on
        (a host still powering on keeps it closed: the action is
        retried).  On a host that is on already this only opens a service
        a power off left closed (one refused for servers whose reopening
        failed, say)."""
        found = self.inner.power_on(host)
        if found.reached(base.ON):
            self._open(host)
        return found
