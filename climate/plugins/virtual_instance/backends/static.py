"""The static instance backend: records, acts nowhere.

With ``[hosts] inventory = static`` (the embedded default) instance
capacity is booked against the vcpus / memory_mb / local_gb of the
registered hosts; the start and end of a reservation change nothing in a
cloud.  The flavor a user boots with is named after the reservation, as
with Nova, so templates read the same.
"""

from climate import exceptions
from climate.plugins.virtual_instance.backends import base


class StaticInstanceBackend(base.InstanceBackend):
    name = 'static'
    acts_in_cloud = False
    holds_servers = False

    def flavor(self, flavor_id):
        """Refused: without Nova there is no flavor to read."""
        raise exceptions.MalformedParameter(
            param='flavor_id',
            reason='Flavor %s cannot be read: flavor_id needs the nova '
                   'inventory ([hosts] inventory = nova); give vcpus, '
                   'memory_mb and disk_gb instead.' % flavor_id)

    def _ids(self, reservation):
        return {'flavor_id': reservation['id'], 'server_group_id': None,
                'aggregate_id': None}

    def start(self, reservation, project_id, hosts, user_session):
        """Nothing to make: the flavor id is the reservation's."""
        return self._ids(reservation)

    def resize(self, reservation, project_id, hosts, user_session):
        return self._ids(reservation)

    def end(self, reservation, hosts):
        """Nothing to take back."""
