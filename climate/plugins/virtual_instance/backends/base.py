"""The contract between ``virtual:instance`` and the cloud it acts in.

The plugin books instance slots in the capacity ledger
(``climate.db.ledger``) and calls a backend at the lease's start, when an
active reservation changes (grown, healed) and at its end.  Every method
is idempotent: the event engine retries a failed event, and an event
whose manager crashed runs again on another one, so a method must finish
what an earlier run began rather than fail or do it twice.  Failures of
the cloud are raised as ``climate.exceptions.CloudUnavailable`` (the
event is retried with backoff).
"""

import abc

from climate import exceptions

#: Prefix of what a reservation makes in the cloud (Blazar's): the
#: flavor's name ``reservation:<id>``, the aggregate metadata key.
RESERVATION_PREFIX = 'reservation'


def resource_class(reservation_id):
    """The per-reservation custom resource class of Placement (Blazar's
    spelling): ``CUSTOM_RESERVATION_<ID>``, upper case, ``-`` as ``_``."""
    return 'CUSTOM_RESERVATION_' + reservation_id.upper().replace('-', '_')


def flavor_name(reservation_id):
    """The name of the private flavor of a reservation."""
    return '%s:%s' % (RESERVATION_PREFIX, reservation_id)


def refuse_servers(param):
    """The 400 of an inventory without servers (the static one)."""
    return exceptions.MalformedParameter(
        param=param,
        reason='Pre-created instances (server_id, server) need the nova '
               'inventory ([hosts] inventory = nova); without it, reserve '
               'capacity (amount, vcpus, memory_mb, disk_gb).')


class InstanceBackend(abc.ABC):
    """What ``virtual:instance`` does in the cloud."""

    #: ``[hosts] inventory`` this backend serves: 'nova' or 'static'.
    name = None
    #: Whether start/resize/end call a cloud service (the event engine
    #: then commits the lease's STARTING/TERMINATING state first).
    acts_in_cloud = True
    #: Whether it can hold pre-created servers (``server_id``, ``server``).
    holds_servers = True

    def __init__(self, conf):
        self.conf = conf

    @abc.abstractmethod
    def flavor(self, flavor_id):
        """The shape of an existing flavor, for a reservation given as
        ``flavor_id`` (Blazar's ``flavor:instance``), read with the
        service's credentials.

        :returns: ``dict(id, vcpus, memory_mb, disk_gb, resources={class:
            amount} or {}, traits={'required': [...], 'forbidden':
            [...]})``; ``disk_gb`` counts the ephemeral disk too.
        :raises climate.exceptions.InvalidInput: no such flavor (the
            reason names its id), or the inventory cannot read flavors.
        """

    @abc.abstractmethod
    def start(self, reservation, project_id, hosts, user_session):
        """Hand the reserved slots to the project.

        :param reservation: the reservation view (``id``, ``amount``,
            ``vcpus``, ``memory_mb``, ``disk_gb``, ``affinity``,
            ``resource_properties``, ``flavor_id`` -- the *source* flavor
            when the reservation was given as one, else None --,
            ``source_flavor``: its ``flavor()`` answer or None, and
            ``slots_held``: true when servers Climate places itself hold
            the slots, with their own flavor -- a woken stack's -- so
            that the reservation's flavor must boot nothing into them).
        :param project_id: the lease's project.
        :param hosts: ``[(host facts, units)]``: the facts of each booked
            host as ``climate.plugins.physical_host.plugin.host_facts``
            gives them, and how many slots are booked on it.
        :param user_session: zero-argument callable returning a
            keystoneauth session acting as the lease's user through its
            trust (may raise ``climate.exceptions.NoTrust``).
        :returns: ``dict(flavor_id=..., server_group_id=...,
            aggregate_id=...)``, None where nothing was made; stored on
            the reservation.
        """

    @abc.abstractmethod
    def resize(self, reservation, project_id, hosts, user_session):
        """An active reservation's hosts or units changed (grown, healed):
        bring the cloud to ``hosts`` (same arguments and answer as
        :meth:`start`)."""

    def prepare(self, reservation, project_id, user_session):
        """What users may use before the start (the reservation's flavor,
        its server group...), made when the reservation is created or
        its pending shape changes; same answer as :meth:`start`.
        Idempotent.  Default: :meth:`start` with no host."""
        return self.start(reservation, project_id, [], user_session)

    @abc.abstractmethod
    def end(self, reservation, hosts):
        """Take everything back, with the service's credentials only:
        the servers built with the reservation's flavor (in every
        project), then the flavor, server group, aggregate, Placement
        inventories, providers and resource class.  Pieces already gone
        are fine.

        :param hosts: as for :meth:`start`.
        """

    # -- pre-created servers (seed 000) -------------------------------------

    def server(self, server_id):
        """An existing server, for a reservation given as ``server_id``,
        read with the service's credentials.

        :returns: ``dict(id, project_id, status, flavor=<flavor() answer
            of its flavor>)``.
        :raises climate.exceptions.InvalidInput: no such server (the
            reason names its id), or the inventory cannot read servers.
        """
        raise refuse_servers('server_id')

    def boot(self, reservation, project_id, user_session):
        """Boot the reservation's ``server`` request as the lease's user
        (through its trust), once: a server of the project carrying the
        reservation's metadata is found again instead of booted twice.

        :returns: the server's id.
        """
        raise NotImplementedError()

    def hold(self, reservation):
        """Keep the reservation's server shelved (offloaded) until the
        start: shelve it when it is active or stopped; nothing when it is
        shelved already or still building.

        :returns: ``dict(server_status=..., server_error=...)``;
            ``server_error`` says what is wrong (deleted...) or is None.
        """
        raise NotImplementedError()

    def wake(self, reservation, project_id, host, user_session,
             move_running=False):
        """Unshelve the server onto ``host`` (its facts), the host its
        capacity is booked on, and wait until it runs there.  With
        ``move_running``, a server running on another host is shelved
        first (a stack's server the periodic pass had not shelved yet);
        without, it is left there and reported.

        :returns: ``dict(server_status=..., server_error=...,
            aggregate_id=...)``; a server deleted meanwhile is answered
            with ``server_error``, not raised.
        """
        raise NotImplementedError()

    def release(self, reservation):
        """The reservation's ``on_end`` action on its server (``delete``,
        ``shelve`` or ``snapshot`` then delete; or ``keep``, Climate's own:
        nothing) and the removal of what :meth:`wake` made; a server
        already gone is fine.

        :returns: ``dict(server_status=..., snapshot_id=...)``.
        """
        raise NotImplementedError()

    def discard(self, reservation):
        """Delete the server Climate booted for a reservation whose lease
        is deleted before its start, without waiting for Nova to finish
        (it runs in the delete's transaction); a server already gone is
        fine."""
        raise NotImplementedError()
