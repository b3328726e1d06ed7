"""Books the occurrences of recurring series as the horizon reaches them
(``climate.manager.series``).

Every manager runs a :class:`SeriesWorker`.  A pass takes the live
series whose next occurrence starts within ``[leases] series_horizon``
and books it (``SeriesService.extend``), one occurrence per transaction
that also advances the series' row: of two managers one makes it and
the other conflicts on the row or on the unique key ``(series_id,
occurrence)`` and finds it made, on Galera too.  A series that still has
occurrences within the horizon comes again in the same pass.  Then it
deletes the trusts of the series that are over.  Between passes a worker
sleeps until the next occurrence enters the horizon, at most
``[leases] series_poll_interval``.
"""

import datetime

from oslo_config import cfg
from oslo_log import log as logging

from climate import context as climate_context
from climate import dates
from climate.db import series as db_series
from climate.manager import outages
from climate.manager.workers import base as worker_base

LOG = logging.getLogger(__name__)
CONF = cfg.CONF

#: Most series one pass looks at, and most occurrences it books of one
#: series (the next pass comes at once when more are due).
BATCH = 50


class SeriesWorker(worker_base.Worker):
    """The series' horizons in one manager."""

    name = 'climate-series'
    failure = 'Pass over the recurring series failed'

    def __init__(self, series):
        super().__init__()
        self.series = series
        self._ctx = climate_context.admin_context()

    def work(self):
        return self.run_pass(self._ctx) >= BATCH

    def due_in(self):
        def entering():
            start = db_series.next_start(self._ctx)
            if start is None:
                return None
            return start - datetime.timedelta(
                seconds=CONF.leases.series_horizon)
        # at least a second: a series that fails stays due, and is tried
        # again at the next pass, not in a loop
        return self.seconds_until(entering, CONF.leases.series_poll_interval,
                                  floor=1.0,
                                  what='the next occurrence to book')

    def run_pass(self, ctx, now=None):
        """Book what the horizon reached; returns how many changes this
        pass made (occurrences booked, skipped, series stopped).  A series
        that fails (a plugin raised) is logged and tried again at the next
        pass; a lost database fails the pass."""
        now = now or dates.utcnow()
        changes = 0
        for series_id in db_series.due(ctx, now + datetime.timedelta(
                seconds=CONF.leases.series_horizon), BATCH):
            for _ in range(BATCH):
                if self._stopping.is_set():
                    return changes
                try:
                    if not self.series.extend(ctx, series_id, now):
                        break
                except Exception as exc:
                    if outages.is_database_outage(exc):
                        raise
                    LOG.exception('Could not book the next occurrence of '
                                  'lease series %s; trying again at the '
                                  'next pass', series_id)
                    break
                changes += 1
        self.series.sweep_trusts(ctx)
        return changes
