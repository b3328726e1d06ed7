"""Values computed from an inventory, kept while it does not change."""

import collections
import threading

from climate.db import hosts as db_hosts


class InventoryVersionCache:
    """An LRU of values computed from the host inventory, reused while
    ``computehost_inventory_version`` (bumped in the transaction of every
    inventory change) stays the same.  The version is read before the
    value is computed, so an entry is never older than its version.
    ``version`` (``version(ctx)``) reads another counter of the same
    kind (the volume pools' ``climate.db.volume_pools.inventory_version``).
    """

    def __init__(self, size, version=None):
        self._size = size
        self._version = version
        self._lock = threading.Lock()
        self._items = collections.OrderedDict()

    def get(self, ctx, key, compute):
        """The value for ``key`` at the current version: cached, or
        ``compute()`` (run outside the lock) and kept."""
        version = (self._version or db_hosts.inventory_version)(ctx)
        with self._lock:
            hit = self._items.get(key)
            if hit is not None and hit[0] == version:
                self._items.move_to_end(key)
                return hit[1]
        value = compute()
        with self._lock:
            self._items[key] = (version, value)
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return value
