"""Each lease's stored listing body follows every change of its rows
(climate.db.lease_json), on SQLite; the functional tests check what the
real managers leave behind on MariaDB and PostgreSQL."""

import datetime
import json

from oslo_config import cfg
import pytest
import sqlalchemy as sa

from climate.db import api as db_api
from climate.db import lease_json
from climate.db import migration
from climate.db import models
from climate.lease import views
from climate.manager.workers import body_filler

CONF = cfg.CONF
START = datetime.datetime(2090, 1, 1)


def _create(ctx, name='lease', trust_id=None, reservations=1):
    records = db_api.lease_records(
        {'name': name, 'start_date': START,
         'end_date': START + datetime.timedelta(hours=2),
         'project_id': 'p', 'user_id': 'u', 'trust_id': trust_id,
         'status': 'PENDING'},
        [{'resource_type': 'noop', 'params': {'slot': i},
          'status': 'pending'} for i in range(reservations)],
        [{'event_type': event_type, 'time': START, 'due_at': START,
          'status': 'UNDONE'}
         for event_type in ('start_lease', 'end_lease')])
    with db_api.writer(ctx):
        db_api.lease_insert(ctx, records,
                            json.dumps(views.lease(records)))
    return records


def _stored(ctx, lease_id):
    with db_api.reader(ctx) as session:
        return json.loads(session.scalar(sa.select(models.Lease.body).where(
            models.Lease.id == lease_id)))


def _shown(ctx, lease_id):
    return views.lease(db_api.lease_get(ctx, lease_id))


def _outdated(ctx):
    with db_api.get_engine().connect() as conn:
        return lease_json.outdated(conn)


def test_a_created_lease_is_stored_as_the_create_shows_it(ctx):
    records = _create(ctx, reservations=3)
    assert _stored(ctx, records.id) == views.lease(records) == _shown(
        ctx, records.id)


def test_a_claim_shows_its_event_in_progress(ctx):
    lease = _create(ctx)
    claims = db_api.events_claim(ctx, 'manager-a', 'token', START, 10,
                                 datetime.timedelta(minutes=5),
                                 {'start_lease': 0, 'end_lease': 2})
    assert [c.lease_id for c in claims] == [lease.id]
    events = _stored(ctx, lease.id)['events']
    assert [e['status'] for e in events] == ['IN_PROGRESS', 'UNDONE']
    assert _stored(ctx, lease.id) == _shown(ctx, lease.id)


def test_a_plugins_resource_id_is_shown(ctx):
    lease = _create(ctx)
    res_id = lease.reservations[0].id
    with db_api.writer(ctx):
        db_api.reservation_set_resource(ctx, lease.id, res_id, 'r-1')
    assert _stored(ctx, lease.id)['reservations'][0]['resource_id'] == 'r-1'
    assert _outdated(ctx) == []


def test_a_forgotten_trust_is_no_longer_shown(ctx):
    lease = _create(ctx, trust_id='t-1')
    db_api.lease_forget_trust(ctx, lease.id, 't-1')
    assert _stored(ctx, lease.id)['trust_id'] is None
    assert _outdated(ctx) == []


def test_orm_changes_are_rendered_without_touching_updated_at(ctx):
    lease = _create(ctx)
    with db_api.writer(ctx):
        row = db_api.lease_get(ctx, lease.id)
        row.events[0].status = 'DONE'
        row.reservations[0].status = 'active'
    stored = _stored(ctx, lease.id)
    assert stored == _shown(ctx, lease.id)
    # the rows changed got an updated_at; the lease did not, and storing
    # its body is not a change of its own
    assert stored['updated_at'] is None
    assert stored['reservations'][0]['updated_at'] is not None


def test_a_rolled_back_change_leaves_the_body_alone(ctx):
    lease = _create(ctx)
    before = _stored(ctx, lease.id)
    with pytest.raises(RuntimeError):
        with db_api.writer(ctx):
            db_api.lease_get(ctx, lease.id).status_reason = 'never'
            db_api.flush(ctx)
            raise RuntimeError('changed my mind')
    assert _stored(ctx, lease.id) == before == _shown(ctx, lease.id)


def test_a_savepoint_rollback_keeps_the_rest_of_the_transaction(ctx):
    lease = _create(ctx)
    with db_api.writer(ctx) as session:
        db_api.lease_get(ctx, lease.id).status_reason = 'kept'
        db_api.flush(ctx)
        savepoint = session.begin_nested()
        savepoint.rollback()
    assert _stored(ctx, lease.id)['status_reason'] == 'kept'


def test_a_deleted_lease_needs_no_body(ctx):
    lease = _create(ctx)
    db_api.lease_delete(ctx, db_api.lease_get(ctx, lease.id))
    assert db_api.lease_list(ctx) == []


def test_leases_without_a_body_are_rendered_when_listed(ctx):
    first, second = _create(ctx, 'first'), _create(ctx, 'second')
    with db_api.writer(ctx) as session:
        session.execute(sa.update(models.Lease).where(
            models.Lease.id == second.id).values(
            body=None, updated_at=models.Lease.updated_at))
    listed = dict(db_api.lease_list(ctx))
    assert {k: json.loads(v) for k, v in listed.items()} == {
        first.id: _shown(ctx, first.id), second.id: _shown(ctx, second.id)}


def _body_column(ctx, lease_id):
    with db_api.reader(ctx) as session:
        return session.scalar(sa.select(models.Lease.body).where(
            models.Lease.id == lease_id))


def test_leases_from_before_the_migration_are_filled_in_batches(
        ctx, monkeypatch):
    leases = [_create(ctx, 'lease-%d' % i) for i in range(5)]
    shown = {lease.id: _shown(ctx, lease.id) for lease in leases}
    migration.downgrade('0003')
    migration.upgrade()
    assert {_body_column(ctx, lease_id) for lease_id in shown} == {None}
    # listed all the same, rendered on the way
    assert {k: json.loads(v) for k, v in db_api.lease_list(ctx)} == shown

    monkeypatch.setattr(body_filler, 'BATCH', 2)
    filler = body_filler.BodyFiller()
    assert filler.run_once() == 5
    assert {lease_id: _stored(ctx, lease_id) for lease_id in shown} == shown
    # nothing is left to look for: no more passes
    assert filler.finished


def test_an_upgrade_that_changes_the_body_shape_forgets_stored_bodies(ctx):
    # 0008: bodies stored before it print dates in the old format
    lease = _create(ctx)
    migration.downgrade('0007')
    with db_api.get_engine().begin() as conn:
        conn.execute(sa.update(models.Lease.__table__).values(
            body='{"created_at": "an older shape"}'))
    migration.upgrade()
    assert _body_column(ctx, lease.id) is None
    filler = body_filler.BodyFiller()
    assert filler.run_once() == 1
    assert _stored(ctx, lease.id) == _shown(ctx, lease.id)


def test_the_filler_stops_only_once_nothing_is_left(ctx, monkeypatch):
    lease = _create(ctx)
    filler = body_filler.BodyFiller()
    stored = []

    def fill(ctx, limit):
        # a full batch, then the last lease
        stored.append(limit)
        return limit if len(stored) == 1 else 0

    monkeypatch.setattr(db_api, 'lease_bodies_fill', fill)
    assert filler.run_once() == body_filler.BATCH
    assert stored == [body_filler.BATCH] * 2 and filler.finished
    assert _stored(ctx, lease.id) == _shown(ctx, lease.id)


def test_a_stale_body_is_reported(ctx):
    lease = _create(ctx)
    with db_api.get_engine().begin() as conn:
        conn.execute(sa.update(models.Lease.__table__).values(
            name='renamed behind its back'))
    assert _outdated(ctx) == [lease.id]
