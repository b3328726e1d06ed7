"""The error body every failure answers with (Blazar's shape)."""

import json

import webob

from climate.api import microversion


def body(code, message, name):
    return {'error_code': code, 'error_message': message, 'error_name': name}


def response(code, message, name, version=None):
    resp = webob.Response(status=code, content_type='application/json',
                          charset='UTF-8')
    resp.text = json.dumps(body(code, message, name))
    if version is not None:
        resp.headers[microversion.HEADER] = '%s %s' % (
            microversion.SERVICE_TYPE, version)
        resp.headers['Vary'] = microversion.HEADER
    return resp


def message_of(exc):
    """A ClimateException's message (or one re-raised from RPC).

    ``message``, not ``str()``: oslo.messaging re-raises a manager's error
    with a ``__str__`` that appends the manager's traceback.
    """
    return getattr(exc, 'message', None) or str(exc)


def from_exception(exc, version=None):
    """Response for a ClimateException (or one re-raised from RPC)."""
    return response(exc.code, message_of(exc), exc.error_name, version)
