"""The evacuation planner (climate.scheduling.evacuation): examples, and
properties checked against an exhaustive search on small random inputs."""

import itertools

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import pytest

from climate.scheduling import evacuation as evac

# fixed seed, bounded: the same examples on every run
PROPERTY = settings(derandomize=True, max_examples=500, deadline=None,
                    database=None)

ME = 'mine'


def server(sid, project='other', status='ACTIVE', memory_mb=1024, vcpus=1,
           disk_gb=10, **extra):
    return dict(id=sid, project_id=project, status=status,
                memory_mb=memory_mb, vcpus=vcpus, disk_gb=disk_gb, **extra)


def host(name, *servers, **extra):
    return dict(name=name, servers=list(servers), **extra)


def room(memory_mb=8192, vcpus=8, disk_gb=100):
    return {'memory_mb': memory_mb, 'vcpus': vcpus, 'disk_gb': disk_gb}


# -- examples -----------------------------------------------------------------

def test_eligibility():
    assert evac.ineligible_reason(host('h'), ME) is None
    assert evac.ineligible_reason(host('h', server('a')), ME) is None
    assert evac.ineligible_reason(
        host('h', server('a', status='PAUSED')), ME) is None
    assert 'reserving project' in evac.ineligible_reason(
        host('h', server('a'), server('b', project=ME)), ME)
    assert evac.ineligible_reason(
        host('h', server('a', status='SHUTOFF')), ME) == 'server a is SHUTOFF'
    assert 'busy' in evac.ineligible_reason(
        host('h', server('a', task_state='migrating')), ME)
    assert 'unknown' in evac.ineligible_reason(
        host('h', server('a', memory_mb=None)), ME)
    assert 'down' in evac.ineligible_reason(host('h', up=False), ME)


def test_prefers_fewest_servers_then_least_memory():
    candidates = [
        host('c3', server('x1'), server('x2')),
        host('c2', server('y', memory_mb=4096)),
        host('c1', server('z', memory_mb=2048)),
        host('c0'),
    ]
    plan = evac.plan(candidates, {'r': room(65536, 64, 1000)}, 3, ME)
    assert plan.ok
    assert plan.hosts == ['c0', 'c1', 'c2']
    assert sorted(m.server for m in plan.moves) == ['y', 'z']
    assert {m.target for m in plan.moves} == {'r'}


def test_first_fit_decreasing_in_name_order_never_overfills():
    candidates = [host('c', server('s1', memory_mb=3000),
                       server('s2', memory_mb=5000),
                       server('s3', memory_mb=2000))]
    receivers = {'b': room(5000), 'a': room(4000)}
    plan = evac.plan(candidates, receivers, 1, ME)
    # largest first: s2 (5000) does not fit on a, goes to b; s1 on a; s2
    # left a 1000 on a and nothing on b: s3 (2000) fits nowhere
    assert not plan.ok
    receivers['a'] = room(5000)
    plan = evac.plan(candidates, receivers, 1, ME)
    assert {m.server: m.target for m in plan.moves} == {
        's2': 'a', 's1': 'b', 's3': 'b'}
    # largest first within the host
    assert [m.server for m in plan.moves] == ['s2', 's1', 's3']


def test_a_host_being_freed_never_receives():
    # c1 and c2 are both candidates and receivers; freeing both leaves
    # only r, too small for both servers
    candidates = [host('c1', server('a', memory_mb=4000)),
                  host('c2', server('b', memory_mb=4000))]
    receivers = {'c1': room(8000), 'c2': room(8000), 'r': room(4000)}
    one = evac.plan(candidates, receivers, 1, ME)
    assert one.hosts == ['c1'] and one.moves[0].target == 'c2'
    two = evac.plan(candidates, receivers, 2, ME)
    assert not two.ok and two.most == 1
    assert 'room for the servers of 1 of the 2' in two.reason


def test_all_three_resources_count():
    candidates = [host('c', server('a', vcpus=4), server('b', vcpus=4))]
    assert not evac.plan(candidates, {'r': room(vcpus=6)}, 1, ME).ok
    assert evac.plan(candidates, {'r': room(vcpus=8)}, 1, ME).ok
    disky = [host('c', server('a', disk_gb=60), server('b', disk_gb=60))]
    assert not evac.plan(disky, {'r': room()}, 1, ME).ok


def test_refusal_names_the_ineligible_hosts():
    candidates = [host('c1', server('a', project=ME)),
                  host('c2', server('b', status='ERROR')),
                  host('c3', server('c'))]
    refusal = evac.plan(candidates, {'r': room()}, 2, ME)
    assert not refusal.ok
    assert refusal.most == 1
    assert set(refusal.ineligible) == {'c1', 'c2'}
    assert refusal.reason.startswith(
        '2 host(s) wanted, 1 of 3 candidate(s) can be freed')
    assert 'c2: server b is ERROR' in refusal.reason


def test_search_finds_what_greedy_misses():
    # greedy keeps c1 (its server is the smallest); then c1 cannot receive
    # and r has no room for a second server; {c2, c3} fits (one on r, one
    # on c1)
    candidates = [host('c1', server('a', memory_mb=1000)),
                  host('c2', server('b', memory_mb=2000)),
                  host('c3', server('c', memory_mb=2000))]
    receivers = {'r': room(2000), 'c1': room(2000)}
    plan = evac.plan(candidates, receivers, 2, ME)
    assert plan.ok and plan.hosts == ['c2', 'c3']
    assert {m.target for m in plan.moves} == {'c1', 'r'}


def test_first_fit_can_miss_a_packing():
    # the documented weakness: a exact packing exists (x and y on r1, z on
    # r2) but largest-first puts z on r1
    candidates = [host('c', server('x', memory_mb=2, vcpus=3),
                       server('y', memory_mb=2, vcpus=1),
                       server('z', memory_mb=3, vcpus=1))]
    receivers = {'r1': room(4, 4, 0), 'r2': room(3, 1, 0)}
    for s in candidates[0]['servers']:
        s['disk_gb'] = 0
    assert exact_pack(candidates[0]['servers'], receivers)
    assert not evac.plan(candidates, receivers, 1, ME).ok


def test_count_must_be_positive():
    with pytest.raises(ValueError):
        evac.plan([], {}, 0, ME)


# -- waves (the strategy) -----------------------------------------------------

def move(sid, source, memory_mb=1024):
    return evac.Move(sid, source, 'r', memory_mb)


def test_a_few_servers_go_in_one_wave():
    moves = [move('a', 'h1'), move('b', 'h2'), move('c', 'h3')]
    assert evac.make_waves(moves, 10) == [moves]


def test_one_source_at_a_time_and_the_parallel_bound():
    moves = [move('a1', 'h1'), move('a2', 'h1'), move('a3', 'h1'),
             move('b1', 'h2'), move('c1', 'h3')]
    waves = evac.make_waves(moves, 2)
    assert [[m.server for m in w] for w in waves] == [
        ['a1', 'b1'], ['a2', 'c1'], ['a3']]
    waves = evac.make_waves(moves, 10, per_source=2)
    assert [[m.server for m in w] for w in waves] == [
        ['a1', 'a2', 'b1', 'c1'], ['a3']]


def test_memory_in_flight_is_bounded_and_a_big_server_goes_alone():
    moves = [move('big', 'h1', 16384), move('m1', 'h2', 4096),
             move('m2', 'h3', 4096), move('m3', 'h4', 4096)]
    waves = evac.make_waves(moves, 10, wave_memory_mb=8192)
    assert [[m.server for m in w] for w in waves] == [
        ['big'], ['m1', 'm2'], ['m3']]


def test_plan_orders_hosts_then_largest_first_into_waves():
    candidates = [host('c1', server('a', memory_mb=1000),
                       server('b', memory_mb=3000)),
                  host('c2', server('c', memory_mb=2000))]
    plan = evac.plan(candidates, {'r': room(65536)}, 2, ME, parallel=4)
    assert plan.hosts == ['c2', 'c1']
    assert [m.server for m in plan.moves] == ['c', 'b', 'a']
    assert [[m.server for m in w] for w in plan.waves] == [['c', 'b'], ['a']]


# -- properties ---------------------------------------------------------------

def exact_pack(servers, free):
    """Whether the servers fit on ``free`` in some assignment
    (backtracking, largest first)."""
    room_left = {h: [free[h][r] for r in evac.RESOURCES] for h in free}
    ordered = sorted(servers, key=lambda s: [s[r] for r in evac.RESOURCES],
                     reverse=True)

    def place(i):
        if i == len(ordered):
            return True
        size = [ordered[i][r] for r in evac.RESOURCES]
        tried = set()
        for h, left in room_left.items():
            if tuple(left) in tried:
                continue  # an identical receiver was tried already
            tried.add(tuple(left))
            if all(n <= v for n, v in zip(size, left)):
                room_left[h] = [v - n for n, v in zip(size, left)]
                if place(i + 1):
                    return True
                room_left[h] = left
        return False

    return place(0)


def combos(eligible, receivers, count):
    for hosts in itertools.combinations(eligible, count):
        names = {c['name'] for c in hosts}
        free = {h: f for h, f in receivers.items() if h not in names}
        yield [s for c in hosts for s in c['servers']], free


size_st = st.fixed_dictionaries({'memory_mb': st.integers(1, 4),
                                 'vcpus': st.integers(1, 3),
                                 'disk_gb': st.integers(0, 2)})
room_st = st.fixed_dictionaries({'memory_mb': st.integers(0, 10),
                                 'vcpus': st.integers(0, 8),
                                 'disk_gb': st.integers(0, 5)})


@st.composite
def world(draw):
    n_hosts = draw(st.integers(1, 4))
    candidates = []
    sid = itertools.count()
    for i in range(n_hosts):
        servers = []
        for _j in range(draw(st.integers(0, 3))):
            servers.append(dict(
                draw(size_st), id='s%d' % next(sid),
                project_id=draw(st.sampled_from(['other'] * 9 + [ME])),
                status=draw(st.sampled_from(['ACTIVE'] * 8 +
                                            ['PAUSED', 'SHUTOFF']))))
        candidates.append(host('c%d' % i, *servers))
    receivers = {'r%d' % i: draw(room_st)
                 for i in range(draw(st.integers(0, 4)))}
    # some candidates may receive too
    for c in candidates:
        if draw(st.booleans()):
            receivers[c['name']] = draw(room_st)
    count = draw(st.integers(1, n_hosts))
    parallel = draw(st.integers(1, 3))
    wave_memory = draw(st.sampled_from([None, 2, 5]))
    return candidates, receivers, count, parallel, wave_memory


@PROPERTY
@given(world())
def test_plans_are_valid_and_refusals_justified(w):
    candidates, receivers, count, parallel, wave_memory = w
    result = evac.plan(candidates, receivers, count, ME, parallel=parallel,
                       wave_memory_mb=wave_memory)
    eligible = [c for c in candidates
                if evac.ineligible_reason(c, ME) is None]
    exact = any(exact_pack(servers, free)
                for servers, free in combos(eligible, receivers, count))
    if result.ok:
        chosen = set(result.hosts)
        assert len(chosen) == len(result.hosts) == count
        assert chosen <= {c['name'] for c in eligible}
        # every server of the chosen hosts moves, once, from its host
        expected = {s['id']: c['name'] for c in candidates
                    if c['name'] in chosen for s in c['servers']}
        assert sorted(m.server for m in result.moves) == sorted(expected)
        assert all(m.source == expected[m.server] for m in result.moves)
        # never onto a host being freed, never beyond a receiver's room
        sizes = {s['id']: s for c in candidates for s in c['servers']}
        for m in result.moves:
            assert m.target in receivers and m.target not in chosen
        for target in {m.target for m in result.moves}:
            for r in evac.RESOURCES:
                used = sum(sizes[m.server][r] for m in result.moves
                           if m.target == target)
                assert used <= receivers[target][r]
        # the waves hold every move once, in order per host, within bounds
        flat = [m for wave in result.waves for m in wave]
        assert sorted(flat) == sorted(result.moves)
        for source in chosen:
            assert [m for m in flat if m.source == source] == \
                [m for m in result.moves if m.source == source]
        for wave in result.waves:
            assert 1 <= len(wave) <= parallel
            assert len({m.source for m in wave}) == len(wave)
            if wave_memory is not None and len(wave) > 1:
                assert sum(m.memory_mb for m in wave) <= wave_memory
        assert exact  # a valid plan is a packing
    else:
        assert result.most < count
        # the weaker property: first-fit may miss an exact packing, but no
        # choice of hosts packs by first-fit decreasing
        assert not any(evac.pack(servers, free) is not None
                       for servers, free in combos(eligible, receivers,
                                                   count))


@PROPERTY
@given(st.lists(size_st, max_size=6), st.dictionaries(
    st.sampled_from(['a', 'b', 'c']), room_st))
def test_pack_is_first_fit_and_never_overfills(sizes, free):
    servers = [dict(s, id='s%d' % i) for i, s in enumerate(sizes)]
    placed = evac.pack(servers, free)
    if placed is None:
        assert servers
        return
    assert set(placed) == {s['id'] for s in servers}
    for h in free:
        for r in evac.RESOURCES:
            assert sum(s[r] for s in servers if placed[s['id']] == h) <= \
                free[h][r]
