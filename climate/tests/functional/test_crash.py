"""kill -9 a manager holding claims: the others take its events over."""

import datetime
import time

from climate.tests.functional import procs

LEASES = 200
TTL = 5


def test_killed_manager_claims_are_taken_over(climate):
    cluster = climate.start(managers=3, manager_opts={
        'event_claim_ttl': TTL})
    db = climate.database
    victim = cluster.managers[0]
    survivors = {proc.manager_name for proc in cluster.managers[1:]}

    due = (procs.utcnow() + datetime.timedelta(seconds=15)).replace(
        microsecond=0)
    end = due + datetime.timedelta(seconds=3)
    leases = procs.create_many(
        cluster.url, [procs.lease_body('crash-%03d' % i, due, end)
                      for i in range(LEASES)], threads=8, timeout=120)
    assert procs.utcnow() < due, (
        'creating %d leases took too long on this machine: they came due '
        'before all were created' % LEASES)

    # Kill the victim in the middle of the work: once it has run a few
    # events, the moment the database shows it holding claims.
    held = ('SELECT (SELECT count(*) FROM events WHERE status = :s AND '
            'claimed_by = :v), (SELECT count(*) FROM noop_actions WHERE '
            'manager = :v AND action = :a)')
    deadline = time.monotonic() + 60 + (due - procs.utcnow()).total_seconds()
    while True:
        claims, done = db.query(held, s='IN_PROGRESS', v=victim.manager_name,
                                a='on_start')[0]
        if claims and done >= 5:
            victim.kill9()
            killed_at = procs.utcnow()
            break
        assert time.monotonic() < deadline, (
            'the victim never claimed an event: %s' % (
                procs.actions_by_manager(db),))
        time.sleep(0.005)
    assert not victim.alive()
    orphans = {row.id: row for row in db.query(
        'SELECT id, event_type, attempts, due_at FROM events '
        'WHERE status = :s AND claimed_by = :v',
        s='IN_PROGRESS', v=victim.manager_name)}
    assert orphans, 'the victim finished its claims before it died'

    procs.wait_all_leases(db, 'TERMINATED', LEASES, timeout=120)
    finished = procs.utcnow()

    lease_ids = {lease['id'] for lease in leases}
    procs.check_exactly_once(db, lease_ids)
    runs = db.query('SELECT event_id, manager, created_at FROM noop_actions '
                    'WHERE event_id IS NOT NULL')
    by_event = {}
    for row in runs:
        by_event.setdefault(row.event_id, []).append(row)
    taken_over = 0
    for event_id, orphan in orphans.items():
        status = db.scalar('SELECT status FROM events WHERE id = :i',
                           i=event_id)
        assert status == 'DONE', (event_id, status)
        for row in by_event.get(event_id, []):
            assert row.manager in survivors, (
                'orphaned event %s ran on %s' % (event_id, row.manager))
            taken_over += 1
    # the survivors waited for the claims to expire before taking over
    starts_or_ends = [e for e in orphans.values()
                      if e.event_type in ('start_lease', 'end_lease')]
    for event in starts_or_ends:
        [row] = by_event[event.id]
        assert row.created_at >= event.due_at - datetime.timedelta(
            seconds=1), (event, row)
    by_manager = procs.actions_by_manager(db)
    print('\nkilled %s at %s holding %d claims (%s); all TERMINATED %.1fs '
          'later; survivors ran %d of its events; actions per manager %s' % (
              victim.manager_name, killed_at.time(), len(orphans),
              sorted(e.event_type for e in orphans.values()),
              (finished - killed_at).total_seconds(), taken_over,
              by_manager))
    assert taken_over >= len(starts_or_ends)
    assert all(proc.alive() for proc in cluster.procs if proc is not victim)
