"""The noop plugin: reserves nothing, records everything.

It exists to exercise the lease machinery without a cloud: every action it
is asked to run becomes one row in ``noop_actions``, written in the same
transaction as the lease change or event that caused it.  Counting those
rows is how the tests prove each event ran exactly once.
"""

from climate.db import api as db_api
from climate import exceptions
from climate.plugins import base

# Scalar parameters are kept as given; they mean nothing to this plugin.
_SCALARS = (str, int, float, bool, type(None))
_MAX_PARAMS = 32
_MAX_TEXT = 255


class NoopPlugin(base.ResourcePlugin):
    resource_type = 'noop'
    description = 'Reserves nothing; records each action (for testing).'
    acts_in_cloud = False

    def validate(self, params):
        if len(params) > _MAX_PARAMS:
            raise exceptions.InvalidInput(
                reason='a noop reservation takes at most %d parameters' %
                _MAX_PARAMS)
        for key, value in params.items():
            if not isinstance(value, _SCALARS):
                raise exceptions.InvalidInput(
                    reason='reservations.%s must be a string, number, '
                           'boolean or null' % key)
            if isinstance(value, str) and len(value) > _MAX_TEXT:
                raise exceptions.InvalidInput(
                    reason='reservations.%s is longer than %d characters' %
                    (key, _MAX_TEXT))
        return dict(params)

    def _record(self, ctx, action, lease, reservation, event_id=None):
        db_api.noop_action_record(
            ctx, action=action, lease_id=lease.id,
            reservation_id=reservation.id, event_id=event_id,
            manager=self.owner)

    def reserve(self, ctx, lease, reservation):
        self._record(ctx, 'reserve', lease, reservation)
        return None

    def update(self, ctx, old_lease, lease, reservation, new_params):
        self._record(ctx, 'update', lease, reservation)
        return new_params

    def delete(self, ctx, lease, reservation):
        self._record(ctx, 'delete', lease, reservation)

    def on_start(self, ctx, lease, reservation, event):
        self._record(ctx, 'on_start', lease, reservation, event.id)

    def on_end(self, ctx, lease, reservation, event=None):
        self._record(ctx, 'on_end', lease, reservation,
                     event.id if event else None)

    def before_end(self, ctx, lease, reservation, event):
        self._record(ctx, 'before_end', lease, reservation, event.id)
