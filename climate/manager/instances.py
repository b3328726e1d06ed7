"""The manager's RPC endpoint for ``/v1/instances`` (microversion 1.3).

It finds the loaded ``virtual:instance`` plugin and answers "not
enabled" (404) when ``[manager] plugins`` lacks it.
"""

import oslo_messaging as messaging

from climate import exceptions
from climate.plugins.virtual_instance import availability

RESOURCE_TYPE = 'virtual:instance'

_user_errors = messaging.expected_exceptions(exceptions.ClimateException)


class InstancesEndpoint:
    """What the API may call about instance slots; every method takes the
    caller's context (authorization is the API's job)."""

    target = messaging.Target(version='1.0')

    def __init__(self, plugins):
        self._plugins = plugins

    @property
    def plugin(self):
        return self._plugins.enabled(RESOURCE_TYPE, 'Instance',
                                     'virtual.instance.plugin')

    @_user_errors
    def instance_availability(self, ctx, query):
        """The earliest windows where the slots asked for fit
        (``climate.plugins.virtual_instance.availability``)."""
        return availability.search(self.plugin, ctx, query)
