"""Climate: a reservation service for OpenStack clouds."""

import warnings

from oslo_service import backend as _oslo_service_backend

# oslo.messaging runs on oslo.service; Climate uses native threads and never
# eventlet, so oslo.service's threading backend is chosen before anything
# starts.  (eventlet is still installed as oslo.service's dependency, and
# futurist imports it if present: that import is harmless and its
# deprecation warning is noise.)
_oslo_service_backend.register_backend_default_hook(
    lambda: _oslo_service_backend.BackendType.THREADING)
warnings.filterwarnings('ignore', message='.*Eventlet is deprecated.*')
