"""Deletes the Keystone trusts that ending or deleting a lease left behind.

Ending a lease never waits for Keystone (reclaiming does not depend on the
trust), so a trust Keystone could not delete at that moment stays named on
the TERMINATED lease; each pass of the sweeper tries again and clears the
id once the trust is gone.

With ``[manager] sweep_orphan_trusts`` it also deletes trusts held by
Climate's service user that no lease names: a manager that died between
creating a trust and committing its lease, or between deleting a lease and
its trust, leaves one.  Keystone does not say when a trust was made, so a
trust is deleted only when two passes in a row found it unused: a lease
whose create is still in flight commits long before the next pass.

Several managers may sweep at once: deleting a trust twice is harmless.
"""

from oslo_config import cfg
from oslo_log import log as logging

from climate.clients import keystone
from climate import context as climate_context
from climate.db import api as db_api
from climate.manager import trusts
from climate.manager.workers import periodic

LOG = logging.getLogger(__name__)
CONF = cfg.CONF


class TrustSweeper(periodic.PeriodicTask):
    """A periodic pass in its own thread (see the module's docstring)."""

    name = 'climate-trust-sweeper'

    def __init__(self, conf=None):
        super().__init__()
        self.conf = conf or CONF
        self._suspects = set()

    def interval(self):
        if not trusts.enabled(self.conf):
            return 0
        return self.conf.manager.trust_sweep_interval

    def run_once(self):
        """One pass; returns the ids of the trusts it deleted."""
        ctx = climate_context.admin_context()
        deleted = []
        for lease_id, trust_id in db_api.leases_with_spent_trust(ctx):
            if trusts.delete(trust_id, lease_id, conf=self.conf):
                db_api.lease_forget_trust(ctx, lease_id, trust_id)
                deleted.append(trust_id)
        if self.conf.manager.sweep_orphan_trusts:
            deleted.extend(self._sweep_orphans(ctx))
        if deleted:
            LOG.info('Trust sweeper deleted %d trust(s)', len(deleted))
        return deleted

    def _sweep_orphans(self, ctx):
        # read Keystone first: a trust made after this read is not judged
        held = keystone.trusts_held(self.conf)
        unused = held - db_api.trust_ids_in_use(ctx)
        deleted = [trust_id for trust_id in sorted(unused & self._suspects)
                   if trusts.delete(trust_id, None, conf=self.conf)]
        self._suspects = unused - set(deleted)
        return deleted
