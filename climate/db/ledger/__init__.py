"""The capacity ledger's SQL: inventories, bookings, the locked re-check.

Decision 7 of the design: every kind of resource is an amount of a
*resource class* on a *provider* -- a compute host's ``VCPU``,
``MEMORY_MB``, ``DISK_GB``, a Cinder pool's ``VOLUME_GB``, an external
network's ``FLOATING_IP`` -- with an inventory (Placement's model: total,
reserved, allocation ratio, min/max unit, step) in ``ledger_inventories``,
and reservations hold amounts of it over half-open windows ``[start,
end)`` in ``ledger_bookings``.  At no instant do the bookings of a
``(provider, class)`` add up to more than its usable capacity.

One module per concern, each imported by name where it is used:

``booking``
    The rule and what keeps it: the lock of the inventory rows and their
    generations, the re-check, and every write of a booking (book,
    release, move, resize, set_end, move_whole), with the reads of what a
    reservation holds.
``slot_search``
    Where units of a shape go (``search``, ``place``): best fit over
    growing prefixes of the providers.
``unit_search``
    Units of a class of capacity one (``free_units``, ``place_units``):
    floating IPs, network segments.
``inventory``
    What each provider has (``set_inventory``, ``delete_provider``,
    ``inventories_of``) and the kinds of provider.
``availability``
    Read views: free capacity over a window, and how many units fit over
    time (``Outlook``, ``earliest_start``).
``windows``
    Which bookings overlap a window, in SQL (``span_level`` and the
    bounded index ranges every read uses).

This package's own namespace forwards none of their names: the settings
the concurrency tests turn (``booking.LOCKING``, ``unit_search.UNIT_CHUNKS``)
and the functions they replace (``booking.insert``, ``booking.book``)
act only where they are defined, so a second name for them here would
be one that changes nothing.

Every public function but ``booking.run`` takes the caller's SQLAlchemy
session (``with db_api.writer(ctx) as session``) and joins its
transaction, so a plugin books in the transaction of the lease;
``booking.run`` runs one in a transaction of its own, re-run whole when
it loses a deadlock (``retry_on_deadlock``).
"""
