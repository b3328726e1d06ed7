"""/v1/volumes: availability of volume capacity (microversion 1.6).

``POST /v1/volumes/availability`` (any project reader; see
doc/source/volumes.rst): a JSON body naming the volume reservation and
the window, answered by the manager (``climate.manager.volume_pools``).
"""

from climate.api import microversion
from climate.api.v1 import instances

AVAILABILITY_VERSION = microversion.Version.parse('1.6')


class VolumesController(instances.AvailabilityController):
    """``/v1/volumes``."""

    VERSION = AVAILABILITY_VERSION
    RULE = 'climate:volumes:availability'
    METHOD = 'volume_availability'
