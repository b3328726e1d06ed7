"""Idle reclaim (microversion 1.17): started leases nothing uses are
warned, then ended early (the rules: ``climate.lease.idle``).

Opt-in, per project: an administrator sets a project's policy (``PUT
/v1/idle-policies/{project_id}``: ``warn_after``, ``end_after``, the
``resource_types`` it covers), or ``[idle] default_warn_after`` covers
every project without one.  With ``[idle] enabled`` each manager's
:class:`climate.manager.workers.idle.IdleWorker` looks at the started
leases every ``[idle] poll_interval`` seconds: each covered reservation's
plugin says whether anything uses it (``ResourcePlugin.in_use``: a server
on its hosts, read from Nova as the start and end actions are).

- Used: the lease's ``last_used_at`` is set, a warning cleared.
- Unused for ``warn_after`` since then (or since its start): warned,
  once: ``idle_warned_at``, its ``status_reason`` says when it ends
  unless used, and a ``notification`` event the engine sends to the
  project as a notification and to its webhooks.
- Unused for ``end_after``, warned: ended early (its end moved to a
  second from now, as ``PUT /v1/leases/{id}`` would, so the end event
  takes its resources back), ``idle_ended_at`` set (so that the managers
  that come after leave it), its ``status_reason`` saying why.

Each step is one transaction that locks the lease and checks it again,
so of several managers one acts and the others find it done, on Galera
too (both write the lease's row).  A lease created with ``keep_idle`` is
never reclaimed, nor one a plugin cannot read (``None``).
"""

import datetime

from oslo_config import cfg
from oslo_log import log as logging
import oslo_messaging as messaging

from climate import dates
from climate.db import api as db_api
from climate.db import idle as db_idle
from climate import exceptions
from climate.lease import idle as idle_rules
from climate.plugins import values as plugin_values
from climate import states

LOG = logging.getLogger(__name__)
CONF = cfg.CONF

#: How far ahead an idle lease's end is moved (the end event then runs).
END_LEAD = datetime.timedelta(seconds=1)


def _short(when):
    return dates.format(when)[:16].replace('T', ' ')


class IdleService:
    """Idle policies, and the look at one lease."""

    def __init__(self, leases, plugins):
        self.leases = leases
        self.plugins = plugins

    # -- policies --------------------------------------------------------

    def policy_list(self, ctx):
        return [db_idle.view(r) for r in db_idle.listing(ctx)]

    def policy_get(self, ctx, project_id):
        """The project's own policy, else the operator's default (marked
        ``default``), else NotFound."""
        if not ctx.is_admin and project_id != ctx.project_id:
            raise self._not_found(project_id)
        row = db_idle.get(ctx, project_id)
        if row is not None:
            return dict(db_idle.view(row), default=False)
        policy = self._default()
        if policy is None:
            raise self._not_found(project_id)
        return {'project_id': project_id,
                'resource_types': policy.resource_types,
                'warn_after': policy.warn_after,
                'end_after': policy.end_after, 'default': True,
                'created_at': None, 'updated_at': None}

    @staticmethod
    def _not_found(project_id):
        return exceptions.NotFound(
            message='Project %s has no idle policy, and the operator sets '
                    'none by default: its leases are never reclaimed.' %
                    project_id, kind='Idle policy', id=project_id)

    def policy_set(self, ctx, project_id, body):
        values = idle_rules.parse_policy(body)
        LOG.info('Idle policy of project %s set: %s', project_id, values)
        return dict(db_idle.put(ctx, project_id, values), default=False)

    def policy_delete(self, ctx, project_id):
        if not db_idle.delete(ctx, project_id):
            raise exceptions.NotFound(
                message='Project %s has no idle policy of its own.' %
                project_id, kind='Idle policy', id=project_id)
        LOG.info('Idle policy of project %s removed', project_id)

    @staticmethod
    def _default():
        if not CONF.idle.default_warn_after:
            return None
        return idle_rules.Policy(
            None, CONF.idle.default_warn_after,
            max(CONF.idle.default_end_after, 0))

    def policy_for(self, ctx, project_id):
        row = db_idle.get(ctx, project_id)
        if row is not None:
            return idle_rules.Policy(row.resource_types, row.warn_after,
                                     row.end_after)
        return self._default()

    def watched(self, ctx):
        """The leases a pass looks at: every started one when a default
        covers every project, else those of the projects with a
        policy."""
        if self._default() is not None:
            return db_idle.watched(ctx)
        return db_idle.watched(ctx, {r.project_id
                                     for r in db_idle.listing(ctx)})

    # -- the look at one lease -------------------------------------------

    def check(self, ctx, lease_id, now):
        """Look at a started lease; returns what was done
        (``climate.lease.idle``'s USED, WARN, END...), None when it is
        not watched."""
        lease = db_api.lease_get(ctx, lease_id)
        if lease.status != states.ACTIVE or lease.keep_idle or \
                lease.idle_ended_at is not None:
            return None
        policy = self.policy_for(ctx, lease.project_id)
        if policy is None:
            return None
        value = plugin_values.Lease.of(lease)
        readings = [
            self.plugins.get(res.resource_type).in_use(
                ctx, value, res_value)
            for res, res_value in plugin_values.reservation_pairs(lease)
            if res.status == states.RES_ACTIVE and
            idle_rules.covers(policy, res.resource_type)]
        decision = idle_rules.decide(policy, readings, lease.last_used_at,
                                     lease.start_date, lease.idle_warned_at,
                                     now)
        if decision.action == idle_rules.USED:
            self._used(ctx, lease_id, now)
        elif decision.action == idle_rules.WARN:
            if self._warn(ctx, lease_id, policy, decision.idle_since, now):
                self.leases.wake()
        elif decision.action == idle_rules.END:
            change = self._end(ctx, lease_id, policy, decision.idle_since,
                               now)
            if change is None:
                return None
            self.leases.updated(ctx, change)
        return decision.action

    @db_api.retry_on_deadlock
    def _used(self, ctx, lease_id, now):
        with db_api.writer(ctx):
            lease = db_api.lease_get(ctx, lease_id, for_update=True)
            if lease.idle_ended_at is not None:
                return  # its end is on its way
            lease.last_used_at = now
            if lease.idle_warned_at is not None:
                lease.idle_warned_at = None
                lease.status_reason = None
                LOG.info('Lease %s is used again: its idle warning is '
                         'withdrawn', lease_id)
            db_api.flush(ctx)

    @db_api.retry_on_deadlock
    def _warn(self, ctx, lease_id, policy, since, now):
        with db_api.writer(ctx):
            lease = db_api.lease_get(ctx, lease_id, for_update=True)
            if lease.status != states.ACTIVE or lease.keep_idle or \
                    lease.idle_warned_at is not None:
                return False  # another manager warned it, or it moved on
            lease.idle_warned_at = now
            ends = ('; it ends at %s UTC unless used' % _short(
                since + datetime.timedelta(seconds=policy.end_after))
                if policy.end_after else '')
            lease.status_reason = (
                'idle since %s UTC: nothing uses its reservations%s' % (
                    _short(since), ends))
            # told to its project and its webhooks by the engine, once
            self.leases.add_notice(lease, now)
            db_api.flush(ctx)
        LOG.warning('Lease %s warned: idle since %s UTC', lease_id,
                    _short(since))
        return True

    @db_api.retry_on_deadlock
    def _end(self, ctx, lease_id, policy, since, now):
        with db_api.writer(ctx):
            lease = db_api.lease_get(ctx, lease_id, for_update=True)
            if lease.status != states.ACTIVE or lease.keep_idle or \
                    lease.idle_warned_at is None or \
                    lease.idle_ended_at is not None or \
                    lease.end_date <= now + END_LEAD:
                return None  # used again, ended, or by another manager
            lease.idle_ended_at = now
            lease.status_reason = (
                'ended early by idle reclaim: nothing used its reservations '
                'since %s UTC (its project\'s policy ends a lease idle for '
                '%d s)' % (_short(since), policy.end_after))
            change = self.leases.update_locked(
                ctx, lease, {'end_date': dates.format(now + END_LEAD)}, now)
        LOG.warning('Lease %s ended early: idle since %s UTC', lease_id,
                    _short(since))
        return change


user_errors = messaging.expected_exceptions(exceptions.ClimateException)


class IdleEndpoint:
    """What the API may call about idle policies."""

    target = messaging.Target(version='1.0')

    def __init__(self, service):
        self.service = service

    @user_errors
    def idle_policy_list(self, ctx):
        return self.service.policy_list(ctx)

    @user_errors
    def idle_policy_get(self, ctx, project_id):
        return self.service.policy_get(ctx, project_id)

    @user_errors
    def idle_policy_set(self, ctx, project_id, body):
        return self.service.policy_set(ctx, project_id, body)

    @user_errors
    def idle_policy_delete(self, ctx, project_id):
        self.service.policy_delete(ctx, project_id)
