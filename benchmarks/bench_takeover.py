"""A killed manager's events run elsewhere how soon: ROUNDS times, a
manager is killed (kill -9) while it holds claims, under a burst of
LEASES leases due in the same second with three managers, and a new
manager replaces it.  Figures: for every event the killed managers held,
the seconds from the kill (the moment it froze) to the event DONE; and
how many events of all the leases ran more than TARGET late."""

import datetime
import time

import common
from climate.tests.functional import procs

ROUNDS = 20
LEASES = 75
TARGET = 5.0


def _round(env, index):
    db = env.database
    cluster = env.cluster
    victim = [p for p in cluster.managers if p.alive()][index % 3]
    due = (procs.utcnow() + datetime.timedelta(seconds=4)).replace(
        microsecond=0)
    ids = common.bulk_leases(db, LEASES, due,
                             due + datetime.timedelta(seconds=2),
                             project='round-%02d' % index,
                             first=index * LEASES)
    client = env.client()
    # due then too: creating it wakes the managers (rows inserted in SQL
    # do not)
    ids.append(client.create_lease('wake-%02d' % index, due,
                                   due + datetime.timedelta(seconds=2))[
        'id'])
    client.close()
    held, connections, stopped_at, _ = procs.kill_holding_claims(
        db, victim, time.monotonic() + 60, min_done=1)
    db.wait_sessions_gone(connections)
    orphans = sorted(procs.left_by(db, victim.manager_name, held))
    delays = procs.wait_done(db, orphans, stopped_at, 120)
    cluster.start_managers(1)
    procs.wait_for(lambda: db.scalar(
        "SELECT count(*) FROM leases WHERE status = 'TERMINATED' AND "
        "id IN (%s)" % procs.sql_list(ids)) == len(ids),
        120, interval=0.1, message='round %d leases TERMINATED' % index)
    return ids, list(delays.values()), victim.manager_name


def run():
    print('== takeover after kill -9: %d rounds of %d leases due in the '
          'same second, 3 managers, %s' % (ROUNDS, LEASES, common.ENGINE))
    with common.Climate(managers=3, api_threads=2) as env:
        leases, delays, victims = set(), [], []
        for index in range(ROUNDS):
            ids, round_delays, victim = _round(env, index)
            leases.update(ids)
            delays.extend(round_delays)
            victims.append(victim)
        db = env.database
        procs.check_exactly_once(db, leases)
        # every event: DONE how long after it was due (updated_at, to the
        # second)
        late = db.scalar(
            "SELECT count(*) FROM events WHERE status = 'DONE' AND "
            "updated_at > time + INTERVAL '%d' SECOND" % TARGET
            if db.engine_name == procs.MARIADB else
            "SELECT count(*) FROM events WHERE status = 'DONE' AND "
            "updated_at > time + INTERVAL '%d seconds'" % TARGET)
        events = db.scalar('SELECT count(*) FROM events')
    ms = [d * 1000 for d in delays]
    p99 = common.percentile(delays, 99)
    print('  %d kills, %d events held by the killed managers; DONE after '
          'the kill: %s' % (len(victims), len(delays), common.summary(ms)))
    print('  p99 %.2f s: %s; events of all %d leases DONE over %d s after '
          'due: %d of %d; every event ran exactly once' % (
              p99, common.verdict(p99, TARGET), len(leases), TARGET, late,
              events))
    return {'takeover_p99_s': p99, 'late_events': late}


if __name__ == '__main__':
    run()
