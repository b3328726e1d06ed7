"""Freeing hosts of other projects' servers by live migration: the plan, no I/O.

A best-effort host reservation that finds too few free hosts may take
hosts outside Climate's free pool whose only obstacle is other projects'
servers, provided those servers can live elsewhere.  This module decides,
from figures read beforehand (``climate.plugins.physical_host.evacuation``
reads them from Nova and Placement), whether that is possible, which hosts
to free, where each server goes and in which order; it talks to nothing.

**Inputs.**  A *candidate* is ``{'name': host, 'servers': [server, ...]}``
(optionally ``'up': False`` when its nova-compute is down); a *server* is
``{'id', 'project_id', 'status', 'vcpus', 'memory_mb', 'disk_gb'}``
(optionally ``'task_state'``).  *Receivers* are ``{host: {'vcpus',
'memory_mb', 'disk_gb'}}``: what each host that may take servers has free,
allocation ratios and reservations already applied (Placement's
``(total - reserved) * allocation_ratio - used``).  A candidate may be a
receiver too: it receives only when it is not chosen for freeing.

**Eligibility.**  A candidate is eligible when every server on it can be
live-migrated for someone else's reservation: its nova-compute is not
known to be down, and each server belongs to another project than the
reserving one, is ``ACTIVE`` or ``PAUSED`` (:data:`MIGRATABLE`; a
``SHUTOFF`` server needs a cold migration, ``ERROR``, ``BUILD``, ... are
not movable) with no task under way, and its size is known.  The
reserving project's own servers are never moved for its lease: the
project put them there and may rely on where they are, and emptying a
host under its owner only to hand it back to the same owner would be a
surprise; such a host is simply not eligible.  A candidate without
servers is eligible and costs nothing.

**Which hosts (the preference).**  Eligible candidates are preferred by
``(number of servers, total memory, total VCPUs, total disk, name)``:
fewer servers mean fewer migrations to fail or time out, and less memory
means less to copy.  They are taken greedily in that order, each one kept
only when the servers of all hosts kept so far still pack onto the
receivers that are not being freed.  When the greedy pass falls short and
the candidates allow at most :data:`SEARCH_LIMIT` combinations, every
combination of ``count`` eligible hosts is tried, in preference order.

**Where each server goes (first-fit decreasing).**  The servers of the
chosen hosts are placed largest first (memory, then VCPUs, then disk, then
id) on the first receiver, in name order, with room in all three
resources; a receiver is never filled beyond what it has free.  First-fit
is a heuristic: some sets of servers pack only in an order it does not
try, so a refusal means "no packing found", not "none exists" (the unit
tests check refusals against an exhaustive search over small inputs and
state exactly that weaker property).  Nova's scheduler checks each target
again when the migration runs.

**In which order (the strategy).**  The moves are ordered host by host in
preference order (the cheapest host is freed first) and, within a host,
largest server first (a long migration starts early).  They run in
*waves*: a wave starts when the previous one has finished, and takes the
next moves that fit within three bounds:

- at most ``parallel`` moves (Climate's ``[hosts] max_parallel``): a few
  small servers thus go in a single wave;
- at most ``per_source`` moves out of one host (default 1, like Nova's
  ``max_concurrent_live_migrations``, which queues a host's outgoing
  migrations anyway: queued there they would only eat their timeout); many
  servers on one host thus go one per wave, while several hosts are
  emptied side by side;
- at most ``wave_memory_mb`` of server memory in flight (None: no bound);
  live migration copies memory, so big servers go a few at a time and one
  bigger than the bound goes alone.
"""

import collections
import itertools

#: Server statuses Nova live-migrates.
MIGRATABLE = ('ACTIVE', 'PAUSED')
#: What a server takes on a host, in the order of its size (largest first).
RESOURCES = ('memory_mb', 'vcpus', 'disk_gb')
#: Combinations of ``count`` candidates tried at most after a greedy pass
#: fell short (beyond that the greedy answer stands).
SEARCH_LIMIT = 2000
#: Moves out of one host in one wave, by default.
PER_SOURCE = 1

#: One live migration: server id, its host, the host it goes to, and its
#: memory (what a wave's memory bound counts).
Move = collections.namedtuple('Move', 'server source target memory_mb')


class Plan(collections.namedtuple('Plan', 'hosts moves waves')):
    """Hosts to free (preference order), every move, and the moves grouped
    into waves (lists of :class:`Move`) to run one after the other."""
    ok = True


class Refusal(collections.namedtuple('Refusal', 'reason most ineligible')):
    """No plan: ``reason`` (a sentence), ``most`` (how many hosts the
    planner could free) and ``ineligible`` (``{host: why}``)."""
    ok = False


def ineligible_reason(candidate, project_id):
    """Why the candidate host cannot be freed for ``project_id``'s lease,
    or None when it can (see the module's eligibility rule)."""
    if candidate.get('up') is False:
        return 'its compute service is down'
    for server in candidate['servers']:
        if server['project_id'] == project_id:
            return 'server %s belongs to the reserving project' % (
                server['id'],)
        if server['status'] not in MIGRATABLE:
            return 'server %s is %s' % (server['id'], server['status'])
        if server.get('task_state'):
            return 'server %s is busy (%s)' % (server['id'],
                                               server['task_state'])
        if any(server.get(r) is None for r in RESOURCES):
            return 'the size of server %s is unknown' % (server['id'],)
    return None


def preference(candidate):
    """The sort key of the host preference: fewest servers, then least
    memory, VCPUs and disk in total, then the name."""
    servers = candidate['servers']
    return (len(servers),) + tuple(
        sum(s[r] for s in servers) for r in RESOURCES) + (candidate['name'],)


def _size(server):
    return tuple(server[r] for r in RESOURCES)


def _largest_first(server):
    """Sort key: the largest server first, ties by id."""
    return tuple(-amount for amount in _size(server)) + (server['id'],)


def pack(servers, free):
    """First-fit decreasing of ``servers`` onto ``free`` (``{host:
    {resource: amount}}``, left untouched).

    :returns: ``{server id: host}``, or None when a server fits nowhere.
    """
    room = {host: [free[host][r] for r in RESOURCES] for host in free}
    order = sorted(room)
    placed = {}
    for server in sorted(servers, key=_largest_first):
        size = _size(server)
        for host in order:
            if all(need <= left for need, left in zip(size, room[host])):
                room[host] = [left - need
                              for need, left in zip(size, room[host])]
                placed[server['id']] = host
                break
        else:
            return None
    return placed


def _try(hosts, receivers):
    """The packing of the servers of ``hosts`` onto the receivers that are
    not among them, or None."""
    names = {c['name'] for c in hosts}
    free = {h: c for h, c in receivers.items() if h not in names}
    return pack([s for c in hosts for s in c['servers']], free)


def make_waves(moves, parallel, per_source=PER_SOURCE, wave_memory_mb=None):
    """Group ``moves`` (in order) into waves within the three bounds of
    the strategy; each wave takes the earliest moves that still fit, so
    every move lands in some wave and their order is kept per host."""
    if parallel < 1 or per_source < 1:
        raise ValueError('parallel and per_source must be positive')
    pending = list(moves)
    waves = []
    while pending:
        wave, rest = [], []
        per = collections.Counter()
        memory = 0
        for move in pending:
            if (len(wave) < parallel and per[move.source] < per_source and
                    (wave_memory_mb is None or not wave or
                     memory + move.memory_mb <= wave_memory_mb)):
                wave.append(move)
                per[move.source] += 1
                memory += move.memory_mb
            else:
                rest.append(move)
        waves.append(wave)
        pending = rest
    return waves


def _choose(eligible, receivers, count):
    """``(hosts, packing)`` of ``count`` hosts, or ``(most, None)`` with
    the largest set the greedy pass kept."""
    chosen, packing = [], {}
    for candidate in eligible:
        placed = _try(chosen + [candidate], receivers)
        if placed is not None:
            chosen, packing = chosen + [candidate], placed
            if len(chosen) == count:
                return chosen, packing
    # greedy fell short: a host kept early may have used the room that two
    # later ones needed; look at every combination while they are few
    combos = _combinations(len(eligible), count)
    if combos is not None and combos <= SEARCH_LIMIT:
        for hosts in itertools.combinations(eligible, count):
            placed = _try(list(hosts), receivers)
            if placed is not None:
                return list(hosts), placed
    return chosen, None


def _combinations(n, k):
    """n choose k, or None once it exceeds the search limit (computed
    incrementally so that a huge n costs nothing)."""
    if k > n:
        return 0
    total = 1
    for i in range(k):
        total = total * (n - i) // (i + 1)
        if total > SEARCH_LIMIT:
            return None
    return total


def plan(candidates, receivers, count, project_id, parallel=10,
         per_source=PER_SOURCE, wave_memory_mb=None):
    """Which ``count`` candidate hosts to free for ``project_id`` and how.

    :param candidates: hosts that could be freed, with their servers (see
        the module for the shapes).
    :param receivers: ``{host: free resources}`` of the hosts that may take
        servers.
    :param parallel: moves per wave at most (see :func:`make_waves`).
    :returns: a :class:`Plan`, or a :class:`Refusal` saying why not.
    """
    if count < 1:
        raise ValueError('count must be positive')
    ineligible = {}
    eligible = []
    for candidate in candidates:
        why = ineligible_reason(candidate, project_id)
        if why is None:
            eligible.append(candidate)
        else:
            ineligible[candidate['name']] = why
    eligible.sort(key=preference)
    if len(eligible) < count:
        return Refusal(
            '%d host(s) wanted, %d of %d candidate(s) can be freed%s' % (
                count, len(eligible), len(candidates), ''.join(
                    '; %s: %s' % item for item in sorted(
                        ineligible.items())[:5])),
            len(eligible), ineligible)
    hosts, packing = _choose(eligible, receivers, count)
    if packing is None:
        return Refusal(
            '%d host(s) wanted: the other hosts have room for the servers '
            'of %d of the %d eligible candidate(s) at most' % (
                count, len(hosts), len(eligible)), len(hosts), ineligible)
    moves = [Move(s['id'], c['name'], packing[s['id']], s['memory_mb'])
             for c in hosts
             for s in sorted(c['servers'], key=_largest_first)]
    return Plan([c['name'] for c in hosts], moves,
                make_waves(moves, parallel, per_source, wave_memory_mb))
