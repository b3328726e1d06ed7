"""Usage's SQL (climate.db.usage) against a brute-force recomputation, on
whichever database the caller configured: SQLite in the unit tests,
MariaDB and PostgreSQL in the functional ones.

:func:`populate` writes random leases of a few projects with bookings
around a fixed *now*, then ends or deletes some of them as the manager
does (their bookings copied by ``record_consumed``, then released);
:func:`check` compares ``project_rows`` and ``held_over`` with sums made
in Python from every booking and record, over random periods.
"""

import collections
import datetime
import random
import uuid

import sqlalchemy as sa

from climate.db import api as db_api
from climate.db import billing as db_billing
from climate.db.ledger import windows
from climate.db import models
from climate.db import quotas as db_quotas
from climate.db import usage as db_usage

NOW = datetime.datetime(2090, 6, 1, 12, 0, 0)
PROJECTS = ('p1', 'p2', 'p3')
CLASSES = ('HOST', 'VCPU', 'VOLUME_GB')


def _seconds(first, last):
    return max(0, int((last - first).total_seconds()))


def populate(ctx, seed, leases=60):
    """Random leases, reservations and bookings; about a third of the
    leases ended (records, no bookings) and a few deleted."""
    rng = random.Random(seed)
    ended, deleted = [], []
    with db_api.writer(ctx) as session:
        for n in range(leases):
            start = NOW + datetime.timedelta(
                minutes=rng.randint(-3000, 3000))
            end = start + datetime.timedelta(minutes=rng.randint(1, 2000))
            lease_id = str(uuid.uuid4())
            project_id = rng.choice(PROJECTS)
            session.execute(sa.insert(models.Lease), [dict(
                id=lease_id, name='lease-%03d' % n,
                project_id=project_id, start_date=start,
                end_date=end, status='ACTIVE', created_at=NOW)])
            for r in range(rng.randint(1, 2)):
                res_id = str(uuid.uuid4())
                session.execute(sa.insert(models.Reservation), [dict(
                    id=res_id, lease_id=lease_id,
                    resource_type=rng.choice(('physical:host',
                                              'virtual:volume')),
                    status='active', params={}, created_at=NOW)])
                for cls in rng.sample(CLASSES, rng.randint(1, 3)):
                    # healing moves a booking's start within the lease
                    b_start = start + (end - start) * rng.choice((0, 0, 0.5))
                    b_start = b_start.replace(microsecond=0)
                    session.execute(sa.insert(models.LedgerBooking), [dict(
                        id=str(uuid.uuid4()), reservation_id=res_id,
                        lease_id=lease_id, project_id=project_id,
                        provider_id='prov-%d' % rng.randint(1, 5),
                        resource_class=cls, amount=rng.randint(1, 64),
                        start_date=b_start, end_date=end,
                        span_level=windows.span_level(b_start, end))])
            fate = rng.random()
            if fate < 0.3:
                ended.append((lease_id, max(end, NOW - datetime.timedelta(
                    minutes=rng.randint(0, 100)))))
            elif fate < 0.4:
                deleted.append(lease_id)
    for lease_id, when in ended:
        _end(ctx, lease_id, when)
    for lease_id in deleted:
        _end(ctx, lease_id, NOW, delete=True)


def _end(ctx, lease_id, when, delete=False):
    """What the END event (or a delete) does to the ledger: copy, then
    release."""
    with db_api.writer(ctx) as session:
        db_usage.record_consumed(session, lease_id, min(when, NOW))
        res_ids = sa.select(models.Reservation.id).where(
            models.Reservation.lease_id == lease_id)
        session.execute(sa.delete(models.LedgerBooking).where(
            models.LedgerBooking.reservation_id.in_(res_ids)))
        if delete:
            session.execute(sa.delete(models.Reservation).where(
                models.Reservation.lease_id == lease_id))
            session.execute(sa.delete(models.Lease).where(
                models.Lease.id == lease_id))
        else:
            session.execute(sa.update(models.Lease).where(
                models.Lease.id == lease_id).values(status='TERMINATED'))


def _everything(session):
    """``(project, lease, type, class, amount, start, end)`` of every
    booking (of a lease of the project) and every record."""
    B, R, L = models.LedgerBooking, models.Reservation, models.Lease
    rows = session.execute(sa.select(
        L.project_id, L.id, R.resource_type, B.resource_class, B.amount,
        B.start_date, B.end_date).join(R, R.lease_id == L.id).join(
        B, B.reservation_id == R.id)).all()
    U = models.UsageRecord
    rows += session.execute(sa.select(
        U.project_id, U.lease_id, U.resource_type, U.resource_class,
        U.amount, U.start_date, U.end_date)).all()
    return rows


def brute_force(session, project_id, start, end, now):
    """``{(lease, type, class): (past, future, current)}`` in Python."""
    out = collections.defaultdict(lambda: [0, 0, 0])
    for project, lease, rtype, cls, amount, b_start, b_end in \
            _everything(session):
        if project != project_id or not (b_start < end and b_end > start):
            continue
        first, last = max(b_start, start), min(b_end, end)
        sums = out[(lease, rtype, cls)]
        sums[0] += amount * _seconds(first, min(last, now))
        sums[1] += amount * _seconds(max(first, now), last)
        sums[2] += amount if b_start <= now < b_end else 0
    return {k: tuple(v) for k, v in out.items()}


def periods(seed, count=12):
    rng = random.Random(seed)
    out = [(NOW - datetime.timedelta(days=30), NOW + datetime.timedelta(
        days=30))]
    for _ in range(count):
        start = NOW + datetime.timedelta(minutes=rng.randint(-4000, 4000))
        out.append((start, start + datetime.timedelta(
            minutes=rng.randint(1, 4000))))
    return out


def check(ctx, seed):
    """Every project's usage over random periods equals the brute force,
    per lease and in total; the cloud-wide holdings sum to the same
    resource-time."""
    checked = 0
    with db_api.reader(ctx) as session:
        for start, end in periods(seed):
            for project_id in PROJECTS:
                got = {(r.lease_id, r.resource_type, r.resource_class):
                       (int(r.past), int(r.future), int(r.current))
                       for r in db_usage.project_rows(
                           session, project_id, start, end, NOW,
                           by_lease=True)}
                want = brute_force(session, project_id, start, end, NOW)
                assert got == want, (project_id, start, end)
                checked += len(want)
                totals = collections.defaultdict(lambda: [0, 0, 0])
                for (_lease, rtype, cls), sums in want.items():
                    for i, value in enumerate(sums):
                        totals[(rtype, cls)][i] += value
                got = collections.defaultdict(lambda: [0, 0, 0])
                for r in db_usage.project_rows(session, project_id, start,
                                               end, NOW):
                    assert r.lease_id is None
                    # live and ended leases: a row each
                    for i, value in enumerate((r.past, r.future,
                                               r.current)):
                        got[(r.resource_type, r.resource_class)][i] += int(
                            value)
                assert got == totals, (project_id, start, end)
            every = sum(
                int(amount) * _seconds(max(s, start), min(e, end))
                for _c, s, e, amount in db_usage.held_over(session, start,
                                                           end))
            assert every == sum(
                p + f for project_id in PROJECTS
                for p, f, _c in brute_force(session, project_id, start,
                                            end, NOW).values())
    # the data exercised something
    assert checked > 50


def check_quota_reads(ctx, seed):
    """What the quota checks read from the project index (the bookings
    of some classes over a window, and their resource-seconds with a
    lease's share) equals the brute force over bookings and records."""
    rng = random.Random(seed)
    checked = 0
    with db_api.reader(ctx) as session:
        everything = _everything(session)
        for start, end in periods(seed):
            for project_id in PROJECTS:
                classes = rng.sample(CLASSES, rng.randint(1, 3))
                mine = [r for r in everything if r[0] == project_id and
                        r[3] in classes and r[5] < end and r[6] > start]
                lease = rng.choice(mine)[1] if mine else None
                got = sorted(tuple(r) for r in db_quotas.holdings(
                    session, project_id, classes, start, end, NOW))
                want = sorted((r[1], r[3], r[5], r[6], r[4]) for r in mine)
                assert got == want, (project_id, start, end)
                sums = {}
                for r in mine:
                    seconds = r[4] * _seconds(max(r[5], start),
                                              min(r[6], end))
                    held, own = sums.get(r[3], (0, 0))
                    sums[r[3]] = (held + seconds, own + (
                        seconds if r[1] == lease else 0))
                assert db_quotas.held_within(
                    session, project_id, classes, start, end, lease,
                    NOW) == sums, (project_id, start, end)
                checked += len(mine)
    assert checked > 50


def check_billing_reads(ctx, seed):
    """What each lease consumed within periods ending by now, as billing
    reads it (for one project through its index, and for every project
    through the ledger's windows), equals the brute force."""
    checked = 0
    with db_api.reader(ctx) as session:
        everything = _everything(session)
        for start, end in periods(seed):
            end = min(end, NOW)
            if end <= start:
                continue
            want = collections.Counter()
            for project, lease, rtype, cls, amount, b_start, b_end in \
                    everything:
                if b_start < end and b_end > start:
                    want[(project, lease, rtype, cls)] += amount * _seconds(
                        max(b_start, start), min(b_end, end))
            got = collections.Counter()
            for row in db_billing.consumed(session, start, end):
                got[(row[0], row[1], row[5], row[6])] += int(row[7])
            assert got == want, (start, end)
            for project_id in PROJECTS:
                mine = collections.Counter()
                for row in db_billing.consumed(session, start, end,
                                               project_id):
                    assert row[0] == project_id
                    mine[(row[0], row[1], row[5], row[6])] += int(row[7])
                assert mine == {k: v for k, v in want.items()
                                if k[0] == project_id}
            checked += len(want)
    assert checked > 20
