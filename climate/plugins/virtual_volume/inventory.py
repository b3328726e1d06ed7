"""The volume pool inventory behind ``/v1/volume-pools``: the request
bodies checked (each malformed field a 400 naming it), then
``climate.db.volume_pools``.

With ``[volumes] inventory = static`` the operator declares the pools
(create, update, delete); with ``cinder`` they come from Cinder: only
``reservable`` and the extra ``capabilities`` may be changed here.
"""

from oslo_config import cfg

from climate.db import volume_pools as db_pools
from climate import exceptions
from climate.plugins import common

CONF = cfg.CONF

CREATE_FIELDS = ('name', 'backend', 'reservable', 'total_capacity_gb',
                 'reserved_percentage', 'max_over_subscription_ratio',
                 'capabilities')
#: What an update may change with the cinder inventory.
CINDER_UPDATE = ('reservable', 'capabilities')
UPDATE_FIELDS = CREATE_FIELDS[2:]
MAX_INT = 2 ** 53


def _bad(name, reason):
    return exceptions.MalformedParameter(param=name, reason=reason)


def _text(body, name, required=False):
    value = body.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip() or \
            len(value) > 255 or not common.storable(value):
        raise _bad(name, '%s is a non-empty string of at most 255 '
                         'characters, not %r.' % (name, value))
    return value


def _int(body, name, low, high):
    value = body[name]
    if isinstance(value, bool) or not isinstance(value, int) or \
            not low <= value <= high:
        raise _bad(name, '%s is a whole number from %d to %d, not %r.' % (
            name, low, high, value))
    return value


def _ratio(body, name):
    value = body[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not 0 < value <= 1000:
        raise _bad(name, '%s is a number above 0 (at most 1000), not %r.'
                   % (name, value))
    return float(value)


def _bool(body, name):
    value = body[name]
    if not isinstance(value, bool):
        raise _bad(name, '%s is true or false, not %r.' % (name, value))
    return value


def _caps(value, name='capabilities'):
    if not isinstance(value, dict):
        raise _bad(name, '%s is an object of names and values, not %r.'
                   % (name, value))
    for key, item in value.items():
        if not key or len(key) > 255 or not common.storable(key):
            raise _bad(name, 'capability names are non-empty strings of at '
                             'most 255 characters, not %r.' % key)
        if item is not None and not isinstance(
                item, (str, int, float, bool, list)):
            raise _bad('%s.%s' % (name, key),
                       'a capability is a string, number, boolean or list, '
                       'not %r.' % (item,))
    return value


def _unknown(body, allowed, what):
    if not isinstance(body, dict):
        raise exceptions.InvalidInput(
            reason='the request body is a JSON object of %s' % what)
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise exceptions.InvalidInput(
            reason='%s: not a field of %s; accepted: %s' % (
                ', '.join(unknown), what, ', '.join(allowed)))


def _checked(body, fields):
    out = {}
    for name in fields:
        if name not in body:
            continue
        if name in ('name', 'backend'):
            out[name] = _text(body, name, required=True)
        elif name == 'total_capacity_gb':
            out[name] = _int(body, name, 0, MAX_INT)
        elif name == 'reserved_percentage':
            out[name] = _int(body, name, 0, 100)
        elif name == 'max_over_subscription_ratio':
            out[name] = _ratio(body, name)
        elif name == 'reservable':
            out[name] = _bool(body, name)
        elif name == 'capabilities':
            out[name] = _caps(body[name])
    return out


def _static_only(action):
    if CONF.volumes.inventory != 'static':
        raise exceptions.InvalidInput(
            reason='pools come from Cinder ([volumes] inventory = %s): '
                   'they cannot be %s here' % (CONF.volumes.inventory,
                                               action))


def backend_of(name):
    """Cinder's backend of a pool name ``host@backend#pool``."""
    if '@' in name:
        return name.split('@', 1)[1].split('#', 1)[0] or name
    return name.split('#', 1)[0]


class Inventory:

    def list(self, ctx):
        return db_pools.pool_list(ctx)

    def get(self, ctx, pool_id):
        return db_pools.pool_get(ctx, pool_id)

    def create(self, ctx, body):
        _static_only('created')
        _unknown(body, CREATE_FIELDS, 'a volume pool')
        for name in ('name', 'total_capacity_gb'):
            if body.get(name) is None:
                raise exceptions.MissingParameter(
                    message='Missing parameter %s. A volume pool needs '
                            'name and total_capacity_gb.' % name, param=name)
        values = _checked(body, CREATE_FIELDS)
        values.setdefault('backend', backend_of(values['name']))
        values.setdefault('reservable', True)
        values.setdefault('reserved_percentage', 0)
        values.setdefault('max_over_subscription_ratio', 1.0)
        values.setdefault('capabilities', {})
        return db_pools.pool_create(ctx, values)

    def update(self, ctx, pool_id, body):
        allowed = UPDATE_FIELDS if CONF.volumes.inventory == 'static' \
            else CINDER_UPDATE
        _unknown(body, allowed, 'a volume pool update%s' % (
            '' if allowed == UPDATE_FIELDS else ' (pools come from Cinder)'))
        values = _checked(body, allowed)
        current = db_pools.pool_get(ctx, pool_id)
        if 'capabilities' in values:
            caps = dict(current['capabilities'])
            for key, value in values['capabilities'].items():
                if value is None:
                    caps.pop(key, None)
                else:
                    caps[key] = value
            values['capabilities'] = caps
        if not values:
            return current
        return db_pools.pool_update(ctx, pool_id, values)

    def delete(self, ctx, pool_id):
        _static_only('deleted')
        db_pools.pool_delete(ctx, pool_id)
