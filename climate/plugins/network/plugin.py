"""The ``network`` resource plugin (Chameleon's and Blazar's network
plugin fields).

A reservation asks for one network segment matching
``resource_properties`` (and ``network_properties``, Blazar's second
filter, when given: both must match), in the filter language of
``climate.scheduling.filters`` over the segment's fields
(``$network_type``, ``$physical_network``, ``$segment_id``) and extra
capabilities, and names the Neutron network to make on it
(``network_name``, optional ``network_description``).  The segments are
those an operator registered through ``/v1/networks``
(``climate.db.network_segments``).

**Booking.**  Each segment is a provider of the capacity ledger holding one
``NETWORK_SEGMENT``.  In the lease's transaction one of the matching reservable
segments free over the whole window is booked
(``climate.db.ledger.unit_search.place_units``, the lowest free one); the
ledger locks and re-checks it, so no segment is ever booked by two reservations
over overlapping windows.  None free: 409 saying how many match and from when
one would be free (``availability.earliest_start``).

**In the cloud** the backend of ``[networks] inventory`` acts: at the
start it makes the network, at the end it deletes it with its ports and
subnets; what the cloud refused to delete is kept in
``cleanup_errors`` and the segment is freed all the same.

**Parameters stored**: the request's fields and, set by Climate,
``segment_id``, ``network_type``, ``physical_network`` (from the booking
on) and ``network_id`` (from the start on), ``cleanup_errors`` (at the
end).
"""

import json

from oslo_config import cfg
from oslo_log import log as logging

from climate import dates
from climate.db import api as db_api
from climate.db.ledger import availability
from climate.db.ledger import booking
from climate.db.ledger import unit_search
from climate.db import network_segments as db_segments
from climate import exceptions
from climate.plugins import backend_loader
from climate.plugins import base
from climate.plugins import caches
from climate.plugins import common
from climate.plugins.network import backends
from climate.plugins import params as stored
from climate.plugins import rebooking
from climate.scheduling import filters
from climate import states

LOG = logging.getLogger(__name__)
CONF = cfg.CONF

RESOURCE_TYPE = 'network'
REQUEST_FIELDS = ('network_name', 'network_description',
                  'resource_properties', 'network_properties')
FILTER_FIELDS = ('resource_properties', 'network_properties')
#: Set by Climate; a client may send them back as it read them.
OUTPUT_FIELDS = ('segment_id', 'network_type', 'physical_network',
                 'network_id', 'cleanup_errors')
SHAPE = {db_segments.NETWORK_SEGMENT: 1}
MAX_TEXT = 255
#: Filter pairs whose matching segments a manager keeps (per segment
#: inventory version: ``NetworkPlugin._matching``).
MATCH_CACHE_SIZE = 256


def _filter_key(value):
    """A filter as a cache key: the text as sent, a list as its JSON
    (which parses to the same tree), '' when empty."""
    if value in (None, [], ''):
        return ''
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def text_of(value, name, required):
    if value in (None, '') and not required:
        return None
    if not isinstance(value, str) or not value.strip() or \
            len(value) > MAX_TEXT or not common.storable(value):
        raise exceptions.MalformedParameter(
            param=name, reason='%s is a non-empty string of at most %d '
                               'characters, not %s.' % (name, MAX_TEXT,
                                                        common.short(value)))
    return value


def segment_params(row):
    """What a reservation shows of the segment it holds."""
    return {'segment_id': row.segment_id, 'network_type': row.network_type,
            'physical_network': row.physical_network or None}


class NetworkPlugin(backend_loader.BackendOwner, base.ResourcePlugin):
    resource_type = RESOURCE_TYPE
    description = ('A network segment (resource_properties) made a '
                   'Neutron network (network_name) for the lease.')
    backends = backends

    def __init__(self, owner=None):
        super().__init__(owner)
        # the version is read in the caller's session (``_matching``)
        self._matches = caches.InventoryVersionCache(
            MATCH_CACHE_SIZE, db_segments.inventory_version)

    # -- parameters ----------------------------------------------------------

    def validate(self, params):
        """Check a request; each malformed field is a 400 naming it.

        :returns: every stored parameter (see the module's docstring).
        """
        stored.check_fields(params, RESOURCE_TYPE, REQUEST_FIELDS,
                            OUTPUT_FIELDS)
        if params.get('network_name') in (None, ''):
            raise exceptions.MissingParameter(
                message='Missing parameter network_name. A network '
                        'reservation names the Neutron network Climate '
                        'makes on the segment at the start.',
                param='network_name')
        out = {'network_name': text_of(params['network_name'],
                                       'network_name', True),
               'network_description': text_of(
                   params.get('network_description'), 'network_description',
                   False)}
        for field in FILTER_FIELDS:
            value = params.get(field)
            filters.parse(value, field)
            out[field] = value if value not in (None, []) else ''
        out.update({k: None for k in OUTPUT_FIELDS})
        out['cleanup_errors'] = []
        return out

    def validate_change(self, current, changes):
        """The fields Climate set sent back unchanged are ignored; the
        rest is checked as a request."""
        changes = stored.without_output(current, changes, OUTPUT_FIELDS)
        merged = {k: v for k, v in current.items() if k in REQUEST_FIELDS}
        merged.update(changes)
        out = self.validate(merged)
        out.update({k: current.get(k) for k in OUTPUT_FIELDS})
        return out

    # -- allocation -----------------------------------------------------------

    def _matching(self, session, params):
        """The provider ids of the reservable segments both filters
        match, sorted (see :meth:`_match_of`)."""
        return list(self._match_of(session, params)[0])

    def _match_of(self, session, params):
        """``(ids, every)``: the sorted provider ids of the reservable
        segments both filters match, and whether they are every segment
        registered.

        Reading and filtering the segments costs milliseconds per
        thousand; the answer changes only with the segment inventory,
        whose every change (``climate.db.network_segments``: create,
        update, delete) bumps ``inventory_versions`` in its transaction:
        a lookup reads that counter (a primary-key read, in the caller's
        transaction) and reuses the answer found at the same version, in
        this manager process (an LRU of :data:`MATCH_CACHE_SIZE` filter
        pairs)."""
        trees = [filters.parse(params.get(f), f) for f in FILTER_FIELDS]
        key = tuple(_filter_key(params.get(f)) for f in FILTER_FIELDS)
        return self._matches.get(
            session, key, lambda: self._match(session, trees))

    @staticmethod
    def _match(session, trees):
        """:meth:`_match_of`'s answer, read (one query of columns; each
        row's properties built once, none when there is no filter; and
        a count)."""
        rows = db_segments.reservable_segments(session)
        trees = [t for t in trees if t is not None]
        if not trees:
            found = [db_segments.provider(r.id) for r in rows]
        else:
            found = []
            for row in rows:
                props = db_segments.properties(row)
                if all(filters.evaluate(t, props) for t in trees):
                    found.append(db_segments.provider(row.id))
        every = len(found) == db_segments.segment_count(session)
        return tuple(sorted(found)), every

    def _place(self, session, res_id, lease_id, params, start, end,
               what=None):
        """Book one matching segment over ``[start, end)``; NotEnoughNetworks
        (409) when none is free.  When every segment matches, the ledger
        looks among all the providers of the kind rather than a list of
        thousands of ids (each a bound parameter: 30 ms for 4,000 on
        MariaDB)."""
        candidates, every = self._match_of(session, params)
        try:
            if not candidates:
                raise exceptions.Conflict(reason='no candidate')
            unit_search.place_units(session, res_id, lease_id,
                                    db_segments.NETWORK_SEGMENT, 1, start, end,
                                    providers=None if every else candidates,
                                    kind=db_segments.KIND)
        except exceptions.Conflict:
            raise self._not_enough(session, params, list(candidates), start,
                                   end, what)

    @staticmethod
    def _not_enough(session, params, candidates, start, end, what):
        asked = ' and '.join('%s %s' % (f, params[f]) for f in FILTER_FIELDS
                             if params.get(f)) or 'any segment'
        head = '%sa network segment matching %s asked from %s to %s UTC' % (
            (what + ': ') if what else '', asked, common.fmt(start),
            common.fmt(end))
        if not candidates:
            return exceptions.NotEnoughNetworks(
                reason='%s; no reservable segment matches (GET /v1/networks '
                       'lists the segments and their capabilities).' % head)
        until = rebooking.horizon_end(start, end - start)
        when = availability.earliest_start(
            session, SHAPE, 1, end - start, start, latest_end=until,
            affinity=False, provider_ids=candidates, kind=db_segments.KIND)
        if when is not None and when <= start:
            # refused over this very window: the ledger's rounds were
            # spent on segments concurrent requests took under the lock
            later = 'Concurrent requests took them meanwhile; try again.'
        elif when is not None:
            later = 'One would be free for as long from %s UTC.' % \
                common.fmt(when)
        else:
            later = 'None is free for as long before %s UTC.' % \
                common.fmt(until)
        return exceptions.NotEnoughNetworks(
            reason='%s; %d reservable segment(s) match, none is free over '
                   'the whole window. %s' % (head, len(candidates), later))

    @staticmethod
    def _held(session, res_id, after=None):
        rows = list(db_segments.held_by(session, res_id, after).values())
        return rows[0] if rows else None

    def reserve(self, ctx, lease, reservation):
        """Book a segment over the lease's window (409 when none is
        free)."""
        start = lease.start_date
        end = lease.end_date
        with db_api.writer(ctx) as session:
            self._place(session, reservation.id, lease.id,
                        reservation.params, start, end)
            params = {k: reservation.params.get(k)
                      for k in REQUEST_FIELDS + OUTPUT_FIELDS}
            params.update(segment_params(self._held(session,
                                                    reservation.id)))
            stored.store_at_create(session, lease.id, reservation.id,
                                   params)
        return reservation.id

    def update(self, ctx, old_lease, lease, reservation, new_params):
        """Pending: the same segment while it matches and stays free over
        the new dates, else another.  Active: the lease may be extended
        while the segment stays free; the segment and the network's name
        stay (400)."""
        params = dict(new_params)
        res_id = reservation.id
        start = lease.start_date
        end = lease.end_date
        stored.refuse_if_error(reservation)
        with db_api.writer(ctx) as session:
            held = self._held(session, res_id)
            matching = self._matching(session, params)
            keeps = held is not None and \
                db_segments.provider(held.id) in matching
            if reservation.status == states.RES_ACTIVE:
                if not keeps or params['network_name'] != \
                        reservation.params.get('network_name'):
                    raise exceptions.CantUpdateNetworkReservation(
                        msg='Reservation %s is active: its network %s is '
                            'made on its segment, so network_name stays '
                            'and the filters must still match the segment; '
                            'only the dates may change.' % (
                                res_id,
                                reservation.params.get('network_name')))
                old_end = old_lease.end_date
                if end != old_end:
                    rebooking.extend(session, res_id, lease.id,
                                           dates.utcnow(), end,
                                           'its network segment')
                return params
            if keeps:
                try:
                    booking.rebook(session, res_id, lease.id,
                                   [booking.Request(db_segments.provider(
                                      held.id), db_segments.NETWORK_SEGMENT,
                                      1)], start, end)
                except exceptions.Conflict:
                    keeps = False
            if not keeps:
                booking.release(session, res_id)
                self._place(session, res_id, lease.id, params, start,
                            end, what='cannot move reservation %s' % res_id)
            params.update(segment_params(self._held(session, res_id)))
        return params

    def delete(self, ctx, lease, reservation):
        """Release the reservation's segment."""
        with db_api.writer(ctx) as session:
            booking.release(session, reservation.id)

    # -- events ---------------------------------------------------------------

    # The cloud is called outside the plugin's own transactions; what it
    # answers is stored in a short one.

    def on_start(self, ctx, lease, reservation, event):
        """Make the reservation's network on its segment (backend
        ``start``)."""
        with db_api.reader(ctx) as session:
            row = self._held(session, reservation.id)
        if row is None:
            return
        network_id = self.backend.start(
            reservation.id, lease.project_id, segment_params(row),
            reservation.params['network_name'],
            reservation.params.get('network_description'))
        if network_id:
            with db_api.writer(ctx) as session:
                stored.set_params(session, reservation.id,
                                  network_id=network_id)

    def on_end(self, ctx, lease, reservation, event=None):
        """Delete the reservation's network (backend ``end``), keep what
        the cloud refused in ``cleanup_errors``, free the segment."""
        with db_api.reader(ctx) as session:
            row = self._held(session, reservation.id)
        segment = segment_params(row) if row is not None else {
            k: reservation.params.get(k)
            for k in ('segment_id', 'network_type', 'physical_network')}
        errors = []
        if segment.get('network_type'):
            errors = self.backend.end(
                reservation.id, lease.project_id, segment,
                reservation.params.get('network_id'))
        with db_api.writer(ctx) as session:
            if errors:
                stored.set_params(session, reservation.id,
                                  cleanup_errors=list(errors))
            booking.release(session, reservation.id)
