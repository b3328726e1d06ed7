"""The typed reservation a plugin is handed (``climate.plugins.values``)."""

import datetime

from climate.db import models
from climate.lease import views
from climate.plugins import values


def _row(**kw):
    fields = dict(
        id='r1', lease_id='l1', resource_type='virtual:instance',
        resource_id='r1', status='pending', part_of='r0',
        missing_resources=False, resources_changed=True,
        params={'amount': 2, 'affinity': None},
        created_at=datetime.datetime(2030, 1, 1), updated_at=None)
    fields.update(kw)
    return models.Reservation(**fields)


def test_a_reservation_from_its_view_is_the_one_from_its_row():
    row = _row()
    assert values.Reservation.from_view(views.reservation(row)) == \
        values.Reservation.of(row)
    assert values.Reservation.of(row).params == {'amount': 2,
                                                 'affinity': None}


def test_the_params_are_a_copy():
    row = _row(params={'amount': 2})
    value = values.Reservation.of(row)
    value.params['amount'] = 3
    assert row.params == {'amount': 2}


def test_as_dict_is_the_flat_shape_a_backend_takes():
    value = values.Reservation.of(_row(params={'amount': 2}))
    assert value.as_dict() == {
        'amount': 2, 'id': 'r1', 'lease_id': 'l1',
        'resource_type': 'virtual:instance', 'resource_id': 'r1',
        'status': 'pending', 'missing_resources': False,
        'resources_changed': True, 'stack_reservation_id': 'r0'}


def test_parts_run_first_at_the_start_and_last_at_the_end():
    owner, part = _row(id='owner', part_of=None), _row(id='part')
    pairs = [(owner, values.Reservation.of(owner)),
             (part, values.Reservation.of(part))]
    assert [r.id for r, _v in values.in_run_order(True, pairs)] == \
        ['part', 'owner']
    assert [r.id for r, _v in values.in_run_order(False, pairs)] == \
        ['owner', 'part']
