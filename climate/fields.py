"""A request body's fields checked against those it may have: one place
for the 400 that names the stray ones (a low module: it imports only
``climate.exceptions``)."""

from climate import exceptions


def object_of(body, what, accepted):
    """``body`` when it is a JSON object with none but ``accepted``
    fields; InvalidInput naming ``what`` it should be, or the fields it
    may not have."""
    if not isinstance(body, dict):
        raise exceptions.InvalidInput(
            reason='the request body is a JSON object of %s, with %s' % (
                what, ', '.join(accepted)))
    unknown = sorted(set(body) - set(accepted))
    if unknown:
        raise exceptions.InvalidInput(
            reason='%s: not a field of %s; accepted: %s' % (
                ', '.join(unknown), what, ', '.join(accepted)))
    return body
