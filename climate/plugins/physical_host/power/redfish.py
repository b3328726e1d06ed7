"""The ``redfish`` power backend: each host's ComputerSystem on its BMC,
through the sushy library (``pip install climate[power]``).

**Which system.**  The first of these that a host has:

1. its ``redfish_system`` extra capability: the URL of the
   ComputerSystem, ``https://bmc1.example/redfish/v1/Systems/1``;
2. its ``bmc_address`` extra capability: the BMC's address
   (``bmc1.example``, ``10.0.0.5:8443``, ``https://bmc1.example``; no
   scheme means https), whose one ComputerSystem is the host's (a URL with
   a ``/redfish/v1/Systems/...`` path names the system, as 1.);
3. ``[power] redfish_systems``: host name (``hypervisor_hostname``, else
   ``service_name``) to system URL.

Every BMC is reached with ``[power] redfish_username`` and
``redfish_password`` (a session where the BMC offers them, else basic
authentication) and TLS as ``[power] redfish_verify`` says.

**Power.**  ``PowerState`` ``On`` / ``Off`` are the host's state,
``PoweringOn`` / ``PoweringOff`` a transition.  Power on is ``Reset``
with ``On`` (``ForceOn`` where ``On`` is not offered); power off a
``GracefulShutdown`` (the OS shuts down cleanly), then ``ForceOff`` if the
host is still on ``[power] action_timeout`` seconds later (a BMC without
graceful shutdown gets ``ForceOff`` at once).

**Readings.**  :meth:`RedfishPowerBackend.power_watts` reads the Power
resource of the system's chassis: the sum of ``PowerControl``
``PowerConsumedWatts``, else of the power supplies'
``LastPowerOutputWatts``.  A chassis that holds other systems too (a
blade enclosure) is not read: its watts are not this host's.

Errors of the BMC (unreachable, refusing, a system it does not have)
are raised as :class:`climate.exceptions.CloudUnavailable` naming
``Redfish``.  sushy is imported when the backend is made, so Climate runs
without it unless ``[power] backend = redfish``.
"""

import importlib
import threading
import urllib.parse

from oslo_log import log as logging

from climate.clients import calls as cloud_calls
from climate import exceptions
from climate.plugins import backend_loader
from climate.plugins.physical_host.power import base

LOG = logging.getLogger(__name__)

SERVICE = 'Redfish'
ROOT_PREFIX = '/redfish/v1/'
SYSTEMS_PATH = '/redfish/v1/Systems/'
#: Seconds a BMC may take to answer one request, and to accept a
#: connection (a dead BMC must fail the action soon: it is retried).
CALL_TIMEOUT = 30
CONNECT_TIMEOUT = 10


def system_location(address):
    """``(base URL, system path or None)`` of a ``redfish_system`` or
    ``bmc_address`` value (see module)."""
    if '://' not in address:
        address = 'https://' + address
    parts = urllib.parse.urlsplit(address)
    base_url = '%s://%s' % (parts.scheme, parts.netloc)
    path = parts.path.rstrip('/')
    if path.startswith(SYSTEMS_PATH) and len(path) > len(SYSTEMS_PATH):
        return base_url, path
    return base_url, None


def verify_setting(value):
    """``[power] redfish_verify`` as sushy takes it: a bool or a path."""
    lowered = (value or '').strip().lower()
    if lowered in ('true', 'yes', '1', ''):
        return True
    if lowered in ('false', 'no', '0'):
        return False
    return value


class RedfishPowerBackend(base.PowerBackend):
    name = 'redfish'
    service = SERVICE
    #: Attempts of a request whose connection failed (or of a GET answered
    #: 5xx), and the seconds between two: sushy's own defaults wait 30 s,
    #: where a failed action is better retried later by the event engine.
    server_retries = 2
    server_retry_delay = 1.0

    def __init__(self, conf):
        super().__init__(conf)
        # imported here: sushy is the "power" extra, needed only here
        try:
            self.sushy = importlib.import_module('sushy')
        except ImportError as exc:
            raise backend_loader.BackendUnavailable(
                'the redfish power backend needs sushy (pip install '
                '"climate[power]"): %s' % exc) from exc
        self._roots = {}
        self._lock = threading.Lock()

    # -- plumbing ----------------------------------------------------------

    def calls(self, doing):
        return cloud_calls.CloudCalls(
            doing, SERVICE, (self.sushy.exceptions.SushyError,))

    def location(self, host):
        """``(base URL, system path or None)`` of ``host`` (see module)."""
        for key in ('redfish_system', 'bmc_address'):
            if host.get(key):
                return system_location(host[key])
        systems = self.conf.power.redfish_systems or {}
        for name in (host.get('hypervisor_hostname'),
                     host.get('service_name')):
            if name and systems.get(name):
                return system_location(systems[name])
        raise exceptions.CloudUnavailable(
            service=SERVICE, reason='no Redfish system is known for host '
            '%s: give it a redfish_system or bmc_address extra capability '
            'or list it in [power] redfish_systems' % base.host_label(host))

    def _root(self, base_url):
        """The sushy root of a BMC, connected (and authenticated) once."""
        with self._lock:
            root = self._roots.get(base_url)
        if root is not None:
            return root
        opts = self.conf.power
        with self.calls('connecting to %s' % base_url):
            root = self.sushy.Sushy(
                base_url, username=opts.redfish_username,
                password=opts.redfish_password,
                verify=verify_setting(opts.redfish_verify),
                root_prefix=ROOT_PREFIX, read_timeout=CALL_TIMEOUT,
                connect_timeout=CONNECT_TIMEOUT,
                server_side_retries=self.server_retries,
                server_side_retries_delay=self.server_retry_delay)
        with self._lock:
            self._roots[base_url] = root
        return root

    def _forget(self, base_url):
        """Drop a BMC's connection after a failure (its session may be
        gone, e.g. after a BMC reboot): the next call connects anew."""
        with self._lock:
            self._roots.pop(base_url, None)

    def _on_system(self, host, doing, action):
        """``action(system)`` on ``host``'s ComputerSystem, errors as
        CloudUnavailable."""
        base_url, path = self.location(host)
        label = '%s of host %s' % (doing, base.host_label(host))
        root = self._root(base_url)
        try:
            with self.calls('%s (%s)' % (label, path or base_url)):
                return action(root.get_system(path))
        except exceptions.CloudUnavailable:
            self._forget(base_url)
            raise

    # -- the contract ------------------------------------------------------

    def state(self, host):
        states = self.sushy.PowerState
        read = {states.ON: (base.ON, None), states.OFF: (base.OFF, None),
                states.POWERING_ON: (base.OFF, base.ON),
                states.POWERING_OFF: (base.ON, base.OFF)}
        power, target = read.get(
            self._on_system(host, 'reading the power state',
                            lambda system: system.power_state),
            (base.UNKNOWN, None))
        return base.PowerState(power, target)

    def _reset(self, host, choices):
        """Reset with the first of ``choices`` the system offers."""
        def reset(system):
            allowed = system.get_allowed_reset_system_values()
            value = next((c for c in choices if c in allowed), choices[-1])
            LOG.info('Redfish: %s of host %s', value.value,
                     base.host_label(host))
            system.reset_system(value)
        self._on_system(host, 'resetting', reset)

    def request(self, host, wanted, current):
        reset = self.sushy.ResetType
        if wanted == base.ON:
            self._reset(host, (reset.ON, reset.FORCE_ON))
        else:
            self._reset(host, (reset.GRACEFUL_SHUTDOWN, reset.FORCE_OFF))

    def power_off(self, host, until=None):
        """Graceful shutdown, forced off when it has not worked within
        ``[power] action_timeout``."""
        try:
            return self.reach(host, base.OFF)
        except base.TransitionTimeout:
            LOG.warning('Redfish: host %s did not shut down within %d s; '
                        'forcing it off', base.host_label(host),
                        self.action_timeout)
        self._reset(host, (self.sushy.ResetType.FORCE_OFF,))
        return self.wait(host, base.OFF)

    def power_watts(self, host):
        def read(system):
            for chassis in system.chassis:
                held = (chassis.json.get('Links') or {}).get(
                    'ComputerSystems') or []
                if len(held) > 1:
                    continue
                try:
                    power = chassis.power
                except (self.sushy.exceptions.MissingAttributeError,
                        self.sushy.exceptions.ResourceNotFoundError):
                    continue
                watts = _watts(power)
                if watts is not None:
                    return watts
            return None
        return self._on_system(host, 'reading the power', read)


def _watts(power):
    """Watts a Redfish Power resource reports (see module), or None.  Read
    from the document itself: sushy rounds the supplies' readings down to
    whole watts and does not model PowerControl."""
    def numbers(entries, key):
        return [float(e[key]) for e in entries or []
                if isinstance(e.get(key), (int, float))]

    found = numbers(power.json.get('PowerControl'), 'PowerConsumedWatts') \
        or numbers(power.json.get('PowerSupplies'), 'LastPowerOutputWatts')
    return sum(found) if found else None
