"""The static volume backend: records, acts nowhere.

With ``[volumes] inventory = static`` (the embedded default) volume
capacity is booked against the pools the operator declares through
``/v1/volume-pools``; the start and end of a reservation change nothing
in a cloud: they only record (the volume ids stay empty).
"""

from climate import context
from climate.db import volume_pools as db_pools
from climate import exceptions
from climate.plugins.virtual_volume.backends import base


class StaticVolumeBackend(base.VolumeBackend):
    name = 'static'
    acts_in_cloud = False

    def pools(self):
        """The pools declared to Climate."""
        return db_pools.pool_list(context.admin_context())

    def volume_type(self, name):
        """Any non-empty name (there is no cloud to ask), or the
        default."""
        if name is None or name == '':
            name = self.conf.volumes.default_volume_type or None
            return {'id': None, 'name': name, 'extra_specs': {}}
        if not isinstance(name, str) or not name.strip() or len(name) > 255:
            raise exceptions.MalformedParameter(
                param='volume_type',
                reason='volume_type is the name of a volume type (a '
                       'non-empty string of at most 255 characters), not '
                       '%r.' % (name,))
        return {'id': None, 'name': name, 'extra_specs': {}}

    def start(self, reservation, project_id, pool, user_session):
        """Nothing to make."""
        return {'volume_ids': []}

    def end(self, reservation, on_end):
        """Nothing to take back."""
        return {'image_ids': []}
