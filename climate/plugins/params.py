"""What the plugins share about a reservation's parameters: whole
numbers and host filters read as Blazar reads them, the checks of the
fields Climate sets (the addresses, pools, ids a plugin learns) in a
request or a change, and writing them into the stored parameters."""

import sqlalchemy as sa

from climate.db import api as db_api
from climate.db import lease_json
from climate.db import models
from climate import exceptions
from climate.plugins import common
from climate.plugins import host_filters
from climate import states

#: The largest amount or size (Blazar's database integer).
DB_MAX_INT = 2 ** 31 - 1


def integer(value, name, low, meaning=None):
    """``value`` as Blazar reads a whole number (``int(str(value))``,
    from ``low`` to :data:`DB_MAX_INT`), else MalformedParameter with
    Blazar's sentence (oslo's ``validate_integer``) and Climate's, which
    says what ``name`` is (``meaning``, e.g. 'the VCPUs of one
    instance')."""
    try:
        number = int(str(value))
    except (ValueError, UnicodeEncodeError):
        blazar = '%s must be an integer' % name
    else:
        if number < low:
            blazar = '%s must be >= %d' % (name, low)
        elif number > DB_MAX_INT:
            blazar = '%s must be <= %d' % (name, DB_MAX_INT)
        else:
            return number
    raise exceptions.MalformedParameter(
        message='%s. %s is %s: a whole number from %d to %d, not %s.' % (
            blazar, name, meaning or name, low, DB_MAX_INT,
            common.short(value)), param=name)


def filter_of(value):
    """``resource_properties`` checked as the ``physical:host`` plugin
    checks it (the same language, over the hosts' extra capabilities);
    '' when empty."""
    if value is None or value == '':
        return ''
    if not isinstance(value, str):
        raise exceptions.MalformedRequirements(
            rqrms=common.short(value),
            reason='resource_properties must be a JSON filter in a string, '
                   'e.g. \'["=", "$gpu", "true"]\'')
    try:
        host_filters.parse_filters({'resource_properties': value})
    except exceptions.InvalidInput as exc:
        raise exceptions.MalformedRequirements(
            rqrms=value, reason=exc.kwargs.get('reason') or exc.message)
    return value


def check_fields(params, resource_type, request_fields, output_fields):
    """Refuse (400) a field of neither list, and a field Climate sets
    given a value."""
    unknown = sorted(set(params) - set(request_fields) - set(output_fields))
    if unknown:
        raise exceptions.InvalidInput(
            reason='%s: not a %s parameter; accepted: %s' % (
                ', '.join(unknown), resource_type, ', '.join(request_fields)))
    for key in output_fields:
        if params.get(key) not in (None, []):
            raise exceptions.MalformedParameter(
                param=key, reason='%s is set by Climate; leave it out.' % key)


def refuse_if_error(reservation):
    """InvalidStateUpdate (409): a reservation in error takes no
    change."""
    if reservation.status == states.RES_ERROR:
        raise exceptions.InvalidStateUpdate(
            id=reservation.id, status=reservation.status,
            reason='Reservation %s is in error; delete its lease and make '
                   'a new one.' % reservation.id)


def without_output(current, changes, output_fields):
    """``changes`` less the fields Climate sets sent back as they were
    read; CantUpdateParameter (409) for one sent changed."""
    changes = dict(changes)
    for key in output_fields:
        if key in changes:
            if changes[key] == current.get(key):
                del changes[key]
            else:
                raise exceptions.CantUpdateParameter(
                    message='%s cannot be updated. Climate sets it.' % key,
                    param=key)
    return changes


def set_params(session, res_id, **values):
    """Store ``values`` in the reservation's parameters, in the caller's
    transaction (the lease's body is rendered again at commit); False
    when it is gone or already holds them."""
    row = session.get(models.Reservation, res_id)
    if row is None:
        return False
    params = dict(row.params or {})
    if all(params.get(k) == v for k, v in values.items()):
        return False
    row.params = dict(params, **values)
    session.flush()
    return True


def store_at_create(session, lease_id, res_id, params):
    """Store a new reservation's parameters as part of its lease's
    create: its ``updated_at`` stays null (the rows are the create's own
    inserts) and the lease's listing body is rendered again.  The
    create's answer is rendered from the records the lease service
    inserted: the session notes what is stored here for it
    (``climate.db.api.refresh_records``)."""
    session.execute(sa.update(models.Reservation).where(
        models.Reservation.id == res_id).values(
        params=params, updated_at=models.Reservation.updated_at))
    session.info.setdefault(db_api.STORED_AT_CREATE, {})[res_id] = params
    lease_json.changed(session, (lease_id,))
