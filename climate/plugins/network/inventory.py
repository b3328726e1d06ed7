"""The network segment inventory behind ``/v1/networks`` (Blazar's and
Chameleon's shapes): the request bodies checked (each malformed field a
400 naming it, nothing written), then ``climate.db.network_segments``.

A registration is ``network_type`` (vlan, vxlan, flat),
``physical_network`` (required for vlan and flat, absent or null for
vxlan), ``segment_id`` (vlan 1-4094, vxlan 1-16777215, absent for flat)
and optional ``reservable``; every other key is an extra capability
(text), which ``resource_properties`` filters read as the segment's
fields are.
"""

from climate import dates
from climate.db import models
from climate.db import network_segments as db_segments
from climate import exceptions
from climate.plugins import capabilities
from climate.plugins import common
from climate.scheduling import filters

NETWORK_TYPES = ('vlan', 'vxlan', 'flat')
#: The segment ids each type takes (flat: none).
RANGES = {'vlan': (1, 4094), 'vxlan': (1, 2 ** 24 - 1)}
#: Keys that are no extra capability.
RESERVED_KEYS = db_segments.FIELDS + ('id', 'reservable', 'created_at',
                                      'updated_at', 'trust_id')
OWNER = 'network segment'


def network_type(value):
    if value not in NETWORK_TYPES:
        raise exceptions.MalformedParameter(
            param='network_type',
            reason='network_type is one of %s, not %s.' % (
                ', '.join(NETWORK_TYPES), common.short(value)))
    return value


def physical_network(value, kind):
    if kind == 'vxlan':
        if value not in (None, ''):
            raise exceptions.MalformedParameter(
                param='physical_network',
                reason='a vxlan segment has no physical_network; leave it '
                       'out (or null), not %s.' % common.short(value))
        return None
    if not isinstance(value, str) or not value.strip() or \
            len(value) > 255 or not common.storable(value):
        raise exceptions.MalformedParameter(
            param='physical_network',
            reason='a %s segment names its physical_network (a non-empty '
                   'string of at most 255 characters, e.g. physnet1), not '
                   '%s.' % (kind, common.short(value)))
    return value


def segment_id(value, kind):
    if kind == 'flat':
        if value not in (None, '', 0):
            raise exceptions.MalformedParameter(
                param='segment_id',
                reason='a flat segment has no segment_id; leave it out, '
                       'not %s.' % common.short(value))
        return 0
    low, high = RANGES[kind]
    number = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and value.strip().isascii() and \
            value.strip().isdigit() and len(value.strip()) < 12:
        number = int(value)
    if number is None or not low <= number <= high:
        raise exceptions.MalformedParameter(
            param='segment_id',
            reason='the segment_id of a %s segment is a whole number from '
                   '%d to %d, not %s.' % (kind, low, high,
                                          common.short(value)))
    return number


def reservable(value):
    if not isinstance(value, bool):
        raise exceptions.MalformedParameter(
            param='reservable',
            reason='reservable is true or false, not %s.' %
            common.short(value))
    return value


def _object(body):
    if not isinstance(body, dict):
        raise exceptions.InvalidInput(
            reason='the request body is a JSON object of a network segment')
    return body


class Inventory:
    """``/v1/networks`` of the plugin ``plugin``."""

    def __init__(self, plugin):
        self.plugin = plugin

    def list(self, ctx):
        return db_segments.segment_list(ctx)

    def get(self, ctx, segment_row_id):
        return db_segments.segment_get(ctx, segment_row_id)

    def create(self, ctx, body):
        body = dict(_object(body))
        if body.get('network_type') in (None, ''):
            raise exceptions.MissingParameter(
                message='Missing parameter network_type. A network segment '
                        'is registered with network_type (vlan, vxlan or '
                        'flat), physical_network (not for vxlan) and '
                        'segment_id (not for flat).', param='network_type')
        kind = network_type(body.pop('network_type'))
        if kind != 'vxlan' and body.get('physical_network') in (None, ''):
            raise exceptions.MissingParameter(
                message='Missing parameter physical_network. A %s segment '
                        'names its physical network.' % kind,
                param='physical_network')
        if kind != 'flat' and body.get('segment_id') in (None, ''):
            raise exceptions.MissingParameter(
                message='Missing parameter segment_id. A %s segment has '
                        'an id (VLAN or VNI).' % kind, param='segment_id')
        values = {
            'network_type': kind,
            'physical_network': physical_network(
                body.pop('physical_network', None), kind),
            'segment_id': segment_id(body.pop('segment_id', None), kind),
            'reservable': reservable(body.pop('reservable', True)),
        }
        values['capabilities'] = capabilities.stored(
            body, allow_null=False, owner=OWNER, reserved=RESERVED_KEYS)
        return db_segments.segment_create(ctx, values)

    def update(self, ctx, segment_row_id, body):
        """Set or (null) remove extra capabilities, set ``reservable``;
        CantUpdateNetworkCapability (409) for a capability a reservation
        holding the segment selects by."""
        body = _object(body)
        values = body.get('values') if set(body) == {'values'} else body
        if not isinstance(values, dict):
            raise exceptions.InvalidInput(reason='values must be an object')
        if not values:
            raise exceptions.NoDataToUpdate()
        values = dict(values)
        for key in db_segments.FIELDS:
            if key in values:
                raise exceptions.InvalidInput(
                    reason='%s is a fact of the segment; it cannot be '
                           'changed (delete the segment and register '
                           'another)' % key)
        flag = values.pop('reservable', None)
        if flag is not None:
            reservable(flag)
        caps = capabilities.stored(
            values, allow_null=True, owner=OWNER, reserved=RESERVED_KEYS)
        return db_segments.segment_update(
            ctx, segment_row_id, capabilities=caps, reservable=flag,
            check=self._refuse_held)

    @staticmethod
    def _refuse_held(session, row, capabilities):
        """A capability that a reservation holding the segment (not yet
        over) filters on stays as it is."""
        if not capabilities:
            return
        held = []
        for res_id in db_segments.holders(session, row.id, dates.utcnow()):
            res = session.get(models.Reservation, res_id)
            params = (res.params or {}) if res is not None else {}
            names = set()
            for field in ('resource_properties', 'network_properties'):
                try:
                    names |= filters.names_in(filters.parse(
                        params.get(field), field))
                except exceptions.InvalidInput:
                    continue
            touched = sorted(names & set(capabilities))
            if touched:
                held.append('%s (reservation %s)' % (', '.join(touched),
                                                     res_id))
        if held:
            raise exceptions.CantUpdateNetworkCapability(
                network=row.id, keys=sorted(capabilities),
                reason='Reservations holding the segment select it by %s.'
                       % '; '.join(held))

    def delete(self, ctx, segment_row_id):
        db_segments.segment_delete(ctx, segment_row_id)
