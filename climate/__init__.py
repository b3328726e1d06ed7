"""Climate: a reservation service for OpenStack clouds."""

import sys

# Climate runs on native threads and never on eventlet.  eventlet is still
# installed (oslo.service depends on it), and futurist, which oslo.messaging
# imports, imports it whenever it can: that printed eventlet's multi-line
# EventletDeprecationWarning at every start of climate-all, climate-api and
# climate-manager, and cost ~0.3 s and ~9 MiB.  A None entry in sys.modules
# makes ``import eventlet`` raise ImportError, so futurist, oslo.utils'
# eventletutils and oslo.cache take their no-eventlet path.  (Left alone if
# the hosting process imported eventlet before Climate.)
sys.modules.setdefault('eventlet', None)

from oslo_service import backend as _oslo_service_backend  # noqa: E402

# oslo.messaging runs on oslo.service: its threading backend is chosen
# before anything starts.
_oslo_service_backend.register_backend_default_hook(
    lambda: _oslo_service_backend.BackendType.THREADING)
