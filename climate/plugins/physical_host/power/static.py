"""The ``static`` power backend: the plan is recorded, nothing is called.

The embedded default (``climate-all``) and a site without a power
protocol run the power plan with it: each host's state is kept in
memory, every action is logged and kept in :attr:`StaticPowerBackend.
history` (the last :data:`HISTORY` of them), so that the plan can be
watched without touching a machine.  A host the backend has not seen is
on; a state to start from may be given (``states``).
"""

import collections
import threading
import time

from oslo_log import log as logging

from climate.plugins.physical_host.power import base

LOG = logging.getLogger(__name__)

#: Actions :attr:`StaticPowerBackend.history` keeps.
HISTORY = 1000


class StaticPowerBackend(base.PowerBackend):
    name = 'static'
    acts_in_cloud = False

    def __init__(self, conf, states=None):
        """:param states: ``{host name: 'on' | 'off'}`` to start from."""
        super().__init__(conf)
        self._lock = threading.Lock()
        self._states = dict(states or {})
        #: ``(time.time(), host name, 'on' | 'off')`` of each action asked.
        self.history = collections.deque(maxlen=HISTORY)

    def state(self, host):
        with self._lock:
            return base.PowerState(
                self._states.get(base.host_label(host), base.ON), None)

    def request(self, host, wanted, current):
        name = base.host_label(host)
        with self._lock:
            self._states[name] = wanted
            self.history.append((time.time(), name, wanted))
        LOG.info('Static power: host %s is now %s (nothing called)', name,
                 wanted)

    def wait(self, host, wanted, timeout=None):
        # nothing moves here: the state is what was recorded
        return self.state(host)
