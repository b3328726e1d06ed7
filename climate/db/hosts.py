"""SQL of the ``physical:host`` plugin: inventory, properties, allocations.

Every function takes the request context and joins the caller's
transaction (see ``climate.db.api``).  The allocation queries are
set-based: a filter compiles to one WHERE clause over ``computehosts``
(facts as columns, extra capabilities through semi-joins on their
``(property_id, value)`` indexes), so a search costs a fixed number of
statements whatever the inventory size.
"""

import time

import sqlalchemy as sa
from oslo_db import exception as db_exc

from climate.db import api as db_api
from climate.db import models
from climate import exceptions
from climate.scheduling import filters
from climate.scheduling import hosts as sched

RESOURCE_TYPE = 'physical:host'

Host = models.ComputeHost
Cap = models.HostCapability
Prop = models.ResourceProperty
Alloc = models.HostAllocation

#: Host facts a ``hypervisor_properties`` filter may name, by kind.
NUMERIC_FACTS = ('vcpus', 'memory_mb', 'local_gb', 'hypervisor_version')
TEXT_FACTS = ('hypervisor_hostname', 'service_name', 'cpu_info',
              'hypervisor_type')
FACTS = NUMERIC_FACTS + TEXT_FACTS


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
    columns = {k: facts.get(k) for k in FACTS}
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
        host.updated_at = models._now()
        _bump(session)


def host_delete(ctx, host_id):
    """Remove a host that holds no current or future allocation.

    Past allocations of ended leases are removed at their end, so any row
    left means a reservation still counts on the host.
    """
    with db_api.writer(ctx) as session:
        host = host_row(ctx, host_id, for_update=True)
        holders = session.execute(sa.select(Alloc.reservation_id).where(
            Alloc.computehost_id == host.id).distinct().limit(10)).scalars(
        ).all()
        if holders:
            raise exceptions.HostAllocated(
                id=host.id, host=host.hypervisor_hostname,
                reservations=', '.join(sorted(holders)))
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
        prop.updated_at = models._now()
        session.flush()
        return prop


# -- allocation ---------------------------------------------------------------

def _not_mine(exclude_reservation):
    if exclude_reservation is None:
        return sa.true()
    return Alloc.reservation_id != exclude_reservation


def _neighbours(ctx, host_ids, start, exclude_reservation):
    """``(host_id, prev_end, last_start, next_start)`` of reservable
    ``host_ids``: three single-seek MIN/MAX lookups per host (indexes
    ``(host, end)`` and ``(host, start)``)."""
    mine = _not_mine(exclude_reservation)

    def seek(func, column, *conditions):
        return sa.select(func(column)).where(
            Alloc.computehost_id == Host.id, mine,
            *conditions).scalar_subquery()

    query = sa.select(
        Host.id,
        seek(sa.func.max, Alloc.end_date, Alloc.end_date <= start),
        seek(sa.func.max, Alloc.start_date, Alloc.start_date < start),
        seek(sa.func.min, Alloc.start_date, Alloc.start_date >= start),
    ).where(Host.id.in_(sorted(host_ids)), Host.reservable.is_(True),
            Host.disabled.is_(False))
    with db_api.reader(ctx) as session:
        return [tuple(row) for row in session.execute(query)]


#: Matching hosts the first "free far around" query looks at.
FAR_CHUNK = 256


def free_candidates(ctx, host_ids, start, end, limit, horizon,
                    exclude_reservation=None, exclude_hosts=()):
    """The ``limit`` best-fitting of ``host_ids`` (hosts matching a
    filter, see :func:`matching_host_ids`) free over ``[start, end)``, in
    the order of ``climate.scheduling.hosts.choose`` with ``horizon`` (the
    unit tests hold the two to each other): ``(candidates, count)``, with
    ``count`` the number of free hosts found (all of them when fewer than
    ``limit``).

    At most four statements whatever the number of hosts, none reading
    more than the allocations near the window:

    1. the hosts with an allocation ending within ``horizon`` before the
       window or starting within ``horizon`` after it (two index ranges,
       intersected with ``host_ids`` here);
    2. their neighbours (:func:`_neighbours`).  A host's allocations never
       overlap one another, so an allocation straddles ``start`` exactly
       when the latest start before ``start`` is not earlier than the
       latest end at or before it, and the host is free over the window
       when none does and its next start is ``end`` or later.  These rank
       by their finite slack (``climate.scheduling.hosts``);
    3. if they are not enough, the lowest-id hosts with no allocation
       within ``horizon`` of the window (free, both sides open: the last
       in the rule's order), ``LIMIT`` what is missing, among the first
       :data:`FAR_CHUNK` matching hosts and, if need be, among the rest.
    """
    ids = sorted(set(host_ids) - set(exclude_hosts))
    if not ids:
        return [], 0
    low, high = start - horizon, end + horizon
    mine = _not_mine(exclude_reservation)
    # every host's, not only the matching ones': the range is what bounds
    # this read, and an IN list of thousands of ids costs more than it
    # saves
    near_query = sa.union(
        sa.select(Alloc.computehost_id).where(
            mine, Alloc.end_date > low, Alloc.end_date <= start),
        sa.select(Alloc.computehost_id).where(
            mine, Alloc.start_date >= end, Alloc.start_date < high))
    with db_api.reader(ctx) as session:
        near = set(session.execute(near_query).scalars()) & set(ids)
    ranked = []
    if near:
        free = []
        for host_id, prev_end, last_start, next_start in _neighbours(
                ctx, near, start, exclude_reservation):
            straddles = last_start is not None and (
                prev_end is None or last_start >= prev_end)
            if not straddles and (next_start is None or next_start >= end):
                free.append(sched.Candidate(host_id, prev_end, next_start))
        ranked = sorted(free, key=lambda c: (
            sched.slack(c, start, end, horizon), c.host_id))
    missing = limit - len(ranked)
    far = []
    # every host of ``near`` has an allocation in (low, high): none of them
    # comes back here.  The lowest ids first, then (rarely, when they are
    # mostly busy) the rest: at most two statements.
    for chunk in (ids[:FAR_CHUNK], ids[FAR_CHUNK:]):
        if missing <= len(far) or not chunk:
            break
        clear = ~sa.exists().where(
            Alloc.computehost_id == Host.id, mine,
            Alloc.end_date > low, Alloc.start_date < high)
        query = sa.select(Host.id).where(
            Host.id.in_(chunk), Host.reservable.is_(True),
            Host.disabled.is_(False), clear).order_by(Host.id).limit(
            missing - len(far))
        with db_api.reader(ctx) as session:
            far.extend(sched.Candidate(h)
                       for h in session.execute(query).scalars())
    rows = (ranked + far)[:limit]
    return [tuple(c) for c in rows], len(ranked) + len(far)


def matching_host_ids(ctx, where):
    with db_api.reader(ctx) as session:
        return session.execute(sa.select(Host.id).where(where).order_by(
            Host.id)).scalars().all()


def busy_intervals(ctx, host_ids, time_from, time_to=None,
                   exclude_reservation=None):
    """``{host_id: [(start, end)]}`` of the allocations of ``host_ids``
    that end after ``time_from`` (and start before ``time_to``)."""
    query = sa.select(Alloc.computehost_id, Alloc.start_date,
                      Alloc.end_date).where(
        Alloc.computehost_id.in_(sorted(host_ids)),
        Alloc.end_date > time_from, _not_mine(exclude_reservation))
    if time_to is not None:
        query = query.where(Alloc.start_date < time_to)
    busy = {}
    if not host_ids:
        return busy
    with db_api.reader(ctx) as session:
        for host_id, start, end in session.execute(query):
            busy.setdefault(host_id, []).append((start, end))
    return busy


def lock_hosts(ctx, host_ids):
    """Lock the rows of ``host_ids`` (in id order: no lock-order
    deadlocks between allocators); returns the ids still reservable."""
    with db_api.writer(ctx) as session:
        return set(session.execute(sa.select(Host.id).where(
            Host.id.in_(sorted(host_ids)), Host.reservable.is_(True),
            Host.disabled.is_(False)).order_by(Host.id).with_for_update()
        ).scalars())


def overlapping_hosts(ctx, host_ids, start, end, exclude_reservation=None):
    """Which of ``host_ids`` (locked by the caller) hold an allocation over
    ``[start, end)``, as committed now.

    A locking read: on MariaDB a plain SELECT would answer from the
    transaction's snapshot, taken before the allocator that held the lock
    committed.
    """
    with db_api.writer(ctx) as session:
        return set(session.execute(sa.select(Alloc.computehost_id).where(
            Alloc.computehost_id.in_(sorted(host_ids)),
            Alloc.start_date < end, Alloc.end_date > start,
            _not_mine(exclude_reservation)).with_for_update(read=True)
        ).scalars())


def allocations_add(ctx, reservation_id, lease_id, host_ids, start, end):
    with db_api.writer(ctx) as session:
        session.add_all([Alloc(reservation_id=reservation_id,
                               lease_id=lease_id, computehost_id=host_id,
                               start_date=start, end_date=end)
                         for host_id in sorted(host_ids)])
        session.flush()


def allocations_of(ctx, reservation_id):
    """The reservation's allocations, by host id."""
    with db_api.reader(ctx) as session:
        return session.execute(sa.select(Alloc).where(
            Alloc.reservation_id == reservation_id).order_by(
            Alloc.computehost_id)).scalars().all()


def allocations_move(ctx, reservation_id, start, end):
    """Give the reservation's allocations a new window; ``start`` None
    keeps each one's start (an active lease's, which healing may have
    moved to the time of a swap)."""
    values = {'end_date': end}
    if start is not None:
        values['start_date'] = start
    with db_api.writer(ctx) as session:
        session.execute(sa.update(Alloc).where(
            Alloc.reservation_id == reservation_id).values(**values))


def allocations_remove(ctx, reservation_id, host_ids=None):
    with db_api.writer(ctx) as session:
        query = sa.delete(Alloc).where(Alloc.reservation_id == reservation_id)
        if host_ids is not None:
            query = query.where(Alloc.computehost_id.in_(sorted(host_ids)))
        session.execute(query)


def allocation_swap(ctx, allocation_id, old_host, new_host, start):
    """Move one allocation to another host from ``start`` on, if it is
    still on ``old_host`` (compare-and-set: concurrent healers never both
    move it).  The new host was checked free from ``start`` only, so the
    allocation starts there: a host's allocations never overlap, past
    included."""
    with db_api.writer(ctx) as session:
        return session.execute(sa.update(Alloc).where(
            Alloc.id == allocation_id, Alloc.computehost_id == old_host
        ).values(computehost_id=new_host, start_date=start)).rowcount == 1


def allocations_list(ctx, host_id=None, lease_id=None, reservation_id=None,
                     time_from=None):
    """``[(host_id, reservation_id, lease_id, start, end)]`` by host."""
    query = sa.select(Alloc.computehost_id, Alloc.reservation_id,
                      Alloc.lease_id, Alloc.start_date, Alloc.end_date)
    if host_id is not None:
        query = query.where(Alloc.computehost_id == host_id)
    if lease_id is not None:
        query = query.where(Alloc.lease_id == lease_id)
    if reservation_id is not None:
        query = query.where(Alloc.reservation_id == reservation_id)
    if time_from is not None:
        query = query.where(Alloc.end_date > time_from)
    with db_api.reader(ctx) as session:
        return [tuple(r) for r in session.execute(query.order_by(
            Alloc.computehost_id, Alloc.start_date))]


def allocations_on_hosts(ctx, host_ids, after):
    """Allocations on ``host_ids`` not yet over at ``after``, with their
    reservation and lease rows: ``[(allocation, reservation, lease)]``."""
    if not host_ids:
        return []
    with db_api.reader(ctx) as session:
        return [tuple(r) for r in session.execute(
            sa.select(Alloc, models.Reservation, models.Lease).join(
                models.Reservation,
                models.Reservation.id == Alloc.reservation_id).join(
                models.Lease, models.Lease.id == Alloc.lease_id).where(
                Alloc.computehost_id.in_(sorted(host_ids)),
                Alloc.end_date > after).order_by(Alloc.start_date))]


def all_hosts(ctx):
    with db_api.reader(ctx) as session:
        return session.execute(sa.select(Host).order_by(
            Host.id)).scalars().all()


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
