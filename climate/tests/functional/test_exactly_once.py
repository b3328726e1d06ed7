"""Three managers, 500 leases due at once: every event runs exactly once."""

import datetime

import pytest

from climate.tests.functional import procs

LEASES = 500


@pytest.fixture(params=procs.MULTI_WRITER_ENGINES)
def db_engine(request):
    # and on a multi-writer Galera cluster, a manager per node
    return request.param


def test_500_leases_three_managers_exactly_once(climate):
    cluster = climate.start(managers=3)
    db = climate.database
    first_start = procs.utcnow() + datetime.timedelta(seconds=6)

    def body(i):
        def make():
            # due together, but never in the past if creating is slow: a
            # start before the minute the server reads it in is refused,
            # so a second's margin failed when the request waited across
            # a minute's turn on a loaded machine
            start = max(first_start, procs.utcnow() +
                        datetime.timedelta(seconds=10))
            return procs.lease_body('once-%03d' % i, start,
                                    start + datetime.timedelta(seconds=3))
        return make

    began = procs.utcnow()
    leases = procs.create_many(cluster.url, [body(i) for i in range(LEASES)],
                               threads=8, timeout=240)
    created = (procs.utcnow() - began).total_seconds()
    assert len({lease['id'] for lease in leases}) == LEASES

    procs.wait_all_leases(db, 'TERMINATED', LEASES, timeout=180)
    finished = (procs.utcnow() - began).total_seconds()

    seen = procs.check_exactly_once(db, {lease['id'] for lease in leases})
    by_manager = procs.actions_by_manager(db)
    names = {proc.manager_name for proc in cluster.managers}
    print('\n%d leases created in %.1fs, all TERMINATED after %.1fs; events '
          '%s; on_start+on_end per manager %s' % (
              LEASES, created, finished, seen, by_manager))
    assert sum(by_manager.values()) == 2 * LEASES
    assert set(by_manager) <= names, (by_manager, names)
    assert len(by_manager) > 1, 'one manager did all the work: %s' % (
        by_manager,)
    assert db.scalar("SELECT count(*) FROM noop_actions "
                     "WHERE action = 'reserve'") == LEASES
    assert all(proc.alive() for proc in cluster.procs), cluster.report()
