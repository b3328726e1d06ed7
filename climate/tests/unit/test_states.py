"""climate.states: Blazar's status values and the declared transitions."""

import itertools

import pytest

from climate import exceptions
from climate import states

MACHINES = {'lease': states.LEASE, 'reservation': states.RESERVATION,
            'event': states.EVENT}


def test_values_are_blazars():
    assert (states.PENDING, states.STARTING, states.ACTIVE, states.UPDATING,
            states.TERMINATING, states.TERMINATED, states.ERROR) == (
        'PENDING', 'STARTING', 'ACTIVE', 'UPDATING', 'TERMINATING',
        'TERMINATED', 'ERROR')
    assert (states.RES_PENDING, states.RES_ACTIVE, states.RES_DELETED,
            states.RES_ERROR) == ('pending', 'active', 'deleted', 'error')
    assert (states.UNDONE, states.IN_PROGRESS, states.DONE,
            states.EVENT_ERROR) == ('UNDONE', 'IN_PROGRESS', 'DONE', 'ERROR')


@pytest.mark.parametrize('kind', sorted(MACHINES))
def test_every_target_is_a_known_state(kind):
    machine = MACHINES[kind]
    for current, targets in machine.items():
        assert targets <= set(machine), (current, targets - set(machine))


@pytest.mark.parametrize('kind', sorted(MACHINES))
def test_declared_transitions_are_allowed(kind):
    for current, targets in MACHINES[kind].items():
        for new in targets:
            assert states.check(kind, current, new) == new


@pytest.mark.parametrize('kind', sorted(MACHINES))
def test_staying_put_is_always_allowed(kind):
    for current in MACHINES[kind]:
        assert states.check(kind, current, current) == current


@pytest.mark.parametrize('kind', sorted(MACHINES))
def test_undeclared_transitions_raise(kind):
    machine = MACHINES[kind]
    refused = 0
    for current, new in itertools.permutations(machine, 2):
        if new in machine[current]:
            continue
        refused += 1
        with pytest.raises(exceptions.InvalidStateTransition) as info:
            states.check(kind, current, new)
        assert str(info.value) == '%s cannot go from %s to %s.' % (
            kind, current, new)
    assert refused > 0


def test_the_lease_lifecycle_path():
    path = [states.PENDING, states.STARTING, states.ACTIVE,
            states.TERMINATING, states.TERMINATED]
    for current, new in zip(path, path[1:]):
        assert states.check('lease', current, new) == new


@pytest.mark.parametrize('current,new', [
    (states.TERMINATED, states.ACTIVE),
    (states.TERMINATED, states.PENDING),
    (states.TERMINATED, states.ERROR),
    (states.ACTIVE, states.PENDING),
    (states.ACTIVE, states.STARTING),
    (states.PENDING, states.ACTIVE),
    (states.PENDING, states.TERMINATED),
    (states.ERROR, states.ACTIVE),
], ids=lambda v: v)
def test_lease_shortcuts_are_refused(current, new):
    with pytest.raises(exceptions.InvalidStateTransition):
        states.check('lease', current, new)


def test_terminal_states_have_no_way_out():
    assert states.LEASE[states.TERMINATED] == set()
    assert states.LEASE[states.EXHAUSTED] == set()
    assert states.LEASE[states.TIMEDOUT] == set()
    assert states.RESERVATION[states.RES_DELETED] == set()
    assert states.EVENT[states.DONE] == set()
    assert states.EVENT[states.EVENT_ERROR] == set()


def test_a_failed_event_attempt_may_wait_for_its_retry():
    assert states.check('event', states.IN_PROGRESS,
                        states.UNDONE) == states.UNDONE


def test_an_unknown_current_state_is_refused():
    with pytest.raises(exceptions.InvalidStateTransition):
        states.check('lease', 'DELETED', states.ACTIVE)


def test_updatable_and_busy_sets():
    assert states.LEASE_UPDATABLE == {states.PENDING, states.INACTIVE,
                                      states.ACTIVE}
    assert states.LEASE_NOT_STARTED == {states.PENDING, states.INACTIVE}
    assert states.LEASE_HOLDING == {states.PENDING, states.INACTIVE,
                                    states.ACTIVE, states.HELD}
    assert states.LEASE_BUSY == {states.STARTING, states.UPDATING,
                                 states.TERMINATING}
    assert not states.LEASE_UPDATABLE & states.LEASE_BUSY


def test_an_undeclared_transition_is_a_server_bug_not_a_user_error():
    exc = exceptions.InvalidStateTransition(kind='lease', current='A',
                                            new='B')
    assert exc.code == 500


def test_the_lease_types_states():
    assert (states.INACTIVE, states.WAITING, states.EXHAUSTED,
            states.HUNTING, states.TIMEDOUT) == (
        'INACTIVE', 'WAITING', 'EXHAUSTED', 'IN_PROGRESS', 'TIMEDOUT')
    # each type's path (climate.lease.types)
    for path in ([states.INACTIVE, states.STARTING, states.ACTIVE],
                 [states.INACTIVE, states.STARTING, states.ERROR],
                 [states.WAITING, states.STARTING, states.ACTIVE],
                 [states.WAITING, states.EXHAUSTED],
                 [states.HUNTING, states.ACTIVE],
                 [states.HUNTING, states.TIMEDOUT]):
        for current, new in zip(path, path[1:]):
            assert states.check('lease', current, new) == new
    for current, new in ((states.WAITING, states.ACTIVE),
                         (states.WAITING, states.ERROR),
                         (states.INACTIVE, states.ACTIVE),
                         (states.EXHAUSTED, states.WAITING),
                         (states.TIMEDOUT, states.HUNTING)):
        with pytest.raises(exceptions.InvalidStateTransition):
            states.check('lease', current, new)


def test_older_clients_see_blazars_states():
    assert states.BLAZAR_EQUIVALENT == {
        'INACTIVE': 'PENDING', 'WAITING': 'PENDING',
        'IN_PROGRESS': 'STARTING', 'EXHAUSTED': 'ERROR',
        'TIMEDOUT': 'ERROR', 'HELD': 'PENDING', 'EXPIRED': 'TERMINATED'}
    assert set(states.BLAZAR_EQUIVALENT.values()) <= set(states.LEASE)
    # 1.11 to 1.13 know the lease types' states, not the holds'
    assert states.HOLD_EQUIVALENT == {'HELD': 'PENDING',
                                      'EXPIRED': 'TERMINATED'}
    assert set(states.BLAZAR_EQUIVALENT.values()).isdisjoint(
        states.BLAZAR_EQUIVALENT)


def test_a_hold_is_confirmed_or_expires_once():
    assert states.check('lease', states.HELD, states.PENDING)
    assert states.check('lease', states.HELD, states.INACTIVE)
    assert states.check('lease', states.HELD, states.EXPIRED)
    for later in (states.STARTING, states.ACTIVE, states.ERROR):
        with pytest.raises(exceptions.InvalidStateTransition):
            states.check('lease', states.HELD, later)
    with pytest.raises(exceptions.InvalidStateTransition):
        states.check('lease', states.EXPIRED, states.PENDING)
    assert states.EXPIRED in states.LEASE_FINISHED
