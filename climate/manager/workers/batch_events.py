"""Claimed events run several to a transaction.

A burst of leases due in the same second (10,000 starts, say) costs each
event, run alone, a transaction of ten statements: the lease's lock, its
reservations and events, the event's lock, three status updates, the
plugin's record, the body's re-rendering, the commit.  Most of them are
the same for every event of the burst.  So the event engine hands the
claims of one pass to :func:`run`, a few dozen at a time, which runs
them in one transaction when no plugin of their leases acts in a cloud
(``acts_in_cloud``; nobody outside the database could see a difference):

- the leases are locked in id order, as every other batch and the
  bodies' re-rendering lock them (no deadlock between two managers'
  batches, nor with a claim), their reservations and events loaded with
  one query each, then the claimed events locked, in id order too;
- each claim is checked under its event's row lock, in the transaction
  that commits, as the engine checks one: a claim released meanwhile
  (this manager declared dead) is left alone, never committed;
- each event goes through the engine's own rules
  (``EventEngine.admit``, ``apply_changes``, ``applied``): the run
  order within a lease, rescheduled leases put back, before_end of a
  lease that never became active, the statuses, the usage records at an
  end, the webhooks' deliveries, the trust at an end;
- the rows' changes are written set-based
  (``climate.db.api.write_in_bulk``: one UPDATE per table and set of
  values), the bodies re-rendered in one statement, one commit;
- the notifications follow the commit, one per lease, as for an event
  run alone, the usage they carry read for all the leases in one
  statement.

What the batch cannot take runs alone, as the engine runs any event, in
the pool's threads: an event of a lease acting in a cloud, a second
event of a lease already in the batch (after the first committed, in its
lease's run order), and, when the batch fails for any reason, every one
of its events.  A failed batch is rolled back whole, so its events count
no attempt; each then runs, fails or retries on its own, as if the batch
had never been tried, and one bad lease never holds the others back.
"""

import collections

from oslo_log import log as logging

from climate import context as climate_context
from climate import dates
from climate.db import api as db_api
from climate.lease import events as lease_events
from climate import states

LOG = logging.getLogger(__name__)

#: What a batch's transaction leaves to do: ``ran``, ``(event type,
#: lease view, event id)`` of each event it committed; ``put_back``,
#: whether it put an event back (rescheduled or waiting: the engine's
#: loop may be sleeping past its due time); ``alone``, the claims to run
#: one by one.
Outcome = collections.namedtuple('Outcome', 'ran put_back alone')


def run(engine, claims, token):
    """Run ``claims`` (``climate.db.api.Claim`` of ``token``) of the
    ``engine``, as many as can be in one transaction; never raises."""
    ctx = climate_context.admin_context()
    try:
        outcome = _together(engine, ctx, claims, token)
    except Exception as exc:
        LOG.warning('A batch of %d events failed (%s: %s); each runs '
                    'alone', len(claims), type(exc).__name__, exc)
        outcome = Outcome((), False, list(claims))
    for event_type, lease, event_id in outcome.ran:
        engine.after_commit(ctx, event_type, lease, event_id, notify=False)
    engine.notify_many(ctx, outcome.ran)
    if outcome.put_back:
        engine.wake()
    _run_alone(engine, outcome.alone, token)


def split(claims, rank):
    """``(first, later)``: the first claim of each lease by ``rank`` (of
    a claim; the earliest claimed among equals), and the others, in the
    order they are to run."""
    first, later = {}, []
    for claim in claims:
        held = first.get(claim.lease_id)
        if held is None:
            first[claim.lease_id] = claim
        elif rank(claim) < rank(held):
            first[claim.lease_id] = claim
            later.append(held)
        else:
            later.append(claim)
    later.sort(key=rank)
    return list(first.values()), later


@db_api.retry_on_deadlock
def _together(engine, ctx, claims, token):
    """The batch's transaction; returns its :class:`Outcome`."""
    ran, alone, applied = [], [], []
    put_back = False
    with db_api.writer(ctx):
        db_api.gather_records(ctx)
        leases = {lease.id: lease for lease in db_api.leases_locked(
            ctx, [claim.lease_id for claim in claims])}
        events = db_api.events_locked(
            ctx, [claim.event_id for claim in claims])
        now = dates.utcnow()
        # one event per lease: a lease's view after each of its events is
        # what its notifications show, and its next event's rules read
        # the first one's outcome, committed
        def rank(claim):
            return engine.rank(_type_of(events, claim))

        first, later = split(claims, rank)
        alone.extend(later)
        for claim in sorted(first, key=lambda c: c.lease_id):
            lease = leases.get(claim.lease_id)
            event = events.get(claim.event_id)
            if lease is None:
                LOG.info('Lease of event %s was deleted meanwhile',
                         claim.event_id)
                continue
            if not _still_ours(event, lease, token):
                LOG.info('Event %s was taken over by another manager (or '
                         'its claim released: this manager was declared '
                         'dead)', claim.event_id)
                continue
            if (event.event_type != lease_events.NOTIFICATION and
                    engine.acts_in_cloud(lease)):
                alone.append(claim)
                continue
            if not engine.admit(ctx, lease, event, now):
                put_back = True
                continue
            engine.apply_changes(ctx, lease, event)
            applied.append((lease, event))
        db_api.write_in_bulk(ctx, _rows(leases.values()))
        for lease, event in applied:
            ran.append((event.event_type, engine.applied(ctx, lease, event),
                        event.id))
        db_api.detach(ctx, leases.values())
    # in each lease's run order (a lease's first event, sent alone
    # because it acts in a cloud, before its later ones)
    alone.sort(key=rank)
    return Outcome(ran, put_back, alone)


def _type_of(events, claim):
    event = events.get(claim.event_id)
    return event.event_type if event is not None else None


def _still_ours(event, lease, token):
    """The claim check, under the event's row lock."""
    return (event is not None and event.lease_id == lease.id and
            event.status == states.IN_PROGRESS and
            event.claim_token == token)


def _rows(leases):
    """Every loaded row of the batch's leases."""
    for lease in leases:
        yield lease
        yield from lease.reservations
        yield from lease.events


def _run_alone(engine, claims, token):
    """Hand ``claims`` to the engine's pool, one job per lease running its
    claims one after the other, in the order given (their lease's run
    order, where the batch read their types)."""
    by_lease = collections.OrderedDict()
    for claim in claims:
        by_lease.setdefault(claim.lease_id, []).append(claim)
    for lease_claims in by_lease.values():
        if not engine.submit(_one_by_one, engine, lease_claims, token):
            LOG.info('The engine stops: %d claimed events left for the '
                     'other managers', len(lease_claims))


def _one_by_one(engine, claims, token):
    for claim in claims:
        engine.run_event(claim.event_id, token, claim.lease_id)
