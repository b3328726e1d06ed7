"""Stored listing bodies under concurrent transactions on one lease, on
MariaDB and PostgreSQL (climate.db.lease_json)."""

import datetime
import json
import threading

from climate import context
from climate.db import api as db_api
from climate.db import lease_json
from climate.db import migration
from climate.lease import views

START = datetime.datetime(2090, 1, 1)
RUN_ORDER = {'start_lease': 0, 'end_lease': 2}


def _create(ctx):
    records = db_api.lease_records(
        {'name': 'contended', 'start_date': START,
         'end_date': START + datetime.timedelta(hours=2),
         'project_id': 'p', 'user_id': 'u', 'status': 'PENDING'},
        [{'resource_type': 'noop', 'params': {}, 'status': 'pending'}],
        [{'event_type': event_type, 'time': time, 'due_at': time,
          'status': 'UNDONE'}
         for event_type, time in (
             ('start_lease', START),
             ('end_lease', START + datetime.timedelta(hours=2)))])
    with db_api.writer(ctx):
        db_api.lease_insert(ctx, records, json.dumps(views.lease(records)))
    return records


def test_a_claim_waiting_on_a_lease_renders_what_its_holder_committed(
        database):
    """A transaction holding the lease (an update moving its end) and a
    claim of its start, which changes the lease's body too: whichever
    commits last stores a body with both changes."""
    db_api.configure(connection=database.url)
    try:
        migration.upgrade()
        ctx = context.admin_context()
        lease = _create(ctx)
        holding, claimed = threading.Event(), threading.Event()
        errors = []

        def claim():
            holding.wait(10)
            try:
                db_api.events_claim(
                    context.admin_context(), 'manager-b', 'token', START, 10,
                    datetime.timedelta(minutes=5), RUN_ORDER)
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)
            claimed.set()

        thread = threading.Thread(target=claim)
        thread.start()
        try:
            with db_api.writer(ctx):
                row = db_api.lease_get(ctx, lease.id, for_update=True)
                end = [e for e in row.events if e.event_type == 'end_lease']
                end[0].time = end[0].due_at = START + datetime.timedelta(
                    hours=3)
                db_api.flush(ctx)
                holding.set()
                # the claim takes the start event, then waits for the lease
                assert not claimed.wait(1)
        finally:
            holding.set()
            thread.join(20)
        assert errors == []
        with db_api.get_engine().connect() as conn:
            assert lease_json.outdated(conn) == []
        shown = views.lease(db_api.lease_get(ctx, lease.id))
        assert [(e['event_type'], e['status'], e['time'])
                for e in shown['events']] == [
            ('start_lease', 'IN_PROGRESS', '2090-01-01T00:00:00.000000'),
            ('end_lease', 'UNDONE', '2090-01-01T03:00:00.000000')]
    finally:
        db_api.get_engine().dispose()
