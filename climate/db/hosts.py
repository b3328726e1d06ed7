"""SQL of the ``physical:host`` plugin: inventory, properties, allocations.

A host's allocations are its bookings in the capacity ledger
(``climate.db.ledger``): a reservation takes it whole there, and the
ledger's locked re-check keeps it from ever carrying an instance slot
and a host reservation at once.

Every function takes the request context and joins the caller's
transaction (see ``climate.db.api``).  The allocation queries are
set-based: a filter compiles to one WHERE clause over ``computehosts``
(facts as columns, extra capabilities through semi-joins on their
``(property_id, value)`` indexes), so a search costs a fixed number of
statements whatever the inventory size.
"""

import collections
import datetime
import functools
import time

import sqlalchemy as sa
from oslo_db import exception as db_exc

from climate.db import allocations
from climate.db import api as db_api
from climate.db.ledger import booking
from climate.db.ledger import inventory
from climate.db.ledger import windows
from climate.db import models
from climate import exceptions
from climate.scheduling import filters
from climate.scheduling import hosts as sched

RESOURCE_TYPE = 'physical:host'

Host = models.ComputeHost
Cap = models.HostCapability
Prop = models.ResourceProperty
Book = models.LedgerBooking

#: Host facts a ``hypervisor_properties`` filter may name, by kind.
NUMERIC_FACTS = ('vcpus', 'memory_mb', 'local_gb', 'hypervisor_version')
TEXT_FACTS = ('hypervisor_hostname', 'service_name', 'cpu_info',
              'hypervisor_type')
FACTS = NUMERIC_FACTS + TEXT_FACTS
#: Overcommit a static registration may state (null: 1.0).
RATIOS = ('cpu_allocation_ratio', 'ram_allocation_ratio',
          'disk_allocation_ratio')


# -- filters -> SQL -----------------------------------------------------------

_OPS = {'=': sa.sql.operators.eq, '!=': sa.sql.operators.ne,
        '<': sa.sql.operators.lt, '<=': sa.sql.operators.le,
        '>': sa.sql.operators.gt, '>=': sa.sql.operators.ge}


def _fact_atom(node):
    column = getattr(Host, node.name)
    if isinstance(node, filters.In):
        values, op = node.values, '='
    else:
        values = [node.value]
        op = node.op
    clauses = []
    for value in values:
        number = filters.as_number(value)
        if node.name in NUMERIC_FACTS and number is not None:
            clauses.append(_OPS[op](column, number))
        else:
            text = column if node.name in TEXT_FACTS else sa.cast(
                column, sa.String(64))
            clauses.append(_OPS[op](text, str(value)))
    # "IS NOT NULL AND ..." keeps NOT of a missing fact true, as evaluate()
    return sa.and_(column.isnot(None), sa.or_(*clauses))


def _cap_condition(op, value):
    number = filters.as_number(value)
    if number is None:
        return _OPS[op](Cap.capability_value, str(value))
    if op == '=':
        # a value equal to a number's text would itself read as a number
        return Cap.num_value == number
    if op == '!=':
        return sa.or_(Cap.num_value.is_(None), Cap.num_value != number)
    return sa.or_(
        sa.and_(Cap.num_value.isnot(None), _OPS[op](Cap.num_value, number)),
        sa.and_(Cap.num_value.is_(None),
                _OPS[op](Cap.capability_value, str(value))))


def _cap_atom(node, prop_ids):
    prop_id = prop_ids.get(node.name)
    if prop_id is None:
        # nobody has this property (yet): nothing matches
        return sa.false()
    if isinstance(node, filters.In):
        condition = sa.or_(*[_cap_condition('=', v) for v in node.values])
    else:
        condition = _cap_condition(node.op, node.value)
    return Host.id.in_(sa.select(Cap.computehost_id).where(
        Cap.property_id == prop_id, condition))


def _compile(tree, atom):
    if tree is None:
        return sa.true()
    if isinstance(tree, filters.Logic):
        children = [_compile(c, atom) for c in tree.children]
        if tree.op == 'and':
            return sa.and_(*children)
        if tree.op == 'or':
            return sa.or_(*children)
        return sa.not_(children[0])
    return atom(tree)


def property_ids(ctx, names):
    """``{name: id}`` of the host properties among ``names``."""
    if not names:
        return {}
    with db_api.reader(ctx) as session:
        return dict(session.execute(sa.select(
            Prop.property_name, Prop.id).where(
            Prop.resource_type == RESOURCE_TYPE,
            Prop.property_name.in_(sorted(names)))).all())


def host_filter(ctx, hypervisor_tree, resource_tree):
    """The WHERE clause selecting reservable hosts matching both filters."""
    prop_ids = property_ids(ctx, filters.names_in(resource_tree))
    return sa.and_(
        Host.reservable.is_(True), Host.disabled.is_(False),
        _compile(hypervisor_tree, _fact_atom),
        _compile(resource_tree, lambda node: _cap_atom(node, prop_ids)))


# -- inventory ----------------------------------------------------------------

Version = models.HostInventoryVersion


def inventory_version(ctx):
    """The inventory's change counter (a primary-key read)."""
    with db_api.reader(ctx) as session:
        return session.execute(sa.select(Version.version).where(
            Version.id == 1)).scalar() or 0


def _bump(session):
    """Count an inventory change, in the changing transaction.

    The migration writes the counter's row; one found missing (a table
    emptied by hand) is written again, or every manager would keep its
    cache of the inventory forever.  It restarts from the clock (in
    microseconds), not from 1: a value a manager cached before the row
    vanished must not come back.
    """
    bump = sa.update(Version).where(Version.id == 1).values(
        version=Version.version + 1)
    if session.execute(bump).rowcount:
        return
    try:
        with session.begin_nested():
            session.execute(sa.insert(Version).values(
                id=1, version=int(time.time() * 1e6)))
    except db_exc.DBDuplicateEntry:  # another writer put it back first
        session.execute(bump)


def _property_get_or_create(ctx, session, name):
    found = session.execute(sa.select(Prop.id).where(
        Prop.resource_type == RESOURCE_TYPE,
        Prop.property_name == name)).scalar()
    if found is not None:
        return found
    try:
        # a savepoint: losing the race to another creator must not undo
        # the caller's transaction
        with session.begin_nested():
            prop = Prop(resource_type=RESOURCE_TYPE, property_name=name,
                        private=False)
            session.add(prop)
        return prop.id
    except db_exc.DBDuplicateEntry:
        return session.execute(sa.select(Prop.id).where(
            Prop.resource_type == RESOURCE_TYPE,
            Prop.property_name == name)).scalar_one()


def _set_capabilities(ctx, session, host_id, values):
    """Set (or, for a None value, remove) extra capabilities of a host."""
    for name, value in sorted(values.items()):
        prop_id = _property_get_or_create(ctx, session, name)
        existing = session.execute(sa.select(Cap).where(
            Cap.computehost_id == host_id,
            Cap.property_id == prop_id)).scalar_one_or_none()
        if value is None:
            if existing is not None:
                session.delete(existing)
            continue
        text = str(value)
        if existing is None:
            session.add(Cap(computehost_id=host_id, property_id=prop_id,
                            capability_value=text,
                            num_value=filters.as_number(text)))
        else:
            existing.capability_value = text
            existing.num_value = filters.as_number(text)
    session.flush()


def host_create(ctx, facts, capabilities):
    """Insert a host with its facts and extra capabilities; returns its id.

    :raises HostAlreadyExists: a host of that hypervisor_hostname exists.
    """
    columns = {k: facts.get(k) for k in FACTS + RATIOS}
    with db_api.writer(ctx) as session:
        host = Host(reservable=True, disabled=False,
                    trust_id=facts.get('trust_id'),
                    **{k: v for k, v in columns.items() if v is not None})
        session.add(host)
        try:
            session.flush()
        except db_exc.DBDuplicateEntry:
            raise exceptions.HostAlreadyExists(
                host=facts['hypervisor_hostname'])
        _set_capabilities(ctx, session, host.id, capabilities)
        _bump(session)
        return host.id


def _caps_of(session, host_ids, include_private=True):
    query = sa.select(Cap.computehost_id, Prop.property_name,
                      Cap.capability_value).join(
        Prop, Prop.id == Cap.property_id)
    if host_ids is not None:
        query = query.where(Cap.computehost_id.in_(host_ids))
    if not include_private:
        query = query.where(Prop.private.is_(False))
    caps = {}
    for host_id, name, value in session.execute(query):
        caps.setdefault(host_id, {})[name] = value
    return caps


#: Largest id of ``computehosts`` (a 32-bit INTEGER on every engine).
MAX_HOST_ID = 2 ** 31 - 1


def host_not_found(host_id):
    """HostNotFound for ``host_id`` as the API gave it, in Blazar's words
    (``Object with {'host_id': '42'} not found``)."""
    return exceptions.HostNotFound(object=repr({'host_id': str(host_id)}),
                                   host=host_id)


def host_key(host_id):
    """The integer id ``host_id`` names, or None.

    Only the canonical decimal text of an id in the column's range names a
    host: ``int()`` alone would also take ``" 7"``, ``"+7"``, ``"0_7"``
    or other scripts' digits, and a number beyond the column's range fails
    in SQL (PostgreSQL: integer out of range) instead of finding nothing.
    """
    text = str(host_id) if isinstance(host_id, int) and \
        not isinstance(host_id, bool) else host_id
    if not isinstance(text, str) or not 0 < len(text) <= 10 or \
            not text.isascii() or not text.isdigit() or text[0] == '0':
        return None
    key = int(text)
    return key if key <= MAX_HOST_ID else None


def host_row(ctx, host_id, for_update=False):
    """The host row, or HostNotFound (``host_id`` as the API gave it)."""
    key = host_key(host_id)
    if key is None:
        raise host_not_found(host_id)
    with db_api.reader(ctx) as session:
        query = sa.select(Host).where(Host.id == key)
        if for_update:
            query = query.with_for_update()
        host = session.execute(query).scalar_one_or_none()
    if host is None:
        raise host_not_found(host_id)
    return host


def host_get(ctx, host_id):
    """``(host row, {capability: value})``."""
    host = host_row(ctx, host_id)
    with db_api.reader(ctx) as session:
        return host, _caps_of(session, [host.id]).get(host.id, {})


def host_list(ctx):
    """``[(host row, {capability: value})]`` ordered by id."""
    with db_api.reader(ctx) as session:
        hosts = session.execute(sa.select(Host).order_by(
            Host.id)).scalars().all()
        caps = _caps_of(session, None)
    return [(h, caps.get(h.id, {})) for h in hosts]


def host_update_capabilities(ctx, host_id, values):
    with db_api.writer(ctx) as session:
        host = host_row(ctx, host_id, for_update=True)
        _set_capabilities(ctx, session, host.id, values)
        host.updated_at = models.now()
        _bump(session)


def host_set_ratios(ctx, host_id, ratios):
    """Store a host's allocation ratios (keys of :data:`RATIOS`; None:
    not stated, 1.0); returns the locked row.  The caller rewrites the
    ledger inventory in the same transaction (:func:`host_set_capacity`).
    """
    with db_api.writer(ctx) as session:
        host = host_row(ctx, host_id, for_update=True)
        for key, value in sorted(ratios.items()):
            if key not in RATIOS:
                raise ValueError(key)
            setattr(host, key, value)
        host.updated_at = models.now()
        session.flush()
        _bump(session)
        return host


def host_delete(ctx, host_id):
    """Remove a host that holds no booking, and its ledger inventory.

    Bookings of ended leases are removed at their end, so any booking
    left (of any class: a host reservation's or an instance slot's) means
    a reservation still counts on the host.
    """
    with db_api.writer(ctx) as session:
        host = host_row(ctx, host_id, for_update=True)
        holders = session.execute(sa.select(Book.reservation_id).where(
            Book.provider_id == provider(host.id)).distinct().limit(10)
        ).scalars().all()
        if holders:
            raise exceptions.HostAllocated(
                id=host.id, host=host.hypervisor_hostname,
                reservations=', '.join(sorted(holders)))
        inventory.delete_provider(session, provider(host.id))
        session.execute(sa.delete(Cap).where(Cap.computehost_id == host.id))
        session.delete(host)
        session.flush()
        _bump(session)
        return host


def host_set_reservable(ctx, host_ids, reservable):
    """Mark hosts up (reservable) or down; returns how many changed."""
    if not host_ids:
        return 0
    with db_api.writer(ctx) as session:
        changed = session.execute(sa.update(Host).where(
            Host.id.in_(host_ids), Host.reservable.is_(not reservable)
        ).values(reservable=reservable)).rowcount
        if changed:
            _bump(session)
        return changed


def hosts_by_ids(ctx, host_ids):
    if not host_ids:
        return []
    with db_api.reader(ctx) as session:
        return session.execute(sa.select(Host).where(
            Host.id.in_(host_ids)).order_by(Host.id)).scalars().all()


# -- properties ---------------------------------------------------------------

def property_list(ctx, include_private):
    """``[(property row, [distinct values])]`` ordered by name."""
    with db_api.reader(ctx) as session:
        query = sa.select(Prop).where(Prop.resource_type == RESOURCE_TYPE)
        if not include_private:
            query = query.where(Prop.private.is_(False))
        props = session.execute(query.order_by(
            Prop.property_name)).scalars().all()
        values = {}
        for prop_id, value in session.execute(sa.select(
                Cap.property_id, Cap.capability_value).distinct()):
            values.setdefault(prop_id, []).append(value)
    return [(p, sorted(values.get(p.id, []))) for p in props]


def property_set_private(ctx, name, private):
    with db_api.writer(ctx) as session:
        prop = session.execute(sa.select(Prop).where(
            Prop.resource_type == RESOURCE_TYPE,
            Prop.property_name == name).with_for_update()
        ).scalar_one_or_none()
        if prop is None:
            raise exceptions.HostPropertyNotFound(property=name)
        prop.private = private
        prop.updated_at = models.now()
        session.flush()
        return prop


# -- allocation (on the capacity ledger) --------------------------------------
#
# A host is the ledger provider ``str(host id)`` (kind ``compute_host``).
# A physical:host reservation takes it whole: a ``HOST = 1`` booking plus
# all its usable VCPU, MEMORY_MB and DISK_GB over the window, so the
# ``HOST`` rows are the reservation's allocations.  A host is busy over a
# window when a booking of ANY class overlaps it: an instance slot on it
# (virtual:instance) makes it busy too.  Writes go through
# climate.db.ledger, which locks and re-checks.

#: A host held by a reservation: its ``HOST`` booking.
Allocation = collections.namedtuple(
    'Allocation', 'id reservation_id lease_id computehost_id start_date '
    'end_date')


def provider(host_id):
    """The ledger provider id of a host."""
    return str(host_id)


def host_of(provider_id):
    """The host id of a compute host provider, None for another kind's."""
    if provider_id.isascii() and provider_id.isdigit():
        return int(provider_id)
    return None


def _not_mine(exclude_reservation):
    if exclude_reservation is None:
        return sa.true()
    return Book.reservation_id != exclude_reservation


def host_set_capacity(ctx, host_id, capacity):
    """Set the host's ledger inventory: ``HOST`` (total 1) and each class
    of ``capacity`` (``{class: {'total', 'reserved', 'allocation_ratio',
    'min_unit', 'max_unit', 'step_size'}}``, an inventory backend's
    ``capacity(facts)``) with a total above 0, in the caller's
    transaction.  Refused (Conflict) when bookings not yet over would no
    longer fit (``climate.db.ledger.inventory.set_inventory``)."""
    inventories = {booking.WHOLE: {'total': 1}}
    for cls, values in sorted(capacity.items()):
        if cls != booking.WHOLE and values.get('total'):
            inventories[cls] = values
    with db_api.writer(ctx) as session:
        inventory.set_inventory(session, provider(host_id),
                                inventory.COMPUTE_HOST, inventories)


#: Sizes of the successive batches of hosts (lowest ids first) the "free
#: far around" search examines; None: all the rest.
FAR_CHUNKS = (32, 256, None)
#: Hosts near the window checked for a booking over it at first (in the
#: rule's order; at least twice the hosts wanted, four times more each
#: further batch).
NEAR_BATCH = 16


_at = windows.time_param


def _not_mine_param(with_mine):
    if not with_mine:
        return sa.true()
    return Book.reservation_id != sa.bindparam('mine')


# The statements of free_candidates, built once and run with parameters
# on the session's connection (every create runs them: building them
# and the ORM's execute cost more than MariaDB's answer).

def _as_text(when):
    """A time column of the near reads as its text: they return every
    near provider's, of which the caller keeps the few it wants, and the
    driver's conversion of thousands of datetimes was 28 % of the CPU of
    a create at 100,000 hosts (PyMySQL parses them in Python).  The text is
    parsed for the kept rows only (:func:`_from_text`)."""
    return sa.cast(when, sa.String(32))


def _from_text(text):
    """A time of the near reads (:func:`_as_text`): ``YYYY-MM-DD
    HH:MM:SS[.ffffff]``, as MariaDB, PostgreSQL and SQLite write a naive
    timestamp."""
    return datetime.datetime.fromisoformat(text)


@functools.lru_cache(maxsize=None)
def _ended_query(with_mine):
    # one range of the (end, start, provider) index
    return sa.select(Book.provider_id,
                     _as_text(sa.func.max(Book.end_date))).where(
        _not_mine_param(with_mine), Book.end_date > _at('low'),
        Book.end_date <= _at('start')).group_by(Book.provider_id)


@functools.lru_cache(maxsize=None)
def _starting_query(with_mine):
    # one range of the (span_level, start, ...) index per level
    return sa.select(Book.provider_id,
                     _as_text(sa.func.min(Book.start_date))).where(
        _not_mine_param(with_mine),
        Book.span_level.in_(range(windows.MAX_SPAN_LEVEL + 1)),
        Book.start_date >= _at('end'), Book.start_date < _at('high')
    ).group_by(Book.provider_id)


@functools.lru_cache(maxsize=None)
def _busy_query(with_mine):
    return sa.select(Book.provider_id).distinct().where(
        Book.provider_id.in_(sa.bindparam('providers', expanding=True)),
        windows.overlapping_at(), _not_mine_param(with_mine))


@functools.lru_cache(maxsize=None)
def _up_query(limited):
    query = sa.select(Host.id).where(
        Host.id.in_(sa.bindparam('ids', expanding=True)),
        Host.reservable.is_(True), Host.disabled.is_(False)).order_by(
        Host.id)
    return query.limit(sa.bindparam('limit')) if limited else query


class _Window:
    """What the reads of one :func:`free_candidates` share: the window,
    the stretch around it, the bound below of the bookings overlapping
    that stretch (one seek) and the reservation left out."""

    def __init__(self, session, start, end, horizon, exclude_reservation):
        self.connection = session.connection()
        self.mine = exclude_reservation is not None
        self.params = {
            'start': start, 'end': end, 'low': start - horizon,
            'high': end + horizon, 'mine': exclude_reservation,
            'after': windows.started_after(session, start - horizon)}

    def near(self, wanted):
        """``{host: [prev_end, next_start]}`` of the hosts among
        ``wanted`` with a booking ending within the horizon before the
        window (the latest such end) or starting within it after the
        window (the earliest such start).  Every provider's are read, not
        only the wanted hosts': the ranges are what bound the reads, and
        an IN list of thousands of ids costs more than it saves."""
        near = {}
        for query, side in ((_ended_query, 0), (_starting_query, 1)):
            for provider_id, when in self.connection.execute(
                    query(self.mine), self.params):
                host = host_of(provider_id)
                if host in wanted:
                    near.setdefault(host, [None, None])[side] = _from_text(
                        when)
        return near

    def busy(self, host_ids, stretch=False):
        """Which of ``host_ids`` hold a booking (any class) over the
        window (over the stretch around it, with ``stretch``)."""
        params = dict(self.params,
                      providers=sorted(provider(h) for h in host_ids))
        if stretch:
            params.update(start=params['low'], end=params['high'])
        return {int(p) for p in self.connection.execute(
            _busy_query(self.mine), params).scalars()}

    def up(self, host_ids, limit=None):
        """Which of ``host_ids`` are reservable, lowest ids first."""
        return self.connection.execute(
            _up_query(limit is not None),
            {'ids': sorted(host_ids), 'limit': limit}).scalars().all()


def free_candidates(ctx, host_ids, start, end, limit, horizon,
                    exclude_reservation=None, exclude_hosts=()):
    """The ``limit`` best-fitting of ``host_ids`` (hosts matching a
    filter, see :func:`matching_host_ids`) free over ``[start, end)``, in
    the order of ``climate.scheduling.hosts.choose`` with ``horizon`` (the
    unit tests hold the two to each other): ``(candidates, count)``, with
    ``count`` the number of free hosts found: at least ``limit``, or all
    of them when fewer.

    A bounded number of statements whatever the number of hosts, none
    reading more than the bookings near the window:

    1. the hosts with a booking (any class) ending within ``horizon``
       before the window (with the latest such end) or starting within
       ``horizon`` after it (with the earliest such start): two grouped
       reads of exact index ranges of the ledger's bookings (by end; by
       start, one range per ``span_level``), intersected with
       ``host_ids`` here.  They rank by their finite slack
       (``climate.scheduling.hosts``);
    2. in that order, a batch at a time (:data:`NEAR_BATCH`, four times
       larger each time: usually one), which of them hold a booking over
       the window (a seek and one read of their own index ranges) and
       which are reservable, until ``limit`` are free or none is left;
    3. if they are not enough, the lowest-id other hosts with no booking
       within ``horizon`` of the window (free, both sides open: the last
       in the rule's order) that are reservable, a batch of ids at a
       time (:data:`FAR_CHUNKS`): usually the first batch is enough.
    """
    ids = sorted(set(host_ids) - set(exclude_hosts))
    if not ids:
        return [], 0
    ranked = []
    with db_api.reader(ctx) as session:
        window = _Window(session, start, end, horizon, exclude_reservation)
        near = window.near(set(ids))
        order = sorted(
            (sched.Candidate(h, prev_end, next_start)
             for h, (prev_end, next_start) in near.items()),
            key=lambda c: (sched.slack(c, start, end, horizon), c.host_id))
        position, size = 0, max(NEAR_BATCH, 2 * limit)
        while len(ranked) < limit and position < len(order):
            batch = order[position:position + size]
            position += len(batch)
            size *= 4
            batch_ids = [c.host_id for c in batch]
            busy = window.busy(batch_ids)
            up = set(window.up(batch_ids))
            ranked.extend(c for c in batch
                          if c.host_id not in busy and c.host_id in up)
        missing = limit - len(ranked)
        far = []
        rest = [h for h in ids if h not in near]
        position = 0
        for size in FAR_CHUNKS:
            if missing <= len(far) or position >= len(rest):
                break
            chunk = rest[position:None if size is None else
                         position + size]
            position += len(chunk)
            # a host here with a booking over the stretch has one over
            # the window: it is busy
            busy = window.busy(chunk, stretch=True)
            clear = [h for h in chunk if h not in busy]
            if clear:
                far.extend(sched.Candidate(h) for h in window.up(
                    clear, missing - len(far)))
    rows = (ranked + far)[:limit]
    return [tuple(c) for c in rows], len(ranked) + len(far)


def free_hosts(ctx, host_ids, start, end, exclude_reservation=None):
    """Which of ``host_ids`` :func:`free_candidates` can offer over
    ``[start, end)``: reservable and enabled, with no booking of any
    class over the window; by id.  The same two statements as its choice,
    so that a refusal's count is the choice's count."""
    ids = sorted(set(host_ids))
    if not ids:
        return []
    with db_api.reader(ctx) as session:
        window = _Window(session, start, end, datetime.timedelta(0),
                         exclude_reservation)
        busy = window.busy(ids)
        return [h for h in window.up(ids) if h not in busy]


def usable_hosts(ctx, host_ids):
    """Which of ``host_ids`` are reservable and enabled, by id (the
    choice's ``up`` statement)."""
    ids = sorted(set(host_ids))
    if not ids:
        return []
    with db_api.reader(ctx) as session:
        return session.connection().execute(
            _up_query(False), {'ids': ids}).scalars().all()


def matching_host_ids(ctx, where):
    with db_api.reader(ctx) as session:
        return session.execute(sa.select(Host.id).where(where).order_by(
            Host.id)).scalars().all()


def busy_intervals(ctx, host_ids, time_from, time_to=None,
                   exclude_reservation=None):
    """``{host_id: [(start, end)]}`` of the bookings (any class, one
    interval per distinct window) of ``host_ids`` that end after
    ``time_from`` (and start before ``time_to``).

    Read through the hosts' own ranges of the ledger's ``(provider,
    start, end)`` index, bounded below by the longest booking's length
    when ``time_to`` bounds them above.
    """
    if not host_ids:
        return {}
    providers = sorted(provider(h) for h in set(host_ids))
    query = sa.select(Book.provider_id, Book.start_date,
                      Book.end_date).distinct().where(
        Book.provider_id.in_(providers), Book.end_date > time_from,
        _not_mine(exclude_reservation))
    busy = {}
    with db_api.reader(ctx) as session:
        if time_to is not None:
            query = query.where(
                windows.overlapping(session, time_from, time_to))
        for provider_id, start, end in session.execute(query):
            busy.setdefault(int(provider_id), []).append((start, end))
    return busy


def lock_hosts(ctx, host_ids, inventories=None):
    """Lock the rows of ``host_ids`` (in id order: no lock-order
    deadlocks between allocators), then the ledger inventory rows of
    those still reservable (the ledger's order,
    ``climate.db.ledger.booking.lock``); returns the ids still reservable.
    ``inventories``: a dict updated with the locked ledger rows
    (``{provider: {class: Inventory}}``), for :func:`allocations_add` of
    the hosts then found free.

    Host rows first, ledger rows second, as every writer that takes both
    (a host delete) does; an instance booking takes the ledger rows
    alone.
    """
    with db_api.writer(ctx) as session:
        query = sa.select(Host.id).where(
            Host.id.in_(sorted(host_ids)), Host.reservable.is_(True),
            Host.disabled.is_(False)).order_by(Host.id)
        if booking.LOCKING:
            query = query.with_for_update()
        locked = set(session.execute(query).scalars())
        held = booking.lock(session, [provider(h) for h in locked])
        if inventories is not None:
            inventories.update(held)
        return locked


def overlapping_hosts(ctx, host_ids, start, end, exclude_reservation=None):
    """Which of ``host_ids`` (locked by the caller, :func:`lock_hosts`)
    hold a booking of any class over ``[start, end)``, as committed now
    (``climate.db.ledger.booking.busy_providers``)."""
    if not host_ids:
        return set()
    with db_api.writer(ctx) as session:
        return {int(p) for p in booking.busy_providers(
            session, [provider(h) for h in host_ids], start, end,
            exclude_reservation)}


def allocations_add(ctx, reservation_id, lease_id, host_ids, start, end,
                    locked=None):
    """Book ``host_ids`` whole for the reservation over ``[start, end)``
    (``climate.db.ledger.booking.book``: locked and re-checked, so an
    instance slot booked meanwhile makes it a Conflict, never an
    overbooking).
    ``locked``: the inventories :func:`lock_hosts` gave of hosts the
    caller then found free (:func:`overlapping_hosts`) in this
    transaction; they are not locked and read again."""
    if not host_ids:
        return
    with db_api.writer(ctx) as session:
        booking.book(session, reservation_id, lease_id,
                     [booking.Request(provider(h), booking.WHOLE, 1)
                      for h in sorted(host_ids)], start, end, locked=locked)


_ALLOC_COLUMNS = (Book.id, Book.reservation_id, Book.lease_id,
                  Book.provider_id, Book.start_date, Book.end_date)


def _allocation(row):
    return Allocation(row[0], row[1], row[2], int(row[3]), row[4], row[5])


def allocations_of(ctx, reservation_id):
    """The reservation's allocations (:class:`Allocation`), by host id."""
    with db_api.reader(ctx) as session:
        rows = session.execute(sa.select(*_ALLOC_COLUMNS).where(
            Book.reservation_id == reservation_id,
            Book.resource_class == booking.WHOLE)).all()
    return sorted((_allocation(r) for r in rows if host_of(r[3])),
                  key=lambda a: (a.computehost_id, a.start_date))


def allocations_move(ctx, reservation_id, start, end):
    """Give the reservation's allocations a new window; ``start`` None
    keeps each one's start (an active lease's, which healing may have
    moved to the time of a swap).  Re-checked under lock by the ledger
    (``move`` / ``set_end``), its own bookings left out."""
    with db_api.writer(ctx) as session:
        if start is None:
            booking.set_end(session, reservation_id, end)
        else:
            booking.move(session, reservation_id, start, end)


def allocations_remove(ctx, reservation_id, host_ids=None):
    """Release the reservation's hosts (``host_ids`` only, if given)."""
    with db_api.writer(ctx) as session:
        booking.release(session, reservation_id,
                        None if host_ids is None else
                        [provider(h) for h in host_ids])


def allocation_swap(ctx, allocation_id, old_host, new_host, start):
    """Move one allocation to another host from ``start`` on, if it is
    still on ``old_host`` (compare-and-set: concurrent healers never both
    move it; ``climate.db.ledger.booking.move_whole``).  The new host was
    checked free from ``start`` only, so the allocation starts there."""
    with db_api.writer(ctx) as session:
        return booking.move_whole(session, allocation_id, provider(old_host),
                                  provider(new_host), start)


def allocations_list(ctx, host_id=None, lease_id=None, reservation_id=None,
                     time_from=None):
    """``[(host_id, reservation_id, lease_id, start, end)]`` by host."""
    rows = allocations.bookings(
        ctx, booking.WHOLE,
        provider_id=None if host_id is None else provider(host_id),
        lease_id=lease_id, reservation_id=reservation_id,
        time_from=time_from)
    return sorted(((int(r[0]),) + tuple(r[1:5]) for r in rows
                   if host_of(r[0]) is not None),
                  key=lambda r: (r[0], r[3], r[1]))


def allocations_on_hosts(ctx, host_ids, after):
    """Allocations on ``host_ids`` not yet over at ``after``, with their
    reservation and lease rows: ``[(allocation, reservation, lease)]``."""
    if not host_ids:
        return []
    with db_api.reader(ctx) as session:
        rows = session.execute(
            sa.select(*_ALLOC_COLUMNS, models.Reservation,
                      models.Lease).join(
                models.Reservation,
                models.Reservation.id == Book.reservation_id).join(
                models.Lease, models.Lease.id == Book.lease_id).where(
                Book.provider_id.in_(sorted(provider(h) for h in host_ids)),
                Book.resource_class == booking.WHOLE,
                Book.end_date > after).order_by(Book.start_date)).all()
    return [(_allocation(r[:6]), r[6], r[7]) for r in rows]


def all_hosts(ctx):
    with db_api.reader(ctx) as session:
        return session.execute(sa.select(Host).order_by(
            Host.id)).scalars().all()


def any_reservable(ctx):
    """True when the inventory has a reservable host (one index probe)."""
    with db_api.reader(ctx) as session:
        return session.execute(sa.select(Host.id).where(
            Host.reservable.is_(True), Host.disabled.is_(False)).limit(
            1)).first() is not None


def unreservable_hosts(ctx):
    with db_api.reader(ctx) as session:
        return session.execute(sa.select(Host).where(
            Host.reservable.is_(False)).order_by(Host.id)).scalars().all()


def flagged_reservations(ctx):
    """Host reservations flagged missing_resources, with their leases."""
    with db_api.reader(ctx) as session:
        return [tuple(r) for r in session.execute(
            sa.select(models.Reservation, models.Lease).join(
                models.Lease,
                models.Lease.id == models.Reservation.lease_id).where(
                models.Reservation.resource_type == RESOURCE_TYPE,
                models.Reservation.missing_resources.is_(True)))]
