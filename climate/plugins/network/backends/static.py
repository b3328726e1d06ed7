"""The static network backend: records, acts nowhere.

With ``[networks] inventory = static`` (the embedded default) the
segments registered through ``/v1/networks`` are booked the same way and
the start and end of a reservation change nothing in a cloud.
"""

from climate.plugins.network.backends import base


class StaticNetworkBackend(base.NetworkBackend):
    name = 'static'
    acts_in_cloud = False

    def start(self, reservation_id, project_id, segment, name,
              description=None):
        """Nothing to make."""
        return None

    def end(self, reservation_id, project_id, segment, network_id=None):
        """Nothing to take back."""
        return []
