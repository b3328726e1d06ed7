"""The static floating IP backend: records, acts nowhere.

With ``[floatingips] inventory = static`` (the embedded default) the
addresses registered through ``/v1/floatingips`` are taken as given (no
subnet), booked the same way, and the start and end of a reservation
change nothing in a cloud: they only record.
"""

from climate.plugins.virtual_floatingip.backends import base


class StaticFloatingIPBackend(base.FloatingIPBackend):
    name = 'static'
    acts_in_cloud = False

    def subnet_of(self, network_id, address):
        """Any address of any network (there is no cloud to ask)."""
        return None

    def start(self, reservation_id, project_id, network_id, addresses):
        """Nothing to make."""
        return {}

    def end(self, reservation_id, project_id, network_id, addresses):
        """Nothing to take back."""
