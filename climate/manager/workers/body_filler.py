"""Stores the listing body of leases that have none, in the background.

Leases written before bodies were stored, or whose bodies an upgrade
cleared because their shape changed, are listed all the same (the listing
renders them, :mod:`climate.db.lease_json`), only more slowly; a pass
stores theirs, a batch at a time, until none is left, and then the filler
stops: leases get their body when they are written, so only an upgrade
(which restarts the managers) leaves some without, and looking for them
is a scan of the whole table.  Several managers may fill at once:
rendering a body twice is harmless.
"""

from oslo_config import cfg
from oslo_log import log as logging

from climate import context as climate_context
from climate.db import api as db_api
from climate.manager.workers import periodic

LOG = logging.getLogger(__name__)
CONF = cfg.CONF

#: Leases per transaction.
BATCH = 500


class BodyFiller(periodic.PeriodicTask):
    """A periodic pass in its own thread (see the module's docstring)."""

    name = 'climate-body-filler'

    def __init__(self, conf=None):
        super().__init__()
        self.conf = conf or CONF
        #: True once a pass found no lease without a body.
        self.finished = False

    def interval(self):
        return self.conf.manager.lease_body_fill_interval

    def run_once(self):
        """One pass, until no lease lacks a body or the manager stops;
        returns how many bodies it stored."""
        ctx = climate_context.admin_context()
        stored = 0
        while not self._stopping.is_set():
            done = db_api.lease_bodies_fill(ctx, BATCH)
            stored += done
            if done < BATCH:
                self.finished = True
                self._stopping.set()  # no further passes
                break
        if stored:
            LOG.info('Stored the listing body of %d lease(s)', stored)
        return stored
