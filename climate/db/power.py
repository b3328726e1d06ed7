"""SQL of the power planner: what it plans from and what it did.

The planner (``climate.manager.workers.power``) reads, in a fixed number
of statements whatever the inventory size (:func:`read_inputs`): every
host with its flags and extra capabilities (``climate.db.hosts``), the
``host_power`` rows, and the bookings of any class on those hosts over
the planning horizon, through the ledger's index like every other host
read.  Each change of a host's state is written with the history
interval it closes and the one it opens in one transaction
(:func:`set_state`), so the energy figures never miss or double an
interval.

Times are naive UTC, whole seconds (``climate.db.models.now``).
"""

import collections

import sqlalchemy as sa

from climate.db import api as db_api
from climate.db import hosts as db_hosts
from climate.db import models

Power = models.HostPower
History = models.HostPowerHistory

ON = 'on'
OFF = 'off'
WAKING = 'waking'
UNKNOWN = 'unknown'
STATES = (ON, OFF, WAKING, UNKNOWN)

#: A ``host_power`` row as the planner uses it.  ``idle_watts``: what
#: the host drew free and idle, read just before its last power off, at
#: ``watts_at`` (None: never read).
Record = collections.namedtuple(
    'Record', 'host_id state since boot_seconds need_at last_error error_at '
    'idle_watts watts_at')

#: What a host's switch measured it drawing (watts), and when.
Reading = collections.namedtuple('Reading', 'watts at')

#: One host as the planner sees it: its row of ``computehosts``, its
#: facts dict for the power backend (facts and extra capabilities) and
#: its :data:`Record` (None: never seen by the planner).
HostInput = collections.namedtuple('HostInput', 'row facts record')

#: What one planning pass reads: :data:`HostInput` values by host id, and
#: ``{host_id: [(start, end)]}`` of their bookings over the horizon.
Inputs = collections.namedtuple('Inputs', 'hosts bookings')

_KEEP = object()


def _record(row):
    return Record(row.host_id, row.state, row.since, row.boot_seconds,
                  row.need_at, row.last_error, row.error_at, row.idle_watts,
                  row.watts_at)


def facts_of(row, capabilities):
    """The dict a power backend takes for a host: its facts, its extra
    capabilities (``ironic_node``, ``bmc_address``...) and its id."""
    facts = dict(capabilities)
    facts.update((name, getattr(row, name)) for name in db_hosts.FACTS)
    facts['id'] = row.id
    return facts


def records(ctx):
    """``{host_id: Record}`` of every ``host_power`` row."""
    with db_api.reader(ctx) as session:
        return {row.host_id: _record(row) for row in
                session.execute(sa.select(Power)).scalars()}


def idle_watts(ctx):
    """``{host_id: watts}`` of the hosts whose idle draw was read (one
    statement: the energy report weighs every host with it)."""
    with db_api.reader(ctx) as session:
        return dict(session.execute(sa.select(
            Power.host_id, Power.idle_watts).where(
            Power.idle_watts.is_not(None))).all())


def state_counts(ctx):
    """``{state: number of hosts}`` of the ``host_power`` rows."""
    with db_api.reader(ctx) as session:
        return dict(session.execute(sa.select(
            Power.state, sa.func.count()).group_by(Power.state)).all())


def asleep(ctx, host_ids):
    """``{host_id: state}`` of those of ``host_ids`` the planner has off
    or waking."""
    if not host_ids:
        return {}
    with db_api.reader(ctx) as session:
        return dict(session.execute(sa.select(
            Power.host_id, Power.state).where(
            Power.host_id.in_(sorted(host_ids)),
            Power.state.in_((OFF, WAKING)))).all())


def late_wakes(ctx, before):
    """Ids of the hosts still ``waking`` for a booking that started
    before ``before``: a boot too slow, or a power-on that failed and is
    being tried again (its ``last_error`` says which)."""
    with db_api.reader(ctx) as session:
        return set(session.execute(sa.select(Power.host_id).where(
            Power.state == WAKING, Power.need_at < before)).scalars())


def record(ctx, host_id):
    """The :data:`Record` of ``host_id``, or None (never planned)."""
    with db_api.reader(ctx) as session:
        row = session.get(Power, host_id)
        return None if row is None else _record(row)


def read_inputs(ctx, now, horizon):
    """The :data:`Inputs` of a pass at ``now``.

    :param horizon: a function of the longest measured boot in seconds
        (None when none is measured) giving how far ahead of ``now``
        bookings are read (a timedelta): a booking that starts further
        ahead cannot change the plan before the next pass.
    """
    held = records(ctx)
    hosts = {row.id: HostInput(row, facts_of(row, caps), held.get(row.id))
             for row, caps in db_hosts.host_list(ctx)}
    boots = [r.boot_seconds for r in held.values()
             if r.boot_seconds is not None]
    until = now + horizon(max(boots) if boots else None)
    bookings = db_hosts.busy_intervals(ctx, list(hosts), now, until)
    return Inputs(hosts, bookings)


def set_state(ctx, host_id, state, now, boot_seconds=_KEEP, need_at=None,
              reading=None):
    """Record ``host_id`` in ``state`` from ``now`` on, its last error
    cleared; a change of state closes the host's open history interval
    and opens one, in the same transaction.  ``boot_seconds``: a measured
    boot (default: the one recorded stays); ``need_at``: for
    ``waking``, the booking start the host must be up by;
    ``reading``: a :data:`Reading` of the host's idle draw to keep
    (default: the last one stays).  Returns the
    :data:`Record` written."""
    if state not in STATES:
        raise ValueError(state)
    with db_api.writer(ctx) as session:
        row, made = _locked_row(session, host_id, state, now)
        if not made and row.state != state:
            _close_intervals(session, host_id, now)
            _open_interval(session, host_id, state, now)
            row.state, row.since = state, now
        if boot_seconds is not _KEEP:
            row.boot_seconds = boot_seconds
        if reading is not None:
            row.idle_watts, row.watts_at = float(reading.watts), reading.at
        row.need_at = need_at if state == WAKING else None
        row.last_error = row.error_at = None
        session.flush()
        return _record(row)


def _locked_row(session, host_id, state, now):
    """``(row, made)``: the host's row locked for the transaction, or one
    made in ``state`` since ``now`` (its history opened) when there was
    none."""
    row = session.execute(sa.select(Power).where(
        Power.host_id == host_id).with_for_update()).scalar_one_or_none()
    if row is not None:
        return row, False
    row = Power(host_id=host_id, state=state, since=now)
    session.add(row)
    _open_interval(session, host_id, state, now)
    return row, True


def record_error(ctx, host_id, message, now):
    """Keep a power backend's failure on ``host_id`` (its state stays as
    recorded; a host never recorded is ``unknown``)."""
    with db_api.writer(ctx) as session:
        row, _made = _locked_row(session, host_id, UNKNOWN, now)
        # TEXT holds 64 KiB on MariaDB; a backend's message is a line
        row.last_error = message[:4000]
        row.error_at = now
        session.flush()
        return _record(row)


def _open_interval(session, host_id, state, now):
    session.add(History(host_id=host_id, state=state, started_at=now))


def _close_intervals(session, host_id, now):
    open_ = sa.and_(History.host_id == host_id, History.ended_at.is_(None))
    # a state left at the instant it was entered (``unknown`` before a
    # power off that answered at once) lasted nothing: not kept
    session.execute(sa.delete(History).where(
        open_, History.started_at >= now))
    session.execute(sa.update(History).where(open_).values(ended_at=now))


def intervals(ctx, state, since, until):
    """``{host_id: [(start, end)]}`` of the history intervals in
    ``state`` overlapping ``[since, until)``, cut to it (an open one
    ends at ``until``): what ``climate.scheduling.power.tally`` adds
    up."""
    found = collections.defaultdict(list)
    with db_api.reader(ctx) as session:
        for host_id, start, end in session.execute(sa.select(
                History.host_id, History.started_at, History.ended_at).where(
                History.state == state, _overlapping(since, until)).order_by(
                History.host_id, History.started_at)):
            found[host_id].append(_cut(start, end, since, until))
    return dict(found)


def history(ctx, host_id, since, until):
    """``[(state, start, end)]`` of ``host_id``'s history intervals
    overlapping ``[since, until)``, oldest first, cut to it as
    :func:`intervals` cuts them."""
    with db_api.reader(ctx) as session:
        return [(state,) + _cut(start, end, since, until)
                for state, start, end in session.execute(sa.select(
                    History.state, History.started_at,
                    History.ended_at).where(
                    History.host_id == host_id,
                    _overlapping(since, until)).order_by(
                    History.started_at))]


def _cut(start, end, since, until):
    """An interval cut to ``[since, until)``; an open one ends at
    ``until``."""
    return max(start, since), until if end is None else min(end, until)


def _overlapping(since, until):
    """History intervals overlapping ``[since, until)`` (an open one lasts
    until now)."""
    return sa.and_(History.started_at < until,
                   sa.or_(History.ended_at.is_(None),
                          History.ended_at > since))
