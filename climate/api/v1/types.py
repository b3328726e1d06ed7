"""Request bodies of /v1, as WSME types.

WSME checks field names (unknown ones are refused), types and lengths; the
meaning of the values (dates, windows, plugin parameters) is checked by
the manager, in one place for every caller.
"""

import pecan
import wsme
from wsme.rest import json as wsme_json
from wsme import types as wtypes

from climate.api import middleware
from climate import exceptions

MAX_BODY = 1024 * 1024


#: Plugin parameters whose value is a JSON object or list (a pre-created
#: instance's boot request, a volume reservation's volume specs and the
#: ids it shows, a floating IP reservation's addresses, a stack's
#: template, parameters, environment and what Climate derived and saw
#: of it, sent back as read); every other parameter is a scalar.
STRUCTURED_PARAMS = frozenset(['server', 'volumes', 'volume_ids',
                               'image_ids', 'required_floatingips',
                               'floatingips', 'template', 'parameters',
                               'environment', 'needs', 'free',
                               'unreservable', 'outputs'])


class JsonScalar(wtypes.UserType):
    """A string, number, boolean or null: a plugin parameter's value (an
    object or list for :data:`STRUCTURED_PARAMS`, which
    :func:`_check_nested` lets through by name)."""

    basetype = wtypes.text
    name = 'json_scalar'

    def validate(self, value):
        if value is None or isinstance(value, (str, int, float, bool)):
            return value
        raise ValueError('must be a string, number, boolean or null, not %s'
                         % type(value).__name__)


json_scalar = JsonScalar()


class ParamValue(JsonScalar):
    """A plugin parameter's value: a scalar, or an object or list for the
    :data:`STRUCTURED_PARAMS` (checked by name in :func:`_check_nested`,
    which runs first)."""

    name = 'param_value'

    def validate(self, value):
        if isinstance(value, (dict, list)):
            return value
        return super().validate(value)


param_value = ParamValue()


@wsme_json.fromjson.when_object(json_scalar)
def _scalar_fromjson(datatype, value):
    return datatype.validate(value)


@wsme_json.fromjson.when_object(param_value)
def _param_fromjson(datatype, value):
    return datatype.validate(value)


Date = wtypes.StringType(max_length=64)
Duration = wtypes.StringType(max_length=32)
Params = wtypes.DictType(wtypes.text, param_value)


class LeaseCreate(wtypes.Base):
    """POST /v1/leases, ``{"name": ..., "start_date": ..., ...}``."""

    name = wtypes.StringType(max_length=255)
    start_date = Date
    end_date = Date
    before_end_date = Date
    reservations = [Params]
    events = [Params]
    # microversion 1.11 (climate.lease.types checks them)
    lease_type = json_scalar
    max_retries = json_scalar
    # microversion 1.14 (climate.lease.holds checks it)
    hold_for = json_scalar
    # microversion 1.17 (climate.lease.idle checks it)
    keep_idle = json_scalar


class SeriesCreate(LeaseCreate):
    """POST /v1/lease-series (1.15): a lease create and its
    ``recurrence`` (climate.lease.recurrence checks it)."""

    recurrence = Params


class SeriesUpdate(wtypes.Base):
    """PUT /v1/lease-series/{id} (1.15)."""

    from_occurrence = json_scalar
    start_date = Date
    end_date = Date
    recurrence = Params


class LeaseUpdate(wtypes.Base):
    """PUT /v1/leases/{id}."""

    name = wtypes.StringType(max_length=255)
    start_date = Date
    end_date = Date
    before_end_date = Date
    prolong_for = Duration
    reduce_by = Duration
    defer_by = Duration
    advance_by = Duration
    reservations = [Params]
    events = [Params]


def _to_dict(obj, datatype):
    out = {}
    for attr in wtypes.list_attributes(datatype):
        value = getattr(obj, attr.key)
        if value is not wtypes.Unset:
            out[attr.name] = value
    return out


def _check_nested(path, datatype, value):
    """Name the exact place of a bad value inside lists and objects."""
    if value is None:
        return
    if isinstance(datatype, wtypes.ArrayType):
        if not isinstance(value, list):
            raise exceptions.InvalidInput(reason='%s must be a list' % path)
        for index, item in enumerate(value):
            _check_nested('%s[%d]' % (path, index), datatype.item_type, item)
    elif isinstance(datatype, wtypes.DictType):
        if not isinstance(value, dict):
            raise exceptions.InvalidInput(reason='%s must be an object' %
                                          path)
        for key, item in value.items():
            if datatype.value_type is param_value and \
                    key in STRUCTURED_PARAMS and \
                    isinstance(item, (dict, list)):
                continue  # the plugin checks its structure
            _check_nested('%s.%s' % (path, key), datatype.value_type, item)
    elif datatype in (json_scalar, param_value):
        try:
            json_scalar.validate(value)
        except ValueError as exc:
            raise exceptions.InvalidInput(reason='%s %s' % (path, exc))


def parse(request, datatype):
    """Type-check the request's JSON body into a plain dict.

    The body was decoded by ``climate.api.middleware.JsonBody``.
    :raises InvalidInput: what is wrong, and where.
    """
    data = request.environ[middleware.JSON_BODY]
    for attr in wtypes.list_attributes(datatype):
        if attr.name in data:
            _check_nested(attr.name, attr.datatype, data[attr.name])
    try:
        obj = wsme_json.fromjson(datatype, data)
    except wsme.exc.UnknownAttribute as exc:
        raise exceptions.InvalidInput(
            reason='unknown field(s) %s' % ', '.join(
                sorted('.'.join([*exc.fieldname_chain, a])
                       if getattr(exc, 'fieldname_chain', None) else a
                       for a in exc.attributes)))
    except wsme.exc.InvalidInput as exc:
        raise exceptions.InvalidInput(
            reason='%s: %s' % (exc.fieldname, exc.msg))
    except (ValueError, TypeError) as exc:
        raise exceptions.InvalidInput(reason=str(exc))
    return _to_dict(obj, datatype)


def request_object():
    """The request's JSON body, which must be an object (decoded once per
    request; a PATCH body is decoded here, since ``JsonBody`` decodes
    POST and PUT only and a body-less PATCH elsewhere must stay a 405).
    """
    environ = pecan.request.environ
    if middleware.JSON_BODY not in environ:
        environ[middleware.JSON_BODY] = middleware.decode_json_body(
            pecan.request, MAX_BODY)
    data = environ[middleware.JSON_BODY]
    if not isinstance(data, dict):
        raise exceptions.InvalidInput(reason='the body must be a JSON object')
    return data
