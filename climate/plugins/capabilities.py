"""Extra capabilities as the inventories store them (hosts and network
segments): free-form properties the filters of a reservation read."""

from climate import exceptions
from climate.plugins import common

#: Longest name of a property (the column's size; an update takes it).
MAX_KEY = 255
MAX_VALUE = 255
MAX_CAPABILITIES = 64


def stored(values, allow_null, owner, reserved):
    """Extra capabilities as stored (text values; None: remove one, when
    ``allow_null``), of an ``owner`` (``'host'``) whose own fields are
    ``reserved``."""
    if len(values) > MAX_CAPABILITIES:
        raise exceptions.InvalidInput(
            reason='a %s takes at most %d extra capabilities' %
            (owner, MAX_CAPABILITIES))
    out = {}
    for key, value in values.items():
        common.check_text(key, 'an extra capability name')
        common.check_text(value, 'extra capability %r' % key)
        if not isinstance(key, str) or not key or len(key) > MAX_KEY or \
                key.startswith('$'):
            raise exceptions.InvalidInput(
                reason='extra capability names are 1 to %d characters, not '
                       'starting with $: %r' % (MAX_KEY, key))
        if key in reserved:
            raise exceptions.InvalidInput(
                reason='%s is a %s field, not an extra capability' % (
                    key, owner))
        if value is None and allow_null:
            out[key] = None
            continue
        if isinstance(value, bool):
            value = str(value)
        if not isinstance(value, (str, int, float)) or \
                not common.finite(value) or len(str(value)) > MAX_VALUE:
            raise exceptions.InvalidInput(
                reason='extra capability %s must be a string or number of at '
                       'most %d characters' % (key, MAX_VALUE))
        out[key] = str(value)
    return out
