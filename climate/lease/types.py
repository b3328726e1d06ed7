"""The lease types of the seeds (microversion 1.11): the promise a lease
makes, checked and applied here; no I/O.

A lease without ``lease_type`` (every client before 1.11) keeps Climate's
first behaviour: granted for its window or refused, started at its start,
its start retried on a cloud's failure.  With a type
(``doc/source/lease-types.rst``):

``immediate``
    Starts now or not at all: refused when it does not fit, STARTING at
    once when it does; a start the cloud refuses is not retried, what was
    made is taken back and the lease ends in ERROR with the cloud's reason.
``with_retries``
    As ``immediate``; when it does not fit, kept WAITING (holding nothing)
    and tried again (``climate.manager.workers.retries``) up to
    ``max_retries`` times, and whenever capacity is released; EXHAUSTED when the retries
    ran out.  Its length is kept; its dates are set when it is granted.
``best_effort``
    Compute hosts, no filters: ``immediate`` when the hosts fit; else
    frees hosts outside the inventory of other projects' servers
    (``climate.manager.workers.hunts``: IN_PROGRESS, then STARTING and
    ACTIVE, or TIMEDOUT with everything taken given back), or refused up
    front when no plan frees enough.
``scheduled``
    Booked now for a later start: INACTIVE until everything is provisioned
    at the start (then ACTIVE), ERROR (everything taken back) when the
    start fails for good.  The answer says whether the capacity is
    guaranteed (Climate's own pools) or only predicted (a pool Climate
    shares with the cloud's other users).
"""

from climate import exceptions
from climate import states

IMMEDIATE = 'immediate'
WITH_RETRIES = 'with_retries'
BEST_EFFORT = 'best_effort'
SCHEDULED = 'scheduled'
TYPES = (IMMEDIATE, WITH_RETRIES, BEST_EFFORT, SCHEDULED)
#: the types whose lease starts when it is made (granted)
STARTS_NOW = (IMMEDIATE, WITH_RETRIES, BEST_EFFORT)
#: the types whose start is tried once: "now or not at all"
STARTED_ONCE = STARTS_NOW
#: the types whose failed start takes back what was made
ROLLED_BACK = TYPES
#: the types whose reservations may only be of these resource types
ONLY_FOR = {BEST_EFFORT: ('physical:host',)}

#: A body field of 1.11 and later.
FIELDS = ('lease_type', 'max_retries')


def parse(body, configured_max_retries):
    """``(lease_type, max_retries)`` of a create body (both None when it
    has no type); the body without them, ``start_date`` "now" when a type
    that starts now leaves it out.  InvalidInput naming the field."""
    body = dict(body)
    lease_type = body.pop('lease_type', None)
    max_retries = body.pop('max_retries', None)
    if lease_type is None:
        if max_retries is not None:
            raise exceptions.InvalidInput(
                reason='max_retries is for a lease_type with_retries')
        return body, None, None
    if lease_type not in TYPES:
        raise exceptions.InvalidInput(
            reason='lease_type must be one of %s, not %r' % (
                ', '.join(TYPES), lease_type))
    if lease_type == WITH_RETRIES:
        if max_retries is None:
            max_retries = configured_max_retries
        elif (isinstance(max_retries, bool) or
              not isinstance(max_retries, int) or
              not 0 <= max_retries <= configured_max_retries):
            raise exceptions.InvalidInput(
                reason='max_retries must be an integer from 0 to %d (the '
                       "operator's [leases] max_retries), not %r" % (
                           configured_max_retries, max_retries))
        if body.get('events'):
            raise exceptions.InvalidInput(
                reason='events: a with_retries lease takes none (its dates '
                       'are set when it is granted)')
    elif max_retries is not None:
        raise exceptions.InvalidInput(
            reason='max_retries is for a lease_type with_retries, not %s' %
            lease_type)
    if lease_type in STARTS_NOW and body.get('start_date') is None:
        body['start_date'] = 'now'
    return body, lease_type, max_retries


def check(lease_type, values, now):
    """The type's rules on the parsed lease ``values`` (``start_date``
    after ``lease_input.parse_create``, which makes a start within the
    current minute now; ``reservations``, the ``(resource type, params)``
    pairs).  InvalidInput naming the field."""
    reservations = values['reservations']
    resource_types = [rtype for rtype, _params in reservations]
    if lease_type in STARTS_NOW and values['start_date'] > now:
        raise exceptions.InvalidInput(
            reason='start_date: a lease of type %s starts now; leave '
                   'start_date out or give "now" (lease_type scheduled '
                   'starts later)' % lease_type)
    if lease_type == BEST_EFFORT:
        for _rtype, params in reservations:
            if any((params or {}).get(key) for key in (
                    'hypervisor_properties', 'resource_properties')):
                # hosts outside the inventory have no capabilities and
                # facts of another shape: the filters cannot be weighed
                # on them the way they are on registered hosts
                raise exceptions.InvalidInput(
                    reason='lease_type best_effort takes no '
                           'hypervisor_properties or resource_properties: '
                           'the hosts it frees are outside the inventory, '
                           'where filters cannot be evaluated')
    allowed = ONLY_FOR.get(lease_type)
    if allowed is not None:
        other = sorted(set(resource_types) - set(allowed))
        if other or not resource_types:
            raise exceptions.InvalidInput(
                reason='lease_type %s is for reservations of %s only%s' % (
                    lease_type, ', '.join(allowed),
                    ', not %s' % ', '.join(other) if other else ''))


def initial_status(lease_type):
    """The status a granted lease of ``lease_type`` is written with."""
    if lease_type == SCHEDULED:
        return states.INACTIVE
    if lease_type in STARTS_NOW:
        # its start is due now: shown starting from the answer on
        return states.STARTING
    return states.PENDING


def start_attempts(lease_type, configured):
    """How many times the start of a lease of ``lease_type`` is tried."""
    return 1 if lease_type in STARTED_ONCE else configured


def rolled_back(lease_type):
    """Whether a lease of ``lease_type`` whose start failed for good
    gives back what it holds (else it keeps it until its end, as
    before lease types)."""
    return lease_type in ROLLED_BACK


def guarantee(plugins, resource_types):
    """For a scheduled lease's answer: ``(guaranteed, note)``, whether
    every reservation's capacity is Climate's own (``capacity_guaranteed``
    of its plugin) or some is only predicted."""
    shared = sorted({rtype for rtype in resource_types
                     if not plugins.get(rtype).capacity_guaranteed})
    if not shared:
        return True, ("the capacity is Climate's own and booked: the "
                      'lease will be provisioned at its start unless the '
                      'cloud fails then')
    return False, ('%s: the capacity is a pool Climate shares with the '
                   "cloud's other users; it is booked in Climate, but the "
                   'cloud may lack it at the start (the lease then ends in '
                   'ERROR with the reason)' % ', '.join(shared))
