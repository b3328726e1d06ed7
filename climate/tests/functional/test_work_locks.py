"""Work locks on MariaDB and PostgreSQL (``climate.db.work_locks``): a
manager waiting for the retry passes' lock gets it once released, one not
waiting for the hunts' lock (held for minutes while servers move) is told
at once that another holds it."""

import threading
import time

from climate.db import api as db_api
from climate.db import migration
from climate.db import retries
from climate.db import work_locks
from climate.tests import locks


def test_work_locks(database):
    db_api.configure(connection=database.url)
    try:
        migration.upgrade()

        def not_waiting(_release):
            began = time.monotonic()
            with work_locks.work_lock('lease_hunts', wait=False) as held:
                return held, time.monotonic() - began

        held, took = locks.held_elsewhere('lease_hunts', not_waiting)
        assert held is False and took < 2, took
        with work_locks.work_lock('lease_hunts', wait=False) as held:
            assert held is True

        def waiting(release):
            threading.Timer(0.5, release.set).start()
            began = time.monotonic()
            with work_locks.work_lock(retries.LOCK_NAME) as held:
                return held, time.monotonic() - began

        held, took = locks.held_elsewhere(retries.LOCK_NAME, waiting)
        assert held is True and took >= 0.4, took
    finally:
        db_api.get_engine().dispose()
