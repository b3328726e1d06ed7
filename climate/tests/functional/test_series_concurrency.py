"""Recurring series under concurrency (microversion 1.15): 40 series of a
compute host each (daily, three occurrences, half ``skip`` and half
``refuse``) created from 8 threads against 10 hosts on three managers,
their first occurrences overlapping, on MariaDB, PostgreSQL and a
multi-writer Galera cluster (a manager per node).  The booking horizon
is a day and 90 seconds, so that each granted series' second
occurrence enters it within a minute of the create: the three managers
race to book it, while 6 plain leases ask for hosts over those second
occurrences' hours at the same time (so that some fit, some do not).

Afterwards, once every live series has dealt with its second
occurrence:

- a refused series create (409) left nothing: no series, no lease;
- each granted series has exactly one outcome for its second
  occurrence: a lease (``<name> #2``, ``occurrence`` 2, one "occurrence 2
  booked" line in all the managers' logs), an entry in ``skipped``
  (``skip``), or the series ``STOPPED`` naming it (``refuse``); its third
  occurrence is beyond the horizon and not booked;
- no host is booked twice at any instant (the ledger's brute-force
  sweep), occurrences and plain leases together.
"""

import datetime
import json
import random
import time

import pytest

from climate.tests.functional import concurrency
from climate.tests.functional import procs

HOSTS = 10
SERIES = 40
LEASES = 6
THREADS = 8
MANAGERS = 3
V = '1.15'
HORIZON = 86400 + 90
#: Seconds for every granted series to have dealt with occurrence 2.
SETTLE = 120


@pytest.fixture(params=procs.MULTI_WRITER_ENGINES)
def db_engine(request):
    return request.param


def _series_bodies(now, rng):
    bodies = []
    for i in range(SERIES):
        # within 100-130 s: occurrence 2 (a day later) enters the horizon
        # 10-40 s from now
        start = now + datetime.timedelta(seconds=100 + rng.randint(0, 30))
        end = start + datetime.timedelta(minutes=rng.randint(20, 60))
        bodies.append(('series', {
            'name': 'class-%02d' % i, 'start_date': procs.iso(start),
            'end_date': procs.iso(end), 'events': [],
            'reservations': [{'resource_type': 'physical:host',
                              'min': 1, 'max': 1}],
            'recurrence': {'rrule': 'FREQ=DAILY;COUNT=3',
                           'on_conflict': 'skip' if i % 2 else 'refuse'}}))
    return bodies


def _lease_bodies(now, rng):
    bodies = []
    for i in range(LEASES):
        start = now + datetime.timedelta(days=1, seconds=90 +
                                         rng.randint(0, 60))
        end = start + datetime.timedelta(minutes=rng.randint(20, 60))
        bodies.append(('lease', {
            'name': 'plain-%02d' % i, 'start_date': procs.iso(start),
            'end_date': procs.iso(end), 'events': [],
            'reservations': [{'resource_type': 'physical:host',
                              'min': 1, 'max': 1}]}))
    return bodies


def _settled(db):
    """Whether every live series has dealt with occurrence 2."""
    return not db.scalar(
        "SELECT count(*) FROM lease_series WHERE status = 'ACTIVE' AND "
        'next_index < 3')


def test_series_horizons_book_each_occurrence_once_and_never_overbook(
        climate):
    cluster = climate.start(managers=MANAGERS, extra={
        'leases': {'series_horizon': HORIZON, 'series_poll_interval': 1}})
    db = climate.database
    admin = climate.client()
    for i in range(HOSTS):
        admin.request('POST', '/v1/os-hosts', expect=(201,),
                      json={'name': 'compute-%02d' % i})
    rng = random.Random(1515)
    now = procs.utcnow().replace(microsecond=0)
    answers = concurrency.answers(True, 409, database=db)
    series_items = _series_bodies(now, rng)
    items = series_items + _lease_bodies(now, rng)
    # the series first, the plain leases interleaved behind them
    items = series_items[:THREADS] + rng.sample(items[THREADS:],
                                                len(items) - THREADS)

    def create(client, item):
        kind, body = item
        path = '/v1/lease-series' if kind == 'series' else '/v1/leases'
        resp = client.request('POST', path, expect=answers, json=body)
        return kind, body['name'], resp.status_code, resp.json()

    results = concurrency.run(cluster.url, create, items, threads=THREADS,
                              version=V)
    concurrency.assert_few_busy([code for _k, _n, code, _b in results])
    granted = {name: body['lease_series'] for kind, name, code, body
               in results if kind == 'series' and code == 201}
    refused = {name: body for kind, name, code, body in results
               if kind == 'series' and code == 409}
    plain = {name for kind, name, code, _b in results
             if kind == 'lease' and code == 201}
    for name, body in refused.items():
        assert body['error_name'] in ('OccurrenceRefused',
                                      'NoOccurrenceBooked'), body
    assert granted and refused, (len(granted), len(refused))

    deadline = time.monotonic() + SETTLE
    while not _settled(db):
        assert time.monotonic() < deadline, \
            'series still on occurrence 2 %d s after the creates' % SETTLE
        time.sleep(0.5)

    rows = {row.name: row for row in db.query(
        'SELECT id, name, status, status_reason, next_index, skipped FROM '
        'lease_series')}
    assert set(rows) == set(granted), 'a refused series create left a row'
    occurrences = {}
    for row in db.query('SELECT name, series_id, occurrence FROM leases '
                        'WHERE series_id IS NOT NULL'):
        occurrences.setdefault(row.series_id, []).append(
            (row.occurrence, row.name))
    leases = {r.name for r in db.query(
        'SELECT name FROM leases WHERE series_id IS NULL')}
    assert leases == plain, 'refused lease creates left leases'
    logs = '\n'.join(proc.log() for proc in cluster.procs)
    outcomes = {'booked': 0, 'skipped': 0, 'stopped': 0}
    for name, row in rows.items():
        made = dict(occurrences.get(row.id, []))
        skipped = [s['occurrence'] for s in (
            json.loads(row.skipped) if isinstance(row.skipped, str)
            else row.skipped)]
        assert made.get(1) == '%s #1' % name, (name, made)
        assert 3 not in made, (name, made)
        stopped = row.status == 'STOPPED'
        kinds = [2 in made, 2 in skipped, stopped]
        assert sum(kinds) == 1, (name, made, skipped, row.status)
        if 2 in made:
            outcomes['booked'] += 1
            assert made[2] == '%s #2' % name
            assert logs.count('Lease series %s: occurrence 2 booked' %
                              row.id) == 1, name
        elif stopped:
            outcomes['stopped'] += 1
            assert row.status_reason.startswith('occurrence 2 ('), row
            assert name.endswith(('0', '2', '4', '6', '8')), \
                'a skip series stopped: %s' % name
        else:
            outcomes['skipped'] += 1
            assert row.next_index == 3, row
    # the managers raced for some, and some did not fit
    missed = outcomes['skipped'] + outcomes['stopped']
    assert outcomes['booked'] and missed, outcomes
    print('\n%d series creates on %s: %d granted, %d refused; occurrence '
          '2: %d booked, %d skipped, %d stopped; %d of %d plain leases '
          'granted' % (SERIES, db.engine_name, len(granted), len(refused),
                       outcomes['booked'], outcomes['skipped'],
                       outcomes['stopped'], len(plain), LEASES))
    by_host = concurrency.bookings_by_provider(db, 'HOST')
    assert concurrency.overlapping_pairs(by_host) == []
    assert not cluster.errors_in_logs(), cluster.errors_in_logs()[:20]
