"""climate-manager: the RPC endpoint, the lease service and the engine."""

import os
import socket

import oslo_messaging as messaging
from oslo_config import cfg
from oslo_log import log as logging

from climate import context as climate_context
from climate import dates
from climate import exceptions
from climate.manager import billing
from climate.manager import floatingips
from climate.manager import hosts
from climate.manager import idempotency
from climate.manager import idle
from climate.manager import instances
from climate.manager import leases
from climate.manager import maintenance
from climate.manager import networks
from climate.manager import outages
from climate.manager import plugins as plugin_registry
from climate.manager import quotas
from climate.manager import rpcapi
from climate.manager import series
from climate.manager import usage
from climate.manager import volume_pools
from climate.manager import webhooks
from climate.manager.workers import body_filler
from climate.manager.workers import delivery
from climate.manager.workers import events
from climate.manager.workers import holds
from climate.manager.workers import hunts
from climate.manager.workers import idle as idle_worker
from climate.manager.workers import power as power_planner
from climate.manager.workers import retries
from climate.manager.workers import series as series_worker
from climate.manager.workers import trust_sweeper
from climate.notifications import lease as lease_notifications
from climate import rpc

LOG = logging.getLogger(__name__)
CONF = cfg.CONF


def _parse_query_dates(filters):
    for key in ('time_from', 'time_to'):
        if filters.get(key):
            filters[key] = dates.parse_output(filters[key])
    return filters


# Errors a caller made are answered, not logged as manager failures.
_user_errors = messaging.expected_exceptions(exceptions.ClimateException)


class ManagerEndpoint:
    """What the API may call; every method takes the caller's context.

    1.1: ``create_lease`` takes an ``idempotency_key``; ``ping``.
    1.2: ``released``.
    1.3: ``confirm_lease`` (temporary holds, ``climate.lease.holds``).
    """

    target = messaging.Target(version='1.3')

    def __init__(self, service):
        self.leases = service.leases
        self.plugins = service.plugins
        self.engine = service.engine
        self.retries = service.retries
        self.power_planner = service.power_planner
        self.host = service.host

    @_user_errors
    def list_leases(self, ctx, query):
        query = dict(query)
        query['filters'] = _parse_query_dates(dict(query.get('filters') or
                                                   {}))
        return self.leases.list(ctx, **query)

    @_user_errors
    def get_lease(self, ctx, lease_id):
        return self.leases.get(ctx, lease_id)

    @_user_errors
    def create_lease(self, ctx, body, idempotency_key=None):
        if idempotency_key is None:
            return self.leases.create(ctx, body)
        return idempotency.create_once(self.leases, ctx, body,
                                       idempotency_key)

    @_user_errors
    def confirm_lease(self, ctx, lease_id):
        """1.3: a temporary hold becomes its lease."""
        return self.leases.confirm(ctx, lease_id)

    @_user_errors
    def update_lease(self, ctx, lease_id, body):
        return self.leases.update(ctx, lease_id, body)

    @_user_errors
    def delete_lease(self, ctx, lease_id):
        self.leases.delete(ctx, lease_id)

    def list_plugins(self, ctx):
        return self.plugins.describe()

    def wake(self, ctx):
        self.engine.wake()
        # a lease due soon may need a sleeping host woken now
        self.power_planner.wake()

    def released(self, ctx):
        """1.2: capacity was released (a lease ended, was deleted or gave
        back what its failed start held)."""
        self.retries.released()
        self.engine.wake()

    def ping(self, ctx):
        """A round trip over the message bus (the detailed health check);
        touches nothing else."""
        return {'manager': self.host}


class ManagerService:
    """Everything one climate-manager process runs."""

    def __init__(self, host=None):
        self.host = host or '%s-%s' % (socket.gethostname(),
                                       os.getpid())
        self.plugins = plugin_registry.Registry(CONF.manager.plugins,
                                                owner=self.host)
        notifier = lease_notifications.LeaseNotifier(self.host)
        self.engine = events.EventEngine(self.host, self.plugins, notifier,
                                         wake_all=self._wake_all)
        self._fanout = None
        self.hunter = hunts.Hunter(self.plugins)
        self.leases = leases.LeaseService(
            self.plugins, notifier, self._wake_all, self._released_all,
            lambda: self.retries.wake(), self.hunter,
            lambda: self.hunts.wake(), lambda: self.holds.wake())
        self.retries = retries.RetryWorker(self.leases)
        self.hunts = hunts.HuntWorker(self.leases, self.hunter)
        self.holds = holds.HoldWorker(self.leases)
        self.series = series.SeriesService(self.leases, notifier)
        self.series_worker = series_worker.SeriesWorker(self.series)
        self.maintenance = maintenance.MaintenanceService(
            self.leases, self.plugins, notifier)
        self.idle = idle.IdleService(self.leases, self.plugins)
        # runs only with [idle] enabled
        self.idle_worker = idle_worker.IdleWorker(self.idle)
        self.engine.capacity_released = self._released_all
        self.engine.hunter = self.hunter
        self._server = None
        self.healer = hosts.Healer(self.plugins)
        self.trust_sweeper = trust_sweeper.TrustSweeper()
        self.body_filler = body_filler.BodyFiller()
        self.key_purger = idempotency.KeyPurger()
        # runs only with [power] enabled
        self.power_planner = power_planner.PowerPlanner()
        self.webhooks = delivery.DeliveryWorker(self.host)
        # a notice the engine ran is sent at once by this manager
        self.engine.deliveries_recorded = self.webhooks.wake

    def _wake_all(self):
        self.engine.wake()
        self.power_planner.wake()
        self._tell_all('wake_all')

    def _released_all(self):
        self.retries.released()
        self.engine.wake()
        self._tell_all('released_all')

    def _tell_all(self, method):
        try:
            if self._fanout is None:
                self._fanout = rpcapi.ManagerAPI()
            getattr(self._fanout, method)(climate_context.admin_context())
        except Exception as exc:
            # the message bus is away: the other managers look on their own
            # within [manager] max_sleep
            LOG.warning('Could not tell the other managers (%s): %s', method,
                        str(exc).splitlines()[0] if str(exc) else
                        type(exc).__name__)

    def start(self):
        """Start serving RPC and running events."""
        # a lost database is answered 503, whatever the endpoint
        self._server = rpc.get_server(self.host, [
            outages.guard(ManagerEndpoint(self)),
            outages.guard(hosts.HostsEndpoint(self.plugins)),
            outages.guard(instances.InstancesEndpoint(self.plugins)),
            outages.guard(volume_pools.VolumePoolsEndpoint(self.plugins)),
            outages.guard(floatingips.FloatingIPsEndpoint(self.plugins)),
            outages.guard(networks.NetworksEndpoint(self.plugins)),
            outages.guard(webhooks.WebhooksEndpoint()),
            outages.guard(series.SeriesEndpoint(self.series)),
            outages.guard(maintenance.MaintenanceEndpoint(self.maintenance)),
            outages.guard(idle.IdleEndpoint(self.idle)),
            outages.guard(usage.UsageEndpoint()),
            outages.guard(quotas.QuotasEndpoint()),
            outages.guard(billing.BillingEndpoint())])
        self._server.start()
        self.engine.start()
        self.healer.start()
        self.trust_sweeper.start()
        self.body_filler.start()
        self.key_purger.start()
        self.power_planner.start()
        self.webhooks.start()
        self.retries.start()
        self.hunts.start()
        self.holds.start()
        self.series_worker.start()
        self.idle_worker.start()
        LOG.info('climate-manager %s started (plugins: %s)', self.host,
                 ', '.join(CONF.manager.plugins))

    def stop(self):
        """Stop taking RPC calls and events; finish the running ones."""
        if self._server is not None:
            self._server.stop()
        self.healer.stop()
        self.trust_sweeper.stop()
        self.body_filler.stop()
        self.key_purger.stop()
        self.power_planner.stop()
        self.retries.stop()
        self.hunts.stop()
        self.holds.stop()
        self.series_worker.stop()
        self.idle_worker.stop()
        self.engine.stop()
        # after the engine: its last events' deliveries are claimed or left
        # pending for the other managers
        self.webhooks.stop()
        if self._server is not None:
            self._server.wait()
        LOG.info('climate-manager %s stopped', self.host)
