"""``OS::Climate::Lease``: a Climate lease declared in a Heat template.

This module runs in **heat-engine**, not in Climate: it imports only the
standard library, oslo.config, keystoneauth1 and Heat.  Load it by naming
the directory that holds this file in heat.conf (in an installed Climate:
``<site-packages>/climate/heat_plugin``; or copy the file anywhere)::

    [DEFAULT]
    plugin_dirs = /usr/lib/heat,/path/to/climate/heat_plugin

Beyond Heat's own ``OS::Blazar::Lease`` it takes every reservation type
Climate has (``physical:host``, ``virtual:instance``, ``virtual:volume``,
``virtual:floatingip``, ``network``, ``virtual:stack``) with all their
fields, as Climate's API takes them; it waits until the lease is granted
(and, for a lease starting now, active) so that resources referencing its
attributes find their flavor, addresses or pools ready; and it can be
**updated**: new dates, a new name, changed fields of a reservation are
sent to Climate as one lease update (a template that adds, removes or
retypes reservations replaces the lease).  It talks to Climate's API as
the stack's user, through the ``reservation`` entry of the catalog, at the
latest microversion Climate offers (the catalog's URL ends with ``/v1``, as
Blazar's does).

Attributes other resources can reference: ``reservation_ids`` and
``reservations`` (in the template's order), ``flavor_ids`` (an instance
reservation's private flavor, null for other types), ``floatingips``
(every reserved address), ``status``, ``start_date``, ``end_date``,
``lease`` (the lease as Climate shows it).
"""

import json

from keystoneauth1 import adapter
from oslo_config import cfg

from heat.common import config as heat_config
from heat.common import exception
from heat.common.i18n import _
from heat.engine import attributes
from heat.engine import constraints
from heat.engine import properties
from heat.engine import resource
from heat.engine import support

#: Statuses a lease passes through while Climate works on it.
BUSY = ('STARTING', 'UPDATING', 'TERMINATING')
#: Fields Climate sets on a reservation; never sent back in an update.
SET_BY_CLIMATE = ('id', 'lease_id', 'status', 'resource_id', 'created_at',
                  'updated_at', 'missing_resources', 'resources_changed',
                  'stack_reservation_id')


def pair_reservations(requested, made):
    """The id of the reservation Climate made for each requested one.

    Climate lists a lease's reservations in its own order, with the parts
    of a stack among them: each request is paired with the reservation of
    its type (not a stack's part) that agrees with it on the most fields;
    two requests alike are interchangeable.
    """
    free = [r for r in made if not r.get('stack_reservation_id')]
    ids = []
    for want in requested:
        candidates = [r for r in free
                      if r.get('resource_type') == want.get('resource_type')]
        if not candidates:
            raise ValueError('no reservation of type %s in the lease' %
                             want.get('resource_type'))
        best = max(candidates, key=lambda r: sum(
            1 for key, value in want.items() if r.get(key) == value))
        free.remove(best)
        ids.append(best['id'])
    return ids


def reservation_changes(old, new, ids):
    """The ``reservations`` of a lease update turning the template's
    reservations ``old`` into ``new``: the changed fields of each, with
    its id.  None when they cannot be changed in place (a reservation
    added, removed, retyped, or a field dropped), so the lease is
    replaced."""
    if len(old) != len(new) or len(ids) != len(new):
        return None
    changes = []
    for before, after, res_id in zip(old, new, ids):
        if before.get('resource_type') != after.get('resource_type') or \
                set(before) - set(after):
            return None
        changed = {key: value for key, value in after.items()
                   if key != 'resource_type' and before.get(key) != value}
        if changed:
            changes.append(dict(changed, id=res_id))
    return changes


def of_reservations(lease, ids, field):
    """``field`` of each reservation of ``ids`` (None where it has none)."""
    by_id = {r['id']: r for r in lease.get('reservations', [])}
    return [by_id.get(res_id, {}).get(field) for res_id in ids]


def addresses(lease, ids):
    """Every floating IP address the reservations of ``ids`` hold."""
    found = []
    for held in of_reservations(lease, ids, 'floatingips'):
        found.extend(held or [])
    return found


class ClimateLease(resource.Resource):
    """A lease of Climate, the reservation service.

    The lease is granted whole or refused when the stack creates this
    resource; deleting the resource deletes the lease (an active one is
    reclaimed first).
    """

    support_status = support.SupportStatus(version='2026.1')

    PROPERTIES = (
        NAME, START_DATE, END_DATE, BEFORE_END_DATE, RESERVATIONS, EVENTS,
    ) = (
        'name', 'start_date', 'end_date', 'before_end_date', 'reservations',
        'events',
    )

    ATTRIBUTES = (
        LEASE_ATTR, STATUS, START_ATTR, END_ATTR, RESERVATION_IDS,
        RESERVATIONS_ATTR, FLAVOR_IDS, FLOATINGIPS,
    ) = (
        'lease', 'status', 'start_date', 'end_date', 'reservation_ids',
        'reservations', 'flavor_ids', 'floatingips',
    )

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING,
            _('The name of the lease (default: the resource\'s physical '
              'name).'),
            update_allowed=True),
        START_DATE: properties.Schema(
            properties.Schema.STRING,
            _('When the lease starts: "now", "CCYY-MM-DD hh:mm" or ISO 8601 '
              '(UTC unless an offset is given).'),
            default='now', update_allowed=True),
        END_DATE: properties.Schema(
            properties.Schema.STRING,
            _('When the lease ends, in the same formats.'),
            required=True, update_allowed=True),
        BEFORE_END_DATE: properties.Schema(
            properties.Schema.STRING,
            _('When the reservations\' before-end actions run.'),
            update_allowed=True),
        RESERVATIONS: properties.Schema(
            properties.Schema.LIST,
            _('The reservations, as Climate\'s API takes them: each a map '
              'with its resource_type and that type\'s fields.'),
            required=True, update_allowed=True,
            constraints=[constraints.Length(min=1)],
            schema=properties.Schema(properties.Schema.MAP)),
        EVENTS: properties.Schema(
            properties.Schema.LIST,
            _('User events of the lease (event_type and time).'),
            default=[],
            schema=properties.Schema(properties.Schema.MAP)),
    }

    attributes_schema = {
        LEASE_ATTR: attributes.Schema(
            _('The lease as Climate shows it.'),
            type=attributes.Schema.MAP),
        STATUS: attributes.Schema(
            _('The status of the lease.'), type=attributes.Schema.STRING),
        START_ATTR: attributes.Schema(
            _('When the lease starts.'), type=attributes.Schema.STRING),
        END_ATTR: attributes.Schema(
            _('When the lease ends.'), type=attributes.Schema.STRING),
        RESERVATION_IDS: attributes.Schema(
            _('The id of each reservation, in the template\'s order.'),
            type=attributes.Schema.LIST),
        RESERVATIONS_ATTR: attributes.Schema(
            _('Each reservation as Climate shows it, in the template\'s '
              'order.'),
            type=attributes.Schema.LIST),
        FLAVOR_IDS: attributes.Schema(
            _('The private flavor of each instance reservation (null for '
              'reservations of other types), in the template\'s order.'),
            type=attributes.Schema.LIST),
        FLOATINGIPS: attributes.Schema(
            _('Every floating IP address the lease reserves.'),
            type=attributes.Schema.LIST),
    }

    # -- Climate's API, as the stack's user -------------------------------

    def _api(self):
        # [clients_blazar] (else [clients]) endpoint_type, as Heat's own
        # Blazar resources use; python-blazarclient is not needed
        return adapter.Adapter(
            session=self.context.keystone_session,
            service_type='reservation',
            interface=heat_config.get_client_option('blazar',
                                                    'endpoint_type'),
            region_name=(self.context.region_name or
                         cfg.CONF.region_name_for_services),
            connect_retries=cfg.CONF.client_retry_limit,
            additional_headers={'OpenStack-API-Version':
                                'reservation latest'})

    def _call(self, method, path, body=None, ok=(200, 201, 202, 204)):
        resp = self._api().request(path, method, json=body, raise_exc=False)
        if resp.status_code not in ok:
            try:
                message = resp.json()['error_message']
            except (ValueError, KeyError, TypeError):
                message = resp.text
            raise exception.Error(_('Climate answered %(code)s: %(msg)s') % {
                'code': resp.status_code, 'msg': message})
        return resp

    def _lease(self):
        return self._call('GET', '/leases/%s' % self.resource_id).json()[
            'lease']

    def _ids(self):
        return json.loads(self.data().get('reservation_ids') or '[]')

    def _requested(self):
        """The reservations as the template asked for them last."""
        return json.loads(self.data().get('requested') or '[]')

    # -- life cycle -------------------------------------------------------

    def validate(self):
        super(ClimateLease, self).validate()
        for index, res in enumerate(self.properties[self.RESERVATIONS]):
            if not isinstance(res.get('resource_type'), str):
                raise exception.StackValidationFailed(message=_(
                    'reservations[%d] needs a resource_type') % index)

    def _body(self, props):
        body = {'name': props[self.NAME] or self.physical_resource_name(),
                'start_date': props[self.START_DATE],
                'end_date': props[self.END_DATE],
                'reservations': props[self.RESERVATIONS],
                'events': props[self.EVENTS]}
        if props[self.BEFORE_END_DATE]:
            body['before_end_date'] = props[self.BEFORE_END_DATE]
        return body

    def handle_create(self):
        lease = self._call('POST', '/leases',
                           self._body(self.properties)).json()['lease']
        self.resource_id_set(lease['id'])
        requested = self.properties[self.RESERVATIONS]
        self.data_set('reservation_ids', json.dumps(pair_reservations(
            requested, lease['reservations'])))
        self.data_set('requested', json.dumps(requested))
        return lease['id']

    def _settled(self, until_active):
        """Whether Climate is done with the lease (not busy; not PENDING
        either when ``until_active``); a lease in ERROR raises."""
        lease = self._lease()
        if lease['status'] == 'ERROR':
            raise exception.ResourceInError(
                resource_status=lease['status'],
                status_reason=lease.get('status_reason') or '')
        if lease['status'] in BUSY:
            return False
        return lease['status'] != 'PENDING' or not until_active

    def check_create_complete(self, lease_id):
        # a lease starting now is usable once active: wait for that, so
        # that a server on its flavor is not refused by Nova meanwhile
        return self._settled(self.properties[self.START_DATE] == 'now')

    def needs_replace_with_prop_diff(self, changed_properties_set,
                                     after_props, before_props):
        # Climate changes a reservation's fields, never the set of them
        if self.EVENTS in changed_properties_set:
            return True
        return self.RESERVATIONS in changed_properties_set and \
            reservation_changes(self._requested(),
                                after_props[self.RESERVATIONS],
                                self._ids()) is None

    def handle_update(self, json_snippet, tmpl_diff, prop_diff):
        body = {}
        if self.NAME in prop_diff:
            body['name'] = prop_diff[self.NAME] or \
                self.physical_resource_name()
        for key in (self.START_DATE, self.END_DATE, self.BEFORE_END_DATE):
            # "now" again moves nothing; a before-end date dropped stays
            if prop_diff.get(key) not in (None, 'now'):
                body[key] = prop_diff[key]
        if self.RESERVATIONS in prop_diff:
            requested = prop_diff[self.RESERVATIONS]
            changes = reservation_changes(self._requested(), requested,
                                          self._ids())
            if changes:
                body['reservations'] = changes
        if body:
            self._call('PUT', '/leases/%s' % self.resource_id, body)
        if self.RESERVATIONS in prop_diff:
            self.data_set('requested', json.dumps(requested))

    def check_update_complete(self, _result):
        return self._settled(False)

    def handle_delete(self):
        if self.resource_id is None:
            return None
        return self._delete()

    def _delete(self):
        """Delete the lease; False while Climate is busy with it."""
        resp = self._call('DELETE', '/leases/%s' % self.resource_id,
                          ok=(200, 202, 204, 404, 409))
        return resp.status_code != 409

    def check_delete_complete(self, deleted):
        # Heat calls again after a pause while this answers False
        if self.resource_id is None or deleted:
            return True
        return self._delete()

    def _resolve_attribute(self, name):
        if self.resource_id is None:
            return None
        lease = self._lease()
        ids = self._ids()
        if name == self.LEASE_ATTR:
            return lease
        if name in (self.STATUS, self.START_ATTR, self.END_ATTR):
            return lease.get(name)
        if name == self.RESERVATION_IDS:
            return ids
        if name == self.RESERVATIONS_ATTR:
            by_id = {r['id']: r for r in lease['reservations']}
            return [by_id.get(res_id) for res_id in ids]
        if name == self.FLAVOR_IDS:
            return of_reservations(lease, ids, 'flavor_id')
        if name == self.FLOATINGIPS:
            return addresses(lease, ids)
        return None


def resource_mapping():
    return {'OS::Climate::Lease': ClimateLease}
