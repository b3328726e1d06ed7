"""What a ``virtual:floatingip`` backend does (``[floatingips] inventory``).

The plugin books the addresses in the ledger; a backend checks a new
registration against the cloud and acts there at the start and at the
end of a reservation.  Every action is idempotent: an event that runs
again must finish the job, not do it twice.
"""

import abc


class FloatingIPBackend(abc.ABC):
    #: The ``[floatingips] inventory`` value it serves.
    name = None
    #: Whether start/end call a cloud service (see ``ResourcePlugin``).
    acts_in_cloud = True

    def __init__(self, conf):
        self.conf = conf

    @abc.abstractmethod
    def subnet_of(self, network_id, address):
        """Check that ``address`` (canonical text) of ``network_id`` may
        be registered: the network is an external one and the address
        lies in one of its subnets, outside what the cloud hands out by
        itself.

        :returns: the id of the subnet holding it, or None.
        :raises climate.exceptions.InvalidInput: naming what is wrong
            (FloatingIPNetworkNotFound, NeutronUsesFloatingIP,
            FloatingIPSubnetNotFound).
        :raises climate.exceptions.CloudUnavailable: the cloud failed.
        """

    @abc.abstractmethod
    def start(self, reservation_id, project_id, network_id, addresses):
        """Hand the addresses over: make each a floating IP of
        ``project_id`` with that exact address, tagged with the
        reservation (one already there for the reservation is kept).

        :param addresses: ``[(address, subnet_id or None)]``.
        :returns: ``{address: the cloud's floating IP id}``.
        :raises climate.exceptions.CloudUnavailable: the event is
            retried.
        """

    @abc.abstractmethod
    def end(self, reservation_id, project_id, network_id, addresses):
        """Take the addresses back: disassociate each floating IP of the
        reservation from its port, then delete it (one already gone is
        fine).

        :param addresses: ``[address]``.
        :raises climate.exceptions.CloudUnavailable: the event is
            retried.
        """

    def check(self):
        """Raise when the backend cannot work (health)."""
