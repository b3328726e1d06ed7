"""The contract between Climate's power plan and a host's power switch.

The power plan (``climate.scheduling.power``) decides which reservable
hosts sleep and when they must be up again; a power backend carries that
out on one host at a time.  Three are shipped, chosen by ``[power]
backend`` (``climate.plugins.physical_host.power.load``):

* ``static`` (``static.py``): records the states, calls nothing;
* ``ironic`` (``ironic.py``): the node's power state through the Bare
  Metal API;
* ``redfish`` (``redfish.py``): the host's ComputerSystem on its BMC,
  through sushy.

With the ``nova`` inventory, ``nova_service.py`` wraps the backend so
that a sleeping host's ``nova-compute`` service is disabled.

``host`` arguments are the facts dicts of the inventory backends
(``hypervisor_hostname``, ``service_name``, ...) with the host's extra
capabilities merged in; each backend documents the keys that map a host
to its switch (``ironic_node``, ``redfish_system``, ``bmc_address``).

**Idempotent.**  Powering on a host that is on (or already powering on)
asks nothing; the event engine may run a power action again after a
failure or a crash, so each call finishes a half-done job.  A call waits
up to ``[power] action_timeout`` seconds for the host to reach the state
asked.  Every failure of the switch (unreachable BMC, Ironic down, a node
locked by a conductor, a transition not finished in time) is raised as
:class:`climate.exceptions.CloudUnavailable`: the action is retried
later and no lease ever waits on it.
"""

import abc
import collections
import time

from climate import exceptions

ON = 'on'
OFF = 'off'
UNKNOWN = 'unknown'


class PowerState(collections.namedtuple('PowerState', 'power target')):
    """What a switch says of a host: ``power`` is ``'on'``, ``'off'`` or
    ``'unknown'``; ``target`` is the state a transition in progress heads
    for (``'on'`` / ``'off'``), or None when none is (or the protocol
    does not tell)."""

    __slots__ = ()

    @property
    def transitioning(self):
        return self.target is not None

    def reached(self, wanted):
        """Whether the host is ``wanted`` with nothing left to do."""
        return self.power == wanted and self.target in (None, wanted)


class HostBusy(exceptions.CloudUnavailable):
    """A host that must not be powered off now (servers run on it); like
    any CloudUnavailable, the action is retried later."""


class TransitionTimeout(exceptions.CloudUnavailable):
    """A host that did not reach the state asked within the wait."""


def host_label(host):
    """The name a host goes by in messages and maps."""
    return host.get('hypervisor_hostname') or host.get('service_name')


class PowerBackend(abc.ABC):
    """A host's power switch (see module)."""

    #: The value of ``[power] backend``.
    name = None
    #: False for a backend that calls nothing.
    acts_in_cloud = True
    #: Seconds between two looks at a host in transition.
    poll_interval = 1.0
    #: The service named in CloudUnavailable.
    service = None

    def __init__(self, conf):
        """``conf`` is the oslo.config object (``[power]`` is registered)."""
        self.conf = conf

    @property
    def action_timeout(self):
        return self.conf.power.action_timeout

    @abc.abstractmethod
    def state(self, host):
        """The :class:`PowerState` of ``host`` as the switch tells it."""

    @abc.abstractmethod
    def request(self, host, wanted, current):
        """Ask the switch once to bring ``host`` to ``wanted`` (``'on'`` or
        ``'off'``); ``current`` is the PowerState just read.  Called only
        when the host is neither in ``wanted`` nor heading for it."""

    def power_watts(self, host):
        """Watts the host draws now as its switch measures them, or None
        when it does not (the power plan then counts ``[power]
        idle_watts``)."""
        return None

    def power_on(self, host):
        """Bring ``host`` on (nothing asked when it is on or powering on);
        returns its PowerState."""
        return self.reach(host, ON)

    def power_off(self, host, until=None):
        """Bring ``host`` off (nothing asked when it is off or powering
        off); returns its PowerState.  ``until`` (when the host is needed
        again: a datetime or text) is for the record (the Nova service
        step shows it)."""
        return self.reach(host, OFF)

    def reach(self, host, wanted, timeout=None):
        """Ask for ``wanted`` unless the host is there or heading there,
        then wait for it (``timeout``: ``[power] action_timeout``)."""
        current = self.state(host)
        if current.reached(wanted):
            return current
        if current.target != wanted:
            self.request(host, wanted, current)
        return self.wait(host, wanted, timeout)

    def wait(self, host, wanted, timeout=None):
        """The PowerState once ``host`` has reached ``wanted``; after
        ``timeout`` seconds (``[power] action_timeout``) without it,
        :class:`TransitionTimeout`.  A timeout of 0 waits for nothing and returns
        what the switch says now."""
        timeout = self.action_timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        while True:
            current = self.state(host)
            if current.reached(wanted) or timeout == 0:
                return current
            if time.monotonic() >= deadline:
                raise TransitionTimeout(
                    service=self.service or self.name,
                    reason='%s is still %s%s %g s after it was asked to be '
                    '%s' % (host_label(host), current.power,
                            ' (heading %s)' % current.target
                            if current.target else '', timeout, wanted))
            time.sleep(min(self.poll_interval,
                           max(0.0, deadline - time.monotonic())))
