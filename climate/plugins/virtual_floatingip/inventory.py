"""The floating IP inventory behind ``/v1/floatingips``: the request bodies
checked (each malformed field a 400 naming it, Blazar's sentence first),
the address checked with the backend of ``[floatingips] inventory``
(Neutron: an external network, outside the allocation pools), then
``climate.db.floatingips``.
"""

from climate.db import floatingips as db_fips
from climate import exceptions
from climate.plugins import common

CREATE_FIELDS = ('floating_network_id', 'floating_ip_address')


def network_id(value, name):
    """A network id: a non-empty string of at most 255 characters."""
    if not isinstance(value, str) or not value.strip() or \
            len(value) > 255 or not common.storable(value):
        raise exceptions.MalformedParameter(
            param=name,
            reason='%s is the id of an external network (a non-empty '
                   'string of at most 255 characters), not %s.' % (
                       name, common.short(value)))
    return value


def address(value, name):
    """The canonical text of an IPv4 or IPv6 address, else
    InvalidIPFormat (Blazar's sentence) naming ``name``."""
    found = db_fips.canonical(value)
    if found is None:
        raise exceptions.InvalidIPFormat(
            ip=value, param=name,
            reason='%s is not an IPv4 or IPv6 address.' % name)
    return found


class Inventory:
    """``/v1/floatingips`` of the plugin ``plugin`` (its backend checks
    the registrations)."""

    def __init__(self, plugin):
        self.plugin = plugin

    def list(self, ctx):
        return db_fips.fip_list(ctx)

    def get(self, ctx, fip_id):
        return db_fips.fip_get(ctx, fip_id)

    def create(self, ctx, body):
        if not isinstance(body, dict):
            raise exceptions.InvalidInput(
                reason='the request body is a JSON object of a floating IP')
        missing = [f for f in CREATE_FIELDS if body.get(f) in (None, '')]
        if missing:
            raise exceptions.MissingParameter(
                message='Missing parameter %s. A floating IP is registered '
                        'with floating_network_id (its external network) '
                        'and floating_ip_address.' % ','.join(missing),
                param=','.join(missing))
        unknown = sorted(set(body) - set(CREATE_FIELDS))
        if unknown:
            raise exceptions.InvalidInput(
                reason='%s: not a field of a floating IP; accepted: %s' % (
                    ', '.join(unknown), ', '.join(CREATE_FIELDS)))
        network = network_id(body['floating_network_id'],
                             'floating_network_id')
        ip = address(body['floating_ip_address'], 'floating_ip_address')
        subnet = self.plugin.backend.subnet_of(network, ip)
        return db_fips.fip_create(ctx, {
            'floating_network_id': network, 'floating_ip_address': ip,
            'subnet_id': subnet, 'reservable': True})

    def delete(self, ctx, fip_id):
        db_fips.fip_delete(ctx, fip_id)
