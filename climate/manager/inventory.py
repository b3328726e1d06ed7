"""What the manager's RPC endpoints of an admin inventory share
(``/v1/floatingips``...): the plugin they need, answering "not enabled"
(404) when ``[manager] plugins`` lacks it, and the inventory object made
on first use.

A subclass names ``resource_type``, ``kind`` (for the 404's sentence) and
``entry_point``, and makes its inventory in :meth:`make_inventory`; its
methods wear :data:`user_errors`, so that a ``ClimateException`` reaches
the API as the same class and is not logged as a manager failure.
"""

import oslo_messaging as messaging

from climate import exceptions

user_errors = messaging.expected_exceptions(exceptions.ClimateException)


class InventoryEndpoint:
    """An inventory over RPC; every method takes the caller's context
    (authorization is the API's job)."""

    target = messaging.Target(version='1.0')
    #: The plugin's resource type, a name for its reservations and the
    #: entry point that loads it.
    resource_type = None
    kind = None
    entry_point = None

    def __init__(self, plugins):
        self._plugins = plugins
        self._inventory = None

    def plugin(self):
        """The loaded plugin; NotFound (404) when none is."""
        return self._plugins.enabled(self.resource_type, self.kind,
                                     self.entry_point)

    def make_inventory(self, plugin):
        """The inventory object of ``plugin``."""
        raise NotImplementedError

    @property
    def inventory(self):
        plugin = self.plugin()
        if self._inventory is None:
            self._inventory = self.make_inventory(plugin)
        return self._inventory
