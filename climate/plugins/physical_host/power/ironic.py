"""The ``ironic`` power backend: node power states through the Bare Metal
API, as Climate's service user.

**Which node.**  A host's node is its ``ironic_node`` extra capability
(the node's UUID or name), else its ``hypervisor_hostname``: with
nova-compute's ironic driver the hypervisor name *is* the node's UUID,
and a testbed that names its nodes after its hosts needs nothing either.

**Calls.**  ``GET /v1/nodes/{node}`` reads ``power_state`` (``"power
on"``, ``"power off"``, null when Ironic cannot tell) and
``target_power_state`` (non-null while a transition runs); ``PUT
/v1/nodes/{node}/states/power`` with ``{"target": "power on"}`` or
``"power off"`` asks for one and is answered 202.  Every request carries
the microversion ``[power] ironic_api_version``
(``X-OpenStack-Ironic-API-Version`` and ``OpenStack-API-Version:
baremetal``, set by keystoneauth).  The endpoint comes from the catalog
(``[power] ironic_region_name``, ``ironic_interface``) or ``[power]
ironic_endpoint_override``; the session is ``[service_auth]``'s, whose
user needs a role Ironic's policy lets change power states (admin, or
the ``baremetal_admin`` of older policies).

**Errors.**  409 (``NodeLocked``: a conductor holds the node for another
action), 503 (``NoFreeConductorWorkers``), 404 (no such node), other
refusals and transport failures are raised as
:class:`climate.exceptions.CloudUnavailable` with Ironic's
``faultstring``: the power action is retried later.
"""

import json
import threading

from keystoneauth1 import adapter
from keystoneauth1 import exceptions as ks_exc

from climate.clients import calls as cloud_calls
from climate.clients import keystone
from climate.plugins.physical_host.power import base

SERVICE = 'Ironic'
#: Seconds one Bare Metal API call may take (the power action itself is
#: asynchronous: its wait is ``[power] action_timeout``).
CALL_TIMEOUT = 30
#: The node fields read.
FIELDS = 'uuid,name,power_state,target_power_state,reservation,last_error'
#: Ironic's power states as this module reports them.
POWER = {'power on': base.ON, 'power off': base.OFF}
#: Where Ironic's target power states lead.
TARGETS = {'power on': base.ON, 'rebooting': base.ON,
           'soft rebooting': base.ON, 'power off': base.OFF,
           'soft power off': base.OFF}
#: What is asked of Ironic for each state.
ASK = {base.ON: 'power on', base.OFF: 'power off'}


def node_ident(host):
    """The UUID or name of ``host``'s Ironic node (see module)."""
    return host.get('ironic_node') or host['hypervisor_hostname']


def fault(exc):
    """The ``faultstring`` of an Ironic error answer, else the error."""
    response = getattr(exc, 'response', None)
    try:
        message = response.json().get('error_message')
        # Ironic's body holds the fault as a JSON document in a string
        if isinstance(message, str):
            message = json.loads(message)
        text = message.get('faultstring')
    except (AttributeError, TypeError, ValueError):
        text = None
    status = getattr(exc, 'http_status', None)
    if text:
        return '%s%s' % ('HTTP %s: ' % status if status else '', text)
    return cloud_calls.default_message(exc)


class Calls(cloud_calls.CloudCalls):
    """Keystoneauth errors (HTTP answers and transport) as CloudUnavailable
    quoting Ironic's fault."""

    def __init__(self, doing):
        super().__init__(doing, SERVICE, (ks_exc.ClientException,),
                         message=fault)


class IronicPowerBackend(base.PowerBackend):
    name = 'ironic'
    service = SERVICE

    def __init__(self, conf, session=None):
        """:param session: a keystoneauth session (default: Climate's
            service session, made on first use)."""
        super().__init__(conf)
        self._session = session
        self._api = None
        self._lock = threading.Lock()

    @property
    def api(self):
        """A keystoneauth Adapter on the Bare Metal API."""
        with self._lock:
            if self._api is None:
                opts = self.conf.power
                with Calls('connecting'):
                    sess = self._session or keystone.service_session(
                        self.conf)
                self._api = adapter.Adapter(
                    sess, service_type='baremetal',
                    interface=opts.ironic_interface,
                    region_name=opts.ironic_region_name,
                    endpoint_override=opts.ironic_endpoint_override,
                    default_microversion=opts.ironic_api_version)
            return self._api

    def _bounded(self):
        """A hung Ironic must fail the action (retried), not hold a
        manager worker: a timeout unless ``[service_auth]`` sets one."""
        if getattr(self.api.session, 'timeout', None) is None:
            return {'timeout': CALL_TIMEOUT}
        return {}

    def node(self, host):
        """The node's fields :data:`FIELDS` as Ironic answers them."""
        ident = node_ident(host)
        with Calls('reading node %s' % ident):
            return self.api.get('/v1/nodes/%s' % ident,
                                params={'fields': FIELDS},
                                **self._bounded()).json()

    def state(self, host):
        node = self.node(host)
        return base.PowerState(
            POWER.get(node.get('power_state'), base.UNKNOWN),
            TARGETS.get(node.get('target_power_state')))

    def request(self, host, wanted, current):
        ident = node_ident(host)
        with Calls('asking node %s for %s' % (ident, ASK[wanted])):
            self.api.put('/v1/nodes/%s/states/power' % ident,
                         json={'target': ASK[wanted]}, **self._bounded())
