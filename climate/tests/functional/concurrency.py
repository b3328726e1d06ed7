"""Helpers of the API concurrency tests (``test_volume_concurrency``,
``test_floatingip_concurrency``, ``test_network_concurrency``): many
lease creates from THREADS threads against a Climate of two managers,
then checks of what the database holds.

- :func:`run`: ``work(client, item)`` for each item, THREADS at a time,
  one API client per thread, bounded in time (DEADLINE);
- :func:`pythonpath`: the managers' ``sitecustomize`` that removes the
  ledger's lock (:data:`UNLOCK`) for the run that must overbook, with
  any other test-only patch;
- :func:`answers`: the status codes a create may get (500 only without
  the lock: the ledger's writers then also deadlock on MariaDB's gap
  locks, more often than the transaction's retries absorb, and such a
  create is refused whole);
- :func:`more_rounds`: the lock-removed run's further rounds of creates
  while no overbooking is seen yet (a race is likely, not certain);
- :func:`holdings`: each lease's reservations and ledger bookings, for
  the test's own "every 201 holds its booking" check;
- :func:`assert_only_granted_written`: every refusal wrote nothing, every
  grant left its lease, no reservation or booking without an owner;
- :func:`bookings_by_provider` and :func:`overlapping_pairs`: the
  brute-force "two bookings of a provider of total 1 overlap" check.
"""

import collections
import concurrent.futures
import datetime
import json
import threading
import time

from climate.tests.functional import ledger_sweep
from climate.tests.functional import procs

THREADS = 20
#: Seconds for one round of creates (and its checks' queries: fast).
DEADLINE = 120

#: Seconds the unlocked ledger waits between its check and its insert.
UNLOCKED_PAUSE = 0.02

UNLOCK = """\
# test only: the ledger of this process books without its lock, and
# pauses between its check and its insert so that competing bookers race
# (read committed, MariaDB's as PostgreSQL's, leaves a window too narrow
# to be hit reliably otherwise)
import time
import climate.db.ledger.booking
climate.db.ledger.booking.LOCKING = False
_insert = climate.db.ledger.booking.insert
def _insert_later(*args, **kwargs):
    time.sleep(%r)
    return _insert(*args, **kwargs)
climate.db.ledger.booking.insert = _insert_later
""" % UNLOCKED_PAUSE

#: One ledger booking of a lease (:func:`holdings`).
Booking = collections.namedtuple('Booking', 'reservation provider cls amount '
                                 'start end')


class Holding:
    """What a lease holds: ``reservations`` ``{id: stored params}``,
    ``bookings`` [:class:`Booking`], ``window`` (start, end) of the lease
    as stored."""

    def __init__(self, window):
        self.window = window
        self.reservations = {}
        self.bookings = []

    def __repr__(self):
        return 'Holding(%r, %r, %r)' % (self.window, self.reservations,
                                        self.bookings)


def run(url, work, items, threads=THREADS, deadline=DEADLINE, **client):
    """``work(client, item)`` for each item in order, ``threads`` at a
    time, one ``procs.Client(url, **client)`` per thread; each item fails
    once ``deadline`` seconds have passed.  Returns the results in
    order."""
    limit = time.monotonic() + deadline
    local = threading.local()
    clients, lock = [], threading.Lock()

    def one(item):
        assert time.monotonic() < limit, 'took over %ds' % deadline
        if getattr(local, 'client', None) is None:
            local.client = procs.Client(url, **client)
            with lock:
                clients.append(local.client)
        return work(local.client, item)

    try:
        with concurrent.futures.ThreadPoolExecutor(threads) as pool:
            return list(pool.map(one, items))
    finally:
        for each in clients:
            each.close()


def pythonpath(tmp_path, locking, *sources):
    """The PYTHONPATH entries giving the processes a ``sitecustomize``
    made of ``sources`` and, when not ``locking``, :data:`UNLOCK`
    ([] when there is nothing to patch)."""
    parts = list(sources) + ([] if locking else [UNLOCK])
    if not parts:
        return []
    site = tmp_path / ('site-%s' % ('locked' if locking else 'unlocked'))
    site.mkdir()
    (site / 'sitecustomize.py').write_text('\n'.join(parts))
    return [str(site)]


def answers(locking, *refusals, database=None):
    """The status codes of a create: 201, ``refusals``, 500 without the
    lock (see the module's docstring), and on a multi-writer cluster 503
    (``DatabaseBusy``: a create that lost to certification failures on
    every retry; :func:`busy_share` bounds how many)."""
    return (201,) + tuple(refusals) + (() if locking else (500,)) + (
        (503,) if database is not None and database.multi_writer else ())


#: The share of creates a multi-writer run may answer 503 (lost to
#: concurrent writers on every retry): more says the retries are too few
#: or the conflicts needless.
BUSY_SHARE = 0.1


def assert_few_busy(codes):
    """At most :data:`BUSY_SHARE` of ``codes`` (status codes) are 503."""
    codes = list(codes)
    busy = codes.count(503)
    assert busy <= BUSY_SHARE * len(codes), (
        '%d of %d creates lost to concurrent writers (503)' % (
            busy, len(codes)))


def more_rounds(db, locking, make_round, rounds=2, over=None):
    """Without the lock, up to ``rounds`` more rounds (``make_round(i)``
    runs round ``i``) while the sweep finds no overbooking (``over``
    filters what counts: the sweep's rows, all by default).  Returns how
    many rounds ran in all (1 with the lock)."""
    done = 1
    if locking:
        return done
    for extra in range(rounds):
        found = ledger_sweep.overbooked(db.engine)[0]
        if over is not None:
            found = [row for row in found if over(row)]
        if found:
            break
        make_round(extra)
        done += 1
    return done


def bulk_reservations(engine, count, prefix, when):
    """``count`` leases of one reservation each, written straight into
    SQL on ``engine``, for bookings to hang on: ``[(lease id,
    reservation id)]``."""
    import uuid

    import sqlalchemy as sa

    from climate.db import models
    leases, reservations = [], []
    for i in range(count):
        lid, rid = str(uuid.uuid4()), str(uuid.uuid4())
        leases.append(dict(id=lid, name='%s-%03d' % (prefix, i),
                           project_id='p', start_date=when, end_date=when,
                           status='PENDING', created_at=when))
        reservations.append(dict(id=rid, lease_id=lid,
                                 resource_type='virtual:instance',
                                 status='pending', params={},
                                 created_at=when))
    with engine.begin() as conn:
        conn.execute(sa.insert(models.Lease), leases)
        conn.execute(sa.insert(models.Reservation), reservations)
    return [(r['lease_id'], r['id']) for r in reservations]


def params(value):
    """Stored reservation parameters (JSON text on some databases)."""
    return json.loads(value) if isinstance(value, str) else value


def holdings(db):
    """``{lease name: Holding}`` of every lease in the database."""
    rows = db.query(
        'SELECT l.name, l.start_date AS l_start, l.end_date AS l_end, '
        'r.id, r.params, b.provider_id, b.resource_class, b.amount, '
        'b.start_date, b.end_date FROM leases l LEFT JOIN reservations r '
        'ON r.lease_id = l.id LEFT JOIN ledger_bookings b ON '
        'b.reservation_id = r.id')
    found = {}
    for row in rows:
        entry = found.get(row.name)
        if entry is None:
            entry = found[row.name] = Holding((row.l_start, row.l_end))
        if row.id is not None:
            entry.reservations[row.id] = params(row.params)
        if row.provider_id is not None:
            entry.bookings.append(Booking(
                row.id, row.provider_id, row.resource_class, row.amount,
                row.start_date, row.end_date))
    return found


def window_of(body):
    """The ``(start, end)`` a lease create body asks (UTC, naive)."""
    return tuple(datetime.datetime.strptime(body[key], procs.ISO)
                 for key in ('start_date', 'end_date'))


def assert_only_granted_written(db, granted):
    """Every 201 left its lease and every refused create nothing: the
    leases are those of ``granted`` (names), and no reservation or
    booking is without its lease or reservation."""
    leases = {r.name for r in db.query('SELECT name FROM leases')}
    granted = set(granted)
    assert leases == granted, (
        'refused creates left leases: %s; granted without a lease: %s' % (
            sorted(leases - granted)[:10], sorted(granted - leases)[:10]))
    strays = db.scalar(
        'SELECT (SELECT count(*) FROM reservations WHERE lease_id NOT IN '
        '(SELECT id FROM leases)) + (SELECT count(*) FROM ledger_bookings '
        'WHERE lease_id NOT IN (SELECT id FROM leases) OR reservation_id '
        'NOT IN (SELECT id FROM reservations))')
    assert strays == 0, '%d reservations or bookings without owner' % strays


def bookings_by_provider(db, resource_class):
    """``{provider id: [(start, end, lease name)]}`` of every booking of
    ``resource_class``, by start."""
    found = {}
    for provider, name, start, end in db.query(
            'SELECT b.provider_id, l.name, b.start_date, b.end_date FROM '
            'ledger_bookings b JOIN leases l ON l.id = b.lease_id WHERE '
            'b.resource_class = :cls', cls=resource_class):
        found.setdefault(provider, []).append((start, end, name))
    for held in found.values():
        held.sort()
    return found


def overlapping_pairs(by_provider):
    """Every two bookings of one provider (:func:`bookings_by_provider`)
    that overlap: ``[(provider, lease, lease, start, end)]`` (the
    overlap)."""
    pairs = []
    for provider, held in sorted(by_provider.items()):
        for i, (start, end, name) in enumerate(held):
            for o_start, o_end, other in held[i + 1:]:
                if o_start >= end:
                    break
                pairs.append((provider, name, other, max(start, o_start),
                              min(end, o_end)))
    return pairs
