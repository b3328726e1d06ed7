"""A work lock held by another thread, for the tests of
``climate.db.work_locks`` on SQLite (unit) and on the servers
(functional)."""

import threading

from climate.db import work_locks


def held_elsewhere(name, body, timeout=30):
    """``body(release)`` while another thread holds the work lock
    ``name``; ``release`` (an Event) lets it go, as the end does."""
    got, release = threading.Event(), threading.Event()

    def holder():
        with work_locks.work_lock(name) as held:
            assert held
            got.set()
            release.wait(timeout)

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert got.wait(timeout)
        return body(release)
    finally:
        release.set()
        thread.join(timeout)
