"""What a ``virtual:volume`` backend does (``[volumes] inventory``).

The plugin books capacity in the ledger; a backend knows the pools and
acts in the cloud at the start and at the end of a reservation.  Every
action is idempotent: an event that runs again must finish the job, not
do it twice.
"""

import abc


class VolumeBackend(abc.ABC):
    #: The ``[volumes] inventory`` value it serves.
    name = None
    #: Whether start/end call a cloud service (see ``ResourcePlugin``).
    acts_in_cloud = True

    def __init__(self, conf):
        self.conf = conf

    @abc.abstractmethod
    def pools(self):
        """The pools of the inventory: a list of dicts (``name``,
        ``backend``, ``total_capacity_gb``, ``reserved_percentage``,
        ``max_over_subscription_ratio``, ``capabilities``)."""

    @abc.abstractmethod
    def volume_type(self, name):
        """The volume type ``name`` (empty: the default): ``dict(id,
        name, extra_specs)``.

        :raises climate.exceptions.InvalidInput: naming ``volume_type``
            when the cloud has no such type.
        """

    @abc.abstractmethod
    def start(self, reservation, project_id, pool, user_session):
        """Hand the reservation over at its start: create its pre-created
        volumes as the user (scheduler hint ``reservation=<id>``; found
        again by their metadata ``climate:reservation=<id>``).

        :param pool: the pool the reservation holds (a pool dict), or
            None.
        :param user_session: a callable returning the user's session.
        :returns: ``dict(volume_ids=[...])``.
        """

    def publish(self, reservation, project_id, pool):
        """Tell the cloud what an active reservation is now (a new end, a
        grown ``size_gb`` or ``count``); nothing by default."""

    @abc.abstractmethod
    def end(self, reservation, on_end):
        """Take the reservation back: detach, then ``delete``,
        ``snapshot`` (an image of each volume, then delete) or ``retain``
        (hand it to the project) each of its volumes.

        :returns: ``dict(image_ids=[...])``.
        """

    def check(self):
        """Raise when the backend cannot work (health)."""
