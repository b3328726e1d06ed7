"""The contract between the lease service and a resource plugin.

A plugin owns one ``resource_type`` (``physical:host``, ``virtual:instance``,
...).  The lease service calls it at fixed moments:

* ``validate`` before anything is written, to check and normalize the
  reservation parameters the user sent;
* ``reserve`` / ``update`` / ``delete`` inside the transaction that writes
  the lease, so whatever the plugin allocates in SQL commits or rolls back
  with the lease;
* ``on_start`` / ``before_end`` / ``on_end`` from the event engine, inside
  the transaction that marks the event done;
* ``heal`` periodically.

Actions at start and end must be idempotent: after a crash, an event whose
transaction never committed runs again on another manager, and must finish
the job rather than fail or do it twice.  ``lease`` is a typed value
(``climate.plugins.values.Lease``: ids, status, and its dates as
datetimes), ``event`` one too (``values.Event``), ``reservation`` as
well (``values.Reservation``: its ids, status and flags as attributes,
its stored parameters in ``params``; ``as_dict()`` gives the flat dict a
backend takes); ``ctx`` carries the transaction.

Whose credentials a plugin uses:

* acting **as the user** (waking or booting the project's instances,
  creating its stack at start): ``self.user_session(lease)``, a
  keystoneauth session of Climate's service user scoped to the lease's
  Keystone trust, with impersonation, so Nova or Heat see the lease's
  creator in the lease's project.  ``climate.clients.nova.client(sess)``
  turns it into a Nova client.  It raises ``climate.exceptions.NoTrust``
  for a lease made without Keystone (``noauth``), and keystoneauth errors
  when the trust cannot be redeemed (trustor disabled, trust deleted);
* **operator** actions (aggregates, moving hosts, anything the user may not
  do) and everything at the end: ``self.service_session()``, Climate's own
  ``[service_auth]`` credentials.  ``on_end`` must never depend on the
  trust: a lease whose creator was disabled or whose trust was deleted
  still ends and gives everything back.  The lease service deletes the
  trust itself once the lease ends or is deleted.
"""

import abc

from climate.clients import keystone
from climate import exceptions


class ResourcePlugin(abc.ABC):
    """Base class of resource plugins (entry points in
    ``climate.resource.plugins``)."""

    #: The ``resource_type`` of reservations this plugin handles.
    resource_type = None
    #: Human-readable description, listed by the API.
    description = ''
    #: Whether ``on_start`` / ``before_end`` / ``on_end`` call a cloud
    #: service.  The event engine commits the lease's STARTING or
    #: TERMINATING state before such calls, so that it is visible while
    #: they run; an event whose plugins only write SQL runs in a single
    #: transaction instead, as nothing could observe that state.
    acts_in_cloud = True
    #: Whether the capacity this plugin books is Climate's alone (hosts
    #: taken out of the cloud's common pool), so that a booking is a
    #: guarantee; false where the cloud's other users draw on the same
    #: pool, so that a booking is a prediction (a ``scheduled`` lease's
    #: answer says which, ``climate.lease.types``).
    capacity_guaranteed = True

    def __init__(self, owner=None):
        #: Name of the manager process that loaded the plugin (for logs).
        self.owner = owner

    @staticmethod
    def user_session(lease):
        """A keystoneauth session acting as the lease's creator, through
        the lease's trust, in the lease's project.

        Each call authenticates anew (redeems the trust): build it once per
        action, not per request.
        :raises climate.exceptions.NoTrust: the lease holds no trust.
        """
        if not lease.trust_id:
            raise exceptions.NoTrust(lease_id=lease.id)
        return keystone.trust_session(lease.trust_id)

    @staticmethod
    def service_session():
        """Climate's own keystoneauth session (``[service_auth]``), for
        operator actions and for reclaiming at the end."""
        return keystone.service_session()

    @abc.abstractmethod
    def validate(self, params):
        """Check the parameters of a reservation request.

        :param params: the reservation dict from the user, without
            ``resource_type``.
        :returns: the normalized parameters to store.
        :raises climate.exceptions.InvalidInput: naming the bad field.
        """

    def validate_change(self, current, changes):
        """Check an update's ``changes`` to a reservation whose stored
        parameters are ``current`` (both without ``resource_type``).

        Default: :meth:`validate` of ``current`` overlaid with
        ``changes``.  A plugin that stores parameters of its own making
        overrides it, to tell what the user asked from what it stored.
        :returns: the normalized parameters to store.
        """
        return self.validate(dict(current, **changes))

    def params_with_id(self, params, reservation_id):
        """The validated ``params`` of a new reservation once it has its
        id (stored and shown from the create's answer on).  Default:
        unchanged."""
        return params

    def check(self, ctx, params, current=None):
        """Checks of a request that need its caller (``ctx``, with its
        Keystone token when there is one), run after :meth:`validate` or
        :meth:`validate_change` and before anything is written: a cloud
        service asked as the user (Heat validating a stack's template).
        Default: nothing.

        :param current: on an update, the reservation's stored parameters
            (what the service checked already), else None.

        :raises climate.exceptions.InvalidInput: with the service's
            reason.
        """

    def parts(self, params):
        """The reservations that hold what this one needs, booked in the
        same lease and granted or refused with it (a stack's servers,
        volumes and floating IPs): a list of ``(label, request)``, where
        ``request`` is a reservation request with its ``resource_type``
        (checked by that type's plugin) and ``label`` says what it stands
        for in the user's words (an error about it starts with it).
        Each part is stored with ``part_of``, this reservation's id
        (shown as ``stack_reservation_id``).  Default: none.
        """
        return []

    def with_parts(self, params, part_ids):
        """The parameters to store once the parts of :meth:`parts` have
        their ids (``part_ids``, in the same order).  Default:
        unchanged."""
        return params

    def needs_changed(self, old, new):
        """Whether parameters ``new`` (from :meth:`validate_change`) hold
        other parts than ``old``: the lease service then books the parts
        anew.  Default: never."""
        return False

    def active_parts(self, params, old, parts):
        """For an *active* reservation whose new parameters ``params``
        (from :meth:`validate_change`; ``old`` the stored ones) hold other
        parts (:meth:`needs_changed`): which of its started ``parts``
        (``climate.plugins.values.Reservation`` values) meets each
        request of :meth:`parts`, as a list of ``(label, part id,
        request)`` in that order; the lease service
        updates each part with its request (its own plugin's rules for an
        active reservation) in the update's transaction.  Default: an
        active reservation's parts never change (409).

        :raises climate.exceptions.Conflict: saying what cannot change.
        """
        raise exceptions.InvalidState(
            kind='Reservation', id=old.get('id'), status='active',
            reason='the parts of an active reservation cannot change')

    def prepare(self, ctx, lease, reservation):
        """Make in the cloud what the reservation shows its users before
        it starts (called after the transaction that created it, or that
        changed it, has committed; a plugin acts on the states it knows).
        Default: nothing.

        A failure here never undoes the lease: the start makes whatever
        is missing.
        """

    @abc.abstractmethod
    def reserve(self, ctx, lease, reservation):
        """Allocate what ``reservation`` asks for over the lease window.

        Runs in the lease-creation transaction.  Returns the resource id to
        store on the reservation, or None.
        :raises climate.exceptions.Conflict: not enough resources.
        """

    @abc.abstractmethod
    def update(self, ctx, old_lease, lease, reservation, new_params):
        """Apply new dates and/or parameters to an existing reservation.

        Runs in the lease-update transaction; on failure the lease stays as
        it was.  Returns the parameters to store.
        """

    @abc.abstractmethod
    def delete(self, ctx, lease, reservation):
        """Release what ``reserve`` allocated (the lease is being deleted)."""

    @abc.abstractmethod
    def on_start(self, ctx, lease, reservation, event):
        """Hand the resources to the lease's project (idempotent).

        ``event`` is the start event (``id``, ``event_type``, ``time``,
        ``attempts``): a retry has ``attempts > 1``.
        """

    @abc.abstractmethod
    def on_end(self, ctx, lease, reservation, event=None):
        """Take the resources back (idempotent, never depends on the user).

        ``event`` is the end event, or None when a lease is deleted early.
        """

    def before_end(self, ctx, lease, reservation, event):
        """Act before the end (notice, snapshot...).  Default: nothing."""

    def in_use(self, ctx, lease, reservation):
        """Whether anything uses the started reservation now (idle
        reclaim, ``climate.manager.idle``): True, False, or None when the
        plugin cannot tell (a lease it cannot tell about is never
        reclaimed).  Read from the same backend as the start and end
        actions.  Default: None."""
        return None

    #: Whether :meth:`start_waits_for` may hold a start back: the event
    #: engine asks only then (a burst of starts is its hot path).
    waits_at_start = False

    def start_waits_for(self, ctx, lease, reservation, now):
        """Why the reservation's resources cannot be handed over yet (a
        sentence: "host(s) c1 (waking) to boot"), or None.

        A start that a plugin holds back waits, unclaimed and costing no
        attempt, its lease ``STARTING`` with the reason, and is tried again
        a few seconds later.  A plugin must stop holding it back after a
        bounded time.  Default: never.
        """
        return None

    def start_gave_up_on(self, ctx, lease, reservation, now):
        """What the start of a lease that waited no longer waits for
        though it is still not ready, once :meth:`start_waits_for` has
        stopped holding it back (a sentence: "host(s) c1 (waking) did not
        boot within ..."), or None: the lease's reason says it started
        without it rather than once it was ready.  Default: nothing."""
        return None

    def heal(self, ctx):
        """Repair reservations whose resources failed.

        Returns the ids of the reservations it changed.  Default: nothing.
        """
        return []
