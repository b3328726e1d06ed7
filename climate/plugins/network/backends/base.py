"""What a ``network`` backend does (``[networks] inventory``).

The plugin books the segments in the ledger; a backend acts in the cloud
at the start and at the end of a reservation.  Every action is
idempotent: an event that runs again must finish the job, not do it
twice.
"""

import abc


class NetworkBackend(abc.ABC):
    #: The ``[networks] inventory`` value it serves.
    name = None
    #: Whether start/end call a cloud service (see ``ResourcePlugin``).
    acts_in_cloud = True

    def __init__(self, conf):
        self.conf = conf

    @abc.abstractmethod
    def start(self, reservation_id, project_id, segment, name,
              description=None):
        """Make the reservation's network: a network of ``project_id``
        named ``name`` on ``segment`` (``network_type``,
        ``physical_network``, ``segment_id``), tagged with the
        reservation (one already there for it is kept).

        :returns: the cloud's network id, or None (nothing made).
        :raises climate.exceptions.CloudUnavailable: the event is
            retried.
        """

    @abc.abstractmethod
    def end(self, reservation_id, project_id, segment, network_id=None):
        """Delete the reservation's network (``network_id``, or the one
        tagged with the reservation) with what it can of its ports,
        router interfaces and subnets; one already gone is fine.

        :returns: a sentence per thing the cloud refused to delete (the
            end completes all the same; the reservation shows them).
        :raises climate.exceptions.CloudUnavailable: the cloud failed;
            the event is retried.
        """

    def check(self):
        """Raise when the backend cannot work (health)."""
