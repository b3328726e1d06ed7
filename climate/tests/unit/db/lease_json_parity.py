"""The database renders a listed lease exactly as
``climate.lease.views.lease`` renders it from rows (``climate.db.lease_json``),
whether the listing reads the body stored with the lease or renders it.

Shared by the unit test (SQLite) and the functional one (MariaDB and
PostgreSQL).  The leases carry what is hard to get right in three SQL
dialects: quotes, backslashes, control characters, 4-byte UTF-8, nulls,
both booleans, nested and numeric reservation parameters, dates with and
without a fraction, events due at the same time, no reservations at all.
"""

import datetime
import json
import random
import uuid

import sqlalchemy as sa

from climate import context
from climate.db import api as db_api
from climate.db import models
from climate.lease import views

TEXTS = ('plain', 'quote " and \\ backslash', 'line\nbreak\ttab\x01',
         'accents é ü, 中文, emoji 🌩', '', "it's")
PARAMS = ({}, {'min': 1, 'max': 3, 'hypervisor_properties': '',
               'resource_properties': '["==", "$gpu", "True"]',
               'before_end': 'default'},
          {'amount': 2.5, 'big': 10 ** 15, 'neg': -7, 'flag': False,
           'none': None, 'nested': {'list': [1, 'two', None, True, {}]},
           'text': 'quote " é 🌩'})
# and a user's own event, which ties with the before-end notice
EVENT_TYPES = ('start_lease', 'before_end_lease', 'end_lease', 'notification')


def _when(rng, fraction):
    moment = datetime.datetime(2030, 1, 1) + datetime.timedelta(
        minutes=rng.randrange(0, 5) * 30)
    if fraction:
        moment = moment.replace(microsecond=rng.randrange(1, 999999))
    return moment


def make_leases(ctx, rng, count=12):
    ids = []
    with db_api.writer(ctx) as session:
        for i in range(count):
            lease_id = str(uuid.uuid4())
            ids.append(lease_id)
            created = _when(rng, i % 2)
            session.add(models.Lease(
                id=lease_id, name='%s %d' % (rng.choice(TEXTS), i),
                user_id=rng.choice((None, 'user-%d' % i)),
                project_id='parity',
                trust_id=rng.choice((None, str(uuid.uuid4()))),
                start_date=_when(rng, False), end_date=_when(rng, False),
                status=rng.choice(('PENDING', 'ACTIVE', 'ERROR')),
                status_reason=rng.choice((None,) + TEXTS),
                degraded=rng.random() < 0.5, created_at=created,
                updated_at=rng.choice((None, _when(rng, True)))))
            for _ in range(i % 3):  # 0, 1 or 2 reservations
                session.add(models.Reservation(
                    id=str(uuid.uuid4()), lease_id=lease_id,
                    resource_type=rng.choice(('noop', 'physical:host')),
                    resource_id=rng.choice((None, str(uuid.uuid4()))),
                    status=rng.choice(('pending', 'active', 'deleted')),
                    params=rng.choice(PARAMS),
                    missing_resources=rng.random() < 0.5,
                    resources_changed=rng.random() < 0.5,
                    created_at=created,
                    updated_at=rng.choice((None, _when(rng, True)))))
            same_time = _when(rng, False)
            for event_type in rng.sample(EVENT_TYPES, len(EVENT_TYPES)):
                # often all at one time: the order is then the run order
                moment = same_time if i % 2 else _when(rng, False)
                session.add(models.Event(
                    id=str(uuid.uuid4()), lease_id=lease_id,
                    event_type=event_type, time=moment, due_at=moment,
                    status=rng.choice(('UNDONE', 'DONE', 'ERROR')),
                    attempts=rng.randrange(0, 4),
                    last_error=rng.choice((None,) + TEXTS),
                    created_at=created, updated_at=None))
    return ids


def check(seed=5):
    """Raise AssertionError naming the first lease and field that differ.

    Twice: as the bodies stored when the leases were written, then with
    every body cleared, as a listing renders leases that have none.
    """
    ctx = context.admin_context()
    ids = make_leases(ctx, random.Random(seed))
    _check_listing(ctx, ids)
    with db_api.writer(ctx) as session:
        session.execute(sa.update(models.Lease).values(
            body=None, updated_at=models.Lease.updated_at))
    _check_listing(ctx, ids)


def _check_listing(ctx, ids):
    listed = db_api.lease_list(ctx, 'parity', sort_key='id')
    assert [lease_id for lease_id, _ in listed] == sorted(ids)
    for lease_id, body in listed:
        got = json.loads(body)
        want = views.lease(db_api.lease_get(ctx, lease_id))
        for key in want:
            assert got.get(key) == want[key], (
                'lease %s, %s: SQL renders %r, views %r' % (
                    lease_id, key, got.get(key), want[key]))
        assert set(got) == set(want), (set(got) ^ set(want))
    page = views.lease_page(listed)
    assert [lease['id'] for lease in json.loads(page['leases'])] == sorted(
        ids)
    assert page['count'] == len(ids) and page['last_id'] == max(ids)
