"""The ``virtual:floatingip`` resource plugin (Blazar's fields).

A reservation asks for ``amount`` addresses of the external network
``network_id``, among them the addresses ``required_floatingips`` lists;
the addresses are those an operator registered through
``/v1/floatingips`` (``climate.db.floatingips``).

**Booking.**  Each address is a provider of the capacity ledger holding
one ``FLOATING_IP``.  In the lease's transaction the required addresses
are booked by name (``booking.book``), then the rest is placed on the
other reservable addresses of the network, the lowest free ones
(``unit_search.place_units``: an address is free when no booking of it
overlaps the window), over the whole window.  The ledger locks what it
takes and re-checks it, so no address is ever booked by two
reservations over overlapping windows, whatever the number of managers.

**In the cloud** the backend of ``[floatingips] inventory`` acts
(``backends``): at the start it makes each address a floating IP of the
lease's project, at the end it deletes them; the static backend only
records.

**Parameters stored**: ``network_id``, ``amount``,
``required_floatingips`` (canonical addresses) and, set by Climate,
``floatingips``: the addresses the reservation holds, in numeric order,
from its booking on.
"""

from oslo_config import cfg
from oslo_log import log as logging

from climate import dates
from climate.db import api as db_api
from climate.db import floatingips as db_fips
from climate.db.ledger import availability
from climate.db.ledger import booking
from climate.db.ledger import unit_search
from climate import exceptions
from climate.plugins import backend_loader
from climate.plugins import base
from climate.plugins import caches
from climate.plugins import common
from climate.plugins import params as stored
from climate.plugins import rebooking
from climate.plugins.virtual_floatingip import backends
from climate.plugins.virtual_floatingip import inventory
from climate import states

LOG = logging.getLogger(__name__)
CONF = cfg.CONF

RESOURCE_TYPE = 'virtual:floatingip'
REQUEST_FIELDS = ('network_id', 'amount', 'required_floatingips')
#: Set by Climate; a client may send it back as it read it.
OUTPUT_FIELDS = ('floatingips',)
SHAPE = {db_fips.FLOATING_IP: 1}
#: Networks whose registered addresses a manager keeps (an LRU).
NETWORK_CACHE_SIZE = 64
#: Rounds of the search for a start at which the required addresses and
#: the others are all free (a 409's "it would fit from").
EARLIEST_ROUNDS = 8


def amount_of(value):
    """``amount``: a whole number from 1 (Blazar's ``is_int_like``: an
    integer or its decimal text; booleans refused)."""
    number = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str):
        text = value.strip()
        if text.isascii() and text.isdigit() and len(text) < 12:
            number = int(text)
    if number is None or not 1 <= number <= stored.DB_MAX_INT:
        raise exceptions.MalformedParameter(
            param='amount', reason='amount is the number of floating IPs '
                                   'to reserve: a whole number from 1 to '
                                   '%d, not %s.' % (stored.DB_MAX_INT,
                                                    common.short(value)))
    return number


def addresses_of(value, name='required_floatingips'):
    """A list of distinct IP addresses, canonical (``[]`` for none)."""
    if value is None or value == '':
        return []
    if not isinstance(value, list):
        raise exceptions.MalformedParameter(
            param=name, reason='%s is a list of IP addresses of the '
                               'network, not %s.' % (name,
                                                     common.short(value)))
    out = []
    for i, item in enumerate(value):
        address = inventory.address(item, '%s[%d]' % (name, i))
        if address in out:
            raise exceptions.MalformedParameter(
                param=name, reason='%s lists %s twice.' % (name, address))
        out.append(address)
    return out


def in_order(addresses):
    return sorted(addresses, key=db_fips.address_key)


def reservation_params(params):
    """A reservation's ``params`` with every field (None where unset),
    as stored at its create."""
    return {k: params.get(k) for k in REQUEST_FIELDS + OUTPUT_FIELDS}


class FloatingIPPlugin(backend_loader.BackendOwner, base.ResourcePlugin):
    resource_type = RESOURCE_TYPE
    description = ('Floating IP addresses (amount, network_id, '
                   'required_floatingips) of an external network.')
    backends = backends

    def __init__(self, owner=None):
        super().__init__(owner)
        # the version is read in the caller's session (``_registered``)
        self._networks = caches.InventoryVersionCache(
            NETWORK_CACHE_SIZE, db_fips.inventory_version)

    # -- parameters ----------------------------------------------------------

    def validate(self, params):
        """Check a request in Blazar's order (network_id, amount,
        required_floatingips); each malformed field is a 400 naming it.

        :returns: every stored parameter (see the module's docstring).
        """
        stored.check_fields(params, RESOURCE_TYPE, REQUEST_FIELDS,
                            OUTPUT_FIELDS)
        for key in ('network_id', 'amount'):
            if params.get(key) in (None, ''):
                raise exceptions.MissingParameter(
                    message='Missing parameter %s. A virtual:floatingip '
                            'reservation needs network_id (the external '
                            'network) and amount (how many of its '
                            'addresses).' % key, param=key)
        out = {'network_id': inventory.network_id(params['network_id'],
                                                  'network_id'),
               'amount': amount_of(params['amount']),
               'required_floatingips': addresses_of(
                   params.get('required_floatingips'))}
        if len(out['required_floatingips']) > out['amount']:
            raise exceptions.TooLongFloatingIPs(
                amount=out['amount'],
                count=len(out['required_floatingips']))
        out['floatingips'] = []
        return out

    def validate_change(self, current, changes):
        """Blazar's rules: ``network_id`` stays, ``required_floatingips``
        may only be emptied; what the client sends back unchanged of what
        Climate set is ignored; the rest is checked as a request."""
        changes = stored.without_output(current, changes, OUTPUT_FIELDS)
        if changes.get('network_id', current['network_id']) != \
                current['network_id']:
            raise exceptions.CantUpdateFloatingIPReservation(
                msg='Updating network_id is not supported. The reservation '
                    'holds addresses of network %s; reserve another '
                    "network's in a new reservation." %
                    current['network_id'])
        if 'required_floatingips' in changes:
            wanted = addresses_of(changes['required_floatingips'])
            if wanted and wanted != current.get('required_floatingips'):
                raise exceptions.CantUpdateFloatingIPReservation(
                    msg='Updating required_floatingips is not supported '
                        'except with an empty list. It lists %s.' % (
                            ', '.join(current.get(
                                'required_floatingips') or []) or
                            'nothing'))
        merged = {k: v for k, v in current.items() if k in REQUEST_FIELDS}
        merged.update(changes)
        out = self.validate(merged)
        out['floatingips'] = current.get('floatingips') or []
        return out

    # -- allocation -----------------------------------------------------------

    def _registered(self, session, params):
        """The network's registered addresses (``{address: Address}``,
        see :func:`climate.db.floatingips.on_network`) and the providers
        of its reservable ones, sorted, after checking that it has some
        and holds the required ones (400).

        Read once per version of the address inventory (bumped by every
        registration and removal, read in the caller's transaction) and
        network, in this manager process: reading and sorting a
        network's 500 addresses cost 10 ms a create on MariaDB."""
        network = params['network_id']
        registered, reservable = self._networks.get(
            session, network, lambda: self._read_network(session, network))
        if not registered:
            raise exceptions.FloatingIPNetworkNotFound(
                network=network,
                reason='network_id: no floating IP of network %s is '
                       'registered to Climate (GET /v1/floatingips lists '
                       'the reservable addresses).' % network)
        unknown = [a for a in params.get('required_floatingips') or []
                   if a not in registered]
        if unknown:
            raise exceptions.FloatingIPNotRegistered(
                reason='required_floatingips: %s %s not registered on '
                       'network %s (GET /v1/floatingips lists the '
                       'reservable addresses).' % (
                           ', '.join(unknown),
                           'is' if len(unknown) == 1 else 'are', network))
        return registered, reservable

    @staticmethod
    def _read_network(session, network):
        registered = db_fips.on_network(session, network)
        return registered, tuple(sorted(
            a.provider for a in registered.values() if a.reservable))

    def _place(self, session, res_id, lease_id, params, start, end, count,
               held=(), what=None):
        """Book ``count`` more addresses of the network over ``[start,
        end)`` besides ``held`` (provider ids): the required ones not held
        first, by name, then any other reservable ones; NotEnoughFloatingIPs
        (409) when they are not free."""
        registered, reservable = self._registered(session, params)
        held = set(held)
        required = [registered[a].provider
                    for a in params.get('required_floatingips') or []]
        wanted = [p for p in required if p not in held][:count]
        taken = held.union(required)
        others = [p for p in reservable if p not in taken]
        closed = [a.floating_ip_address for a in registered.values()
                  if not a.reservable and a.provider in wanted]
        rest = count - len(wanted)
        refusal = dict(params=params, start=start, end=end, wanted=wanted,
                       others=others, rest=rest, what=what)
        if closed:
            raise self._not_enough(session, closed=closed, **refusal)
        if wanted:
            try:
                booking.book(session, res_id, lease_id,
                             [booking.Request(p, db_fips.FLOATING_IP, 1)
                              for p in wanted], start, end)
            except exceptions.Conflict as exc:
                raise self._not_enough(session,
                                       taken=[exc.kwargs.get('provider')],
                                       **refusal)
        if rest > 0:
            if len(others) < rest:
                raise self._not_enough(session, **refusal)
            try:
                unit_search.place_units(session, res_id, lease_id,
                                        db_fips.FLOATING_IP, rest, start, end,
                                        providers=others, kind=db_fips.KIND)
            except exceptions.Conflict as exc:
                # the refusal counts the required ones as free: they are
                # (the transaction rolls back)
                booking.release(session, res_id, wanted)
                raise self._not_enough(session,
                                       taken=exc.kwargs.get('taken', ()),
                                       **refusal)

    def _not_enough(self, session, params, start, end, wanted, others, rest,
                    what=None, taken=(), closed=()):
        """NotEnoughFloatingIPs: which required addresses are booked,
        how many of the others are free over the window, and from when
        the request would fit.

        Counted as the decision counts: every required address must be
        free, and ``rest`` of the others; an address free by the
        search's statement (``unit_search.free_units``) but refused under
        the lock (``taken``: a concurrent booker's) is not.  So the
        sentence never says enough are free while refusing them."""
        network = params['network_id']
        asked = len(wanted) + rest
        head = '%s%d floating IP(s) asked on network %s from %s to %s UTC' \
            % ((what + ': ') if what else '', asked, network,
               common.fmt(start), common.fmt(end))
        names = {p: r.floating_ip_address
                 for p, r in db_fips.by_providers(session, wanted).items()}
        if closed:
            return exceptions.NotEnoughFloatingIPs(
                reason='%s; required address(es) %s %s not reservable.' % (
                    head, ', '.join(in_order(closed)),
                    'is' if len(closed) == 1 else 'are'))
        # an address has capacity one and nothing reserved (its
        # registration's inventory): free is no booking over the window
        taken = set(taken)
        free = set(unit_search.free_units(
            session, others + wanted, db_fips.FLOATING_IP, start, end,
            db_fips.KIND)) - taken if others or wanted else set()
        parts = []
        busy = in_order(names[p] for p in wanted
                        if p not in free and p in names)
        if busy:
            parts.append('required address(es) %s %s booked by another '
                         'lease then' % (', '.join(busy),
                                         'is' if len(busy) == 1 else 'are'))
        if rest > 0 or not wanted:
            lost = len(taken.intersection(others))
            parts.append(
                '%d of the %d %sreservable address(es) it could take are '
                'free over the whole window%s' % (
                    sum(1 for p in others if p in free), len(others),
                    'other ' if wanted else '',
                    ' (%d taken meanwhile by concurrent requests)' % lost
                    if lost else ''))
        text = '%s; %s' % (head, '; '.join(parts))
        if len(others) < rest:
            later = ('It never fits: the network has %d reservable '
                     'address(es) besides the required ones, %d asked.' % (
                         len(others), rest))
        else:
            until = rebooking.horizon_end(start, end - start)
            when = self._earliest(session, wanted, others, rest,
                                  end - start, start, until)
            if when is not None and when <= start:
                # refused over this very window: they were free when
                # read and taken under the lock by concurrent requests
                later = 'Concurrent requests took them meanwhile; try again.'
            elif when is not None:
                later = 'It would fit for as long from %s UTC.' % \
                    common.fmt(when)
            else:
                later = 'It does not fit for as long before %s UTC.' % (
                    common.fmt(until))
        return exceptions.NotEnoughFloatingIPs(reason='%s. %s' % (text,
                                                                  later))

    @staticmethod
    def _earliest(session, wanted, others, rest, duration, start, until):
        """The earliest start from ``start`` at which the ``wanted``
        addresses and ``rest`` of ``others`` are all free for
        ``duration`` (before ``until``), or None."""
        when = start
        for _round in range(EARLIEST_ROUNDS):
            first = when
            if rest:
                first = availability.earliest_start(
                    session, SHAPE, rest, duration, when, latest_end=until,
                    affinity=False, provider_ids=others, kind=db_fips.KIND)
                if first is None:
                    return None
            second = first
            if wanted:
                second = availability.earliest_start(
                    session, SHAPE, len(wanted), duration, first,
                    latest_end=until, affinity=False, provider_ids=wanted,
                    kind=db_fips.KIND)
                if second is None:
                    return None
            if second == first:
                return first
            when = second
        return None

    @staticmethod
    def _addresses(session, res_id, after=None):
        """The addresses the reservation holds, in numeric order."""
        return in_order(r.floating_ip_address for r in db_fips.held_by(
            session, res_id, after).values())

    def reserve(self, ctx, lease, reservation):
        """Book the addresses over the lease's window (409 when they are
        not free)."""
        start = lease.start_date
        end = lease.end_date
        with db_api.writer(ctx) as session:
            self._place(session, reservation.id, lease.id,
                        reservation.params, start, end,
                        reservation.params['amount'])
            stored.store_at_create(
                session, lease.id, reservation.id,
                dict(reservation_params(reservation.params),
                     floatingips=self._addresses(session,
                                                 reservation.id)))
        return reservation.id

    def update(self, ctx, old_lease, lease, reservation, new_params):
        """Pending: the addresses move with the dates (the same ones while
        they stay free) and follow ``amount`` (required ones kept first).
        Active: the lease may be extended and ``amount`` grow, the new
        addresses made in the cloud at once; none is given back (409)."""
        params = dict(new_params)
        res_id = reservation.id
        start = lease.start_date
        end = lease.end_date
        stored.refuse_if_error(reservation)
        with db_api.writer(ctx) as session:
            if reservation.status == states.RES_ACTIVE:
                self._update_active(session, lease, reservation, params,
                                    old_lease, end)
                params['floatingips'] = self._addresses(
                    session, res_id, dates.utcnow())
                return params
            held = sorted(db_fips.held_by(session, res_id))
            required = set(self._required_providers(session, params))
            keep = [p for p in held if p in required] + \
                [p for p in held if p not in required]
            keep = keep[:params['amount']]
            try:
                booking.rebook(session, res_id, lease.id,
                               [booking.Request(p, db_fips.FLOATING_IP, 1)
                                for p in keep], start, end)
            except exceptions.Conflict:
                booking.release(session, res_id)
                keep = []
            if params['amount'] > len(keep):
                self._place(session, res_id, lease.id, params, start, end,
                            params['amount'] - len(keep), keep,
                            what='cannot %s reservation %s' % (
                                'change' if keep else 'move', res_id))
            params['floatingips'] = self._addresses(session, res_id)
        return params

    def _required_providers(self, session, params):
        registered, _reservable = self._registered(session, params)
        return [registered[a].provider
                for a in params.get('required_floatingips') or []]

    def _update_active(self, session, lease, reservation, params, old_lease,
                       end):
        res_id = reservation.id
        now = dates.utcnow()
        held = db_fips.held_by(session, res_id, now)
        if params['amount'] < len(held):
            raise exceptions.FloatingIPsInUse(
                reason='Reservation %s is active and holds %d floating '
                       'IP(s) (%s), which may be in use: amount may grow, '
                       'not drop to %d; shorten the lease (end_date) to '
                       'give them back earlier.' % (
                           res_id, len(held), ', '.join(in_order(
                               r.floating_ip_address
                               for r in held.values())), params['amount']))
        old_end = old_lease.end_date
        if end != old_end:
            rebooking.extend(session, res_id, lease.id, now, end,
                                   'its floating IPs')
        grow = params['amount'] - len(held)
        if grow <= 0:
            return
        self._place(session, res_id, lease.id, params, now, end, grow,
                    held, what='cannot grow reservation %s' % res_id)
        new = {p: r for p, r in db_fips.held_by(session, res_id, now).items()
               if p not in held}
        addresses = [(r.floating_ip_address, r.subnet_id)
                     for r in sorted(new.values(), key=lambda r:
                                     db_fips.address_key(
                                         r.floating_ip_address))]
        try:
            self.backend.start(res_id, lease.project_id,
                               params['network_id'], addresses)
        except Exception:
            # the update rolls back: take back what was made of it
            try:
                self.backend.end(res_id, lease.project_id,
                                 params['network_id'],
                                 [a for a, _s in addresses])
            except Exception:
                LOG.exception('Reservation %s: could not take back the '
                              'floating IPs of a failed growth', res_id)
            raise

    def delete(self, ctx, lease, reservation):
        """Release the reservation's addresses."""
        with db_api.writer(ctx) as session:
            booking.release(session, reservation.id)

    # -- events ---------------------------------------------------------------

    # The cloud is called outside the plugin's own transactions; what it
    # answers is stored in a short one.

    def on_start(self, ctx, lease, reservation, event):
        """Make the reservation's addresses floating IPs of the lease's
        project (backend ``start``)."""
        with db_api.reader(ctx) as session:
            rows = db_fips.held_by(session, reservation.id).values()
        rows = sorted(rows, key=lambda r: db_fips.address_key(
            r.floating_ip_address))
        self.backend.start(reservation.id, lease.project_id,
                           reservation.params['network_id'],
                           [(r.floating_ip_address, r.subnet_id)
                            for r in rows])
        if rows:
            with db_api.writer(ctx) as session:
                stored.set_params(session, reservation.id,
                                  floatingips=in_order(
                                      r.floating_ip_address for r in rows))

    def on_end(self, ctx, lease, reservation, event=None):
        """Delete the reservation's floating IPs (backend ``end``), free
        the addresses."""
        with db_api.reader(ctx) as session:
            held = self._addresses(session, reservation.id)
        addresses = in_order(set(held) |
                             set(reservation.params.get('floatingips') or
                                 []))
        self.backend.end(reservation.id, lease.project_id,
                         reservation.params['network_id'], addresses)
        with db_api.writer(ctx) as session:
            booking.release(session, reservation.id)
