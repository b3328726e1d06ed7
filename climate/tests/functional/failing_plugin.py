"""A resource plugin that fails on purpose, for the retry tests.

Reservations of type ``failing`` take ``fail_start_attempts`` and
``fail_end_attempts`` (integers, default 0): the start (end) event fails
while its attempt number is at most that many, then behaves like the noop
plugin.  The attempt number comes from the event, so every manager agrees
on it without shared state.

Before failing, it writes a ``noop_actions`` row (``failed_start`` /
``failed_end``) in the event's transaction: a failure must roll it back, so
the tests can check that a failed attempt leaves nothing half-written.

It is registered as a real entry point (``climate.resource.plugins``:
``failing``) by :func:`install_entry_point`, which writes a minimal
``*.dist-info`` into a directory the test puts on the managers'
``PYTHONPATH``; nothing is installed into the environment.
"""

import os

from climate import exceptions
from climate.plugins.noop import plugin as noop

ENTRY_POINT_GROUP = 'climate.resource.plugins'
NAME = 'failing'


class FailingPlugin(noop.NoopPlugin):
    resource_type = 'failing'
    description = 'Fails its first start/end attempts (functional tests).'

    _COUNTERS = ('fail_start_attempts', 'fail_end_attempts')

    def validate(self, params):
        params = super().validate(params)
        for key in self._COUNTERS:
            value = params.get(key, 0)
            if not isinstance(value, int) or isinstance(value, bool) or \
                    value < 0:
                raise exceptions.InvalidInput(
                    reason='reservations.%s must be a non-negative integer'
                           % key)
            params[key] = value
        return params

    def _maybe_fail(self, ctx, what, lease, reservation, event):
        attempt = event.attempts if event else 1
        if attempt <= reservation.params.get('fail_%s_attempts' % what, 0):
            self._record(ctx, 'failed_%s' % what, lease, reservation,
                         event.id if event else None)
            raise RuntimeError('failing plugin: %s attempt %d of lease %s '
                               'refused on purpose' % (what, attempt,
                                                       lease.id))

    def on_start(self, ctx, lease, reservation, event):
        self._maybe_fail(ctx, 'start', lease, reservation, event)
        super().on_start(ctx, lease, reservation, event)

    def on_end(self, ctx, lease, reservation, event=None):
        self._maybe_fail(ctx, 'end', lease, reservation, event)
        super().on_end(ctx, lease, reservation, event)


def install_entry_point(directory):
    """Make ``failing`` a plugin entry point for processes that have
    ``directory`` on their ``PYTHONPATH``; returns ``directory``."""
    info = os.path.join(directory, 'climate_functional_failing-0.dist-info')
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, 'METADATA'), 'w') as f:
        f.write('Metadata-Version: 2.1\nName: climate-functional-failing\n'
                'Version: 0\n')
    with open(os.path.join(info, 'entry_points.txt'), 'w') as f:
        f.write('[%s]\n%s = %s:FailingPlugin\n' % (ENTRY_POINT_GROUP, NAME,
                                                   __name__))
    return directory
