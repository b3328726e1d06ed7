"""Maintenance windows (microversion 1.16): an operator takes hosts out
for a window, and says what becomes of the leases it hits.

``POST /v1/maintenance-windows`` names hosts (ids or hypervisor names,
or the filters a host reservation takes) and a window.  Every booking on
those hosts over the window is a lease it *hits*, and for each one the
answer offers what can be done:

``move``
    Its allocation moves to another free host that its reservation's
    filters match, outside the window's hosts (a host reservation that
    has not started).
``shorten``
    The lease ends when the window starts (one that starts before it).
``leave``
    The lease keeps the host, and the window does not take that host.

With ``dry_run`` the answer is the plan and nothing is written.  Without
it every hit lease needs an action (``actions``, per lease id, or
``default_action``), and the window is applied in one transaction: the
actions, then a lease of the operator's project booking the hosts left
over the window (``maintenance: <name>``), in the same ledger as every
lease: a booking made meanwhile, or an action that cannot be done any
more, refuses the whole request (409) and nothing is changed.  Once it
is written no lease can book those hosts over the window, each hit
lease's project is told (``climate.lease.maintenance``, and the lease's
``status_reason`` says what was done), and the calendars show the
window as the operator's lease.  ``DELETE`` cancels a window: its lease
is deleted, the hosts are free again.
"""

import json

from oslo_config import cfg
from oslo_log import log as logging
import oslo_messaging as messaging

from climate import dates
from climate.db import api as db_api
from climate.db import hosts as db_hosts
from climate.db import maintenance as db_maintenance
from climate import exceptions
from climate import fields
from climate.lease import input as lease_input
from climate import states

LOG = logging.getLogger(__name__)
CONF = cfg.CONF

HOST_TYPE = 'physical:host'
MOVE = 'move'
SHORTEN = 'shorten'
LEAVE = 'leave'
ACTIONS = (MOVE, SHORTEN, LEAVE)
FIELDS = ('name', 'start_date', 'end_date', 'reason', 'hosts',
          'hypervisor_properties', 'resource_properties', 'actions',
          'default_action', 'dry_run')
#: The status of a window in force, and of one cancelled.
APPLIED = 'APPLIED'
CANCELLED = 'CANCELLED'
LEASE_PREFIX = 'maintenance: '


def _invalid(reason):
    return exceptions.InvalidInput(reason=reason)


def _host_list(value):
    if not isinstance(value, list) or not value or not all(
            isinstance(h, (str, int)) and not isinstance(h, bool)
            for h in value):
        raise _invalid('hosts is a list of host ids or hypervisor '
                       'hostnames')
    return [str(h) for h in value]


class MaintenanceService:
    """Plans, applies and cancels maintenance windows."""

    def __init__(self, leases, plugins, notifier=None):
        self.leases = leases
        self.plugins = plugins
        self.notifier = notifier

    def _host_plugin(self):
        return self.plugins.get(HOST_TYPE)

    # -- reading ---------------------------------------------------------

    def list(self, ctx):
        return [db_maintenance.view(r) for r in db_maintenance.listing(ctx)]

    def get(self, ctx, window_id):
        return db_maintenance.view(db_maintenance.get(ctx, window_id))

    # -- what is asked ---------------------------------------------------

    def _parse(self, ctx, body, now):
        fields.object_of(body, 'a maintenance window', FIELDS)
        missing = [f for f in ('name', 'start_date', 'end_date')
                   if body.get(f) in (None, '')]
        if missing:
            raise exceptions.MissingParameter(param=', '.join(missing))
        name = lease_input.check_name(
            body['name'], CONF.api.max_name_length - len(LEASE_PREFIX))
        start = lease_input.check_start(
            dates.parse(body['start_date'], 'start_date', now), now)
        end = dates.parse(body['end_date'], 'end_date', now)
        lease_input.check_window(start, end)
        reason = body.get('reason')
        if reason is not None and (not isinstance(reason, str) or
                                   len(reason) > 1000):
            raise _invalid('reason is a text of at most 1000 characters')
        dry_run = body.get('dry_run', False)
        if not isinstance(dry_run, bool):
            raise _invalid('dry_run is true or false, not %r' % (dry_run,))
        actions = body.get('actions') or {}
        if not isinstance(actions, dict) or any(
                a not in ACTIONS for a in actions.values()):
            raise _invalid('actions maps lease ids to one of %s' %
                           ', '.join(ACTIONS))
        default = body.get('default_action')
        if default is not None and default not in ACTIONS:
            raise _invalid('default_action is one of %s, not %r' % (
                ', '.join(ACTIONS), default))
        hosts = self._hosts(ctx, body)
        return {'name': name, 'start': start, 'end': end, 'reason': reason,
                'dry_run': dry_run, 'actions': actions, 'default': default,
                'hosts': hosts}

    def _hosts(self, ctx, body):
        """``{host id: name}`` of the window's hosts."""
        by_filter = any(body.get(k) not in (None, '') for k in (
            'hypervisor_properties', 'resource_properties'))
        if (body.get('hosts') is not None) == by_filter:
            raise _invalid('name the hosts (hosts) or give filters '
                           '(hypervisor_properties, resource_properties), '
                           'one of them')
        rows = {h.id: h for h in db_hosts.all_hosts(ctx)}
        if by_filter:
            params = self._host_plugin().validate({
                'min': 1, 'max': 1,
                'hypervisor_properties': body.get('hypervisor_properties')
                or '', 'resource_properties': body.get(
                    'resource_properties') or ''})
            ids = set(self._host_plugin().matching(ctx, params))
            if not ids:
                raise _invalid('no reservable host matches the filters')
        else:
            by_name = {h.hypervisor_hostname: h.id for h in rows.values()}
            ids, unknown = set(), []
            for ref in _host_list(body['hosts']):
                if ref.isdigit() and int(ref) in rows:
                    ids.add(int(ref))
                elif ref in by_name:
                    ids.add(by_name[ref])
                else:
                    unknown.append(ref)
            if unknown:
                raise exceptions.NotFound(
                    message='Host %s could not be found. No host of the '
                            'inventory has this id or hypervisor hostname.'
                            % ', '.join(unknown), kind='Host',
                    id=', '.join(unknown))
        return {i: rows[i].hypervisor_hostname for i in sorted(ids)}

    # -- the plan --------------------------------------------------------

    def _hits(self, ctx, asked, now):
        """``{lease id: hit}`` of the leases booked on the window's hosts
        over it: the lease's row, its bookings there and the actions
        possible."""
        hits = {}
        for booking, res, lease in db_maintenance.bookings_on(
                ctx, sorted(asked['hosts']), asked['start'], asked['end']):
            hit = hits.setdefault(lease.id, {
                'lease': lease, 'bookings': [], 'reservations': {}})
            hit['bookings'].append(booking)
            hit['reservations'][res.id] = res
        for hit in hits.values():
            hit['options'] = self._options(ctx, hit, asked, now)
        return hits

    def _options(self, ctx, hit, asked, now):
        lease = hit['lease']
        options = {LEAVE: {'hosts': sorted({
            asked['hosts'][b.host_id]
            for b in hit['bookings']})}}
        started = lease.status not in (states.PENDING, states.INACTIVE)
        if lease.start_date < asked['start'] and asked['start'] > now:
            options[SHORTEN] = {'end_date': dates.format(asked['start'])}
        whole = all(b.resource_class == db_maintenance.WHOLE and
                    self.plugins.get(hit['reservations'][
                        b.reservation_id].resource_type) is
                    self._host_plugin() for b in hit['bookings'])
        if whole and not started and lease.start_date > now:
            plugin = self._host_plugin()
            moves = {}
            for b in hit['bookings']:
                new = plugin.free_host_for(
                    ctx, hit['reservations'][b.reservation_id], b.id,
                    asked['hosts'])
                if new is None:
                    moves = None
                    break
                moves[asked['hosts'][b.host_id]] = \
                    new
            if moves:
                names = {h.id: h.hypervisor_hostname
                         for h in db_hosts.hosts_by_ids(
                             ctx, sorted(set(moves.values())))}
                options[MOVE] = {'hosts': {old: names.get(new, new)
                                           for old, new in moves.items()}}
        return options

    @staticmethod
    def _hit_view(hit, action=None, done=None):
        lease = hit['lease']
        view = {'lease_id': lease.id, 'name': lease.name,
                'project_id': lease.project_id, 'status': lease.status,
                'start_date': dates.format(lease.start_date),
                'end_date': dates.format(lease.end_date),
                'options': hit['options'], 'action': action}
        if done is not None:
            view['done'] = done
        return view

    def _plan_view(self, asked, hits):
        return {'name': asked['name'], 'reason': asked['reason'],
                'start_date': dates.format(asked['start']),
                'end_date': dates.format(asked['end']),
                'hosts': [{'id': str(i), 'name': n}
                          for i, n in sorted(asked['hosts'].items())],
                'affected': [self._hit_view(
                    hit, asked['actions'].get(lease_id) or asked['default'])
                    for lease_id, hit in sorted(hits.items())],
                'dry_run': True}

    # -- applying ----------------------------------------------------------

    def create(self, ctx, body):
        """The plan (``dry_run``), or the window applied; returns its
        view."""
        now = dates.utcnow()
        asked = self._parse(ctx, body, now)
        if asked['dry_run']:
            return self._plan_view(asked, self._hits(ctx, asked, now))
        # the leases hit, without their options (each a free-host search)
        hit = {lease.id for _b, _r, lease in db_maintenance.bookings_on(
            ctx, sorted(asked['hosts']), asked['start'], asked['end'])}
        unknown = sorted(set(asked['actions']) - hit)
        if unknown:
            raise _invalid('actions name leases the window does not hit: '
                           '%s' % ', '.join(unknown))
        window_id, notices, updates = self._apply(ctx, asked, now)
        for change in updates:
            self.leases.updated(ctx, change)
        for lease_view, entry in notices:
            if self.notifier is not None:
                self.notifier.send_maintenance(ctx, lease_view, entry)
        LOG.info('Maintenance window %s (%s) applied: hosts %s from %s to '
                 '%s UTC, %d lease(s) hit', window_id, asked['name'],
                 ', '.join(asked['hosts'].values()),
                 dates.format(asked['start']), dates.format(asked['end']),
                 len(notices))
        # the notices are due; what a shortened lease gave back may be
        # what others wait for
        self.leases.wake()
        self.leases.released()
        return self.get(ctx, window_id)

    @db_api.retry_on_deadlock
    def _apply(self, ctx, asked, now):
        notices, updates, affected = [], [], []
        with db_api.writer(ctx) as session:
            hits = self._hits(ctx, asked, now)
            left_out = set()
            for lease_id, hit in sorted(hits.items()):
                action = asked['actions'].get(lease_id) or asked['default']
                if action is None:
                    raise exceptions.MaintenanceUnresolved(
                        name=asked['name'], leases=', '.join(
                            '%s (%s, project %s: %s)' % (
                                h['lease'].id, h['lease'].name,
                                h['lease'].project_id,
                                ', '.join(sorted(h['options'])))
                            for h in hits.values()))
                if action not in hit['options']:
                    raise exceptions.MaintenanceActionImpossible(
                        name=asked['name'], lease=lease_id, action=action,
                        why='its options are %s (a dry_run says what each '
                            'does)' % ', '.join(sorted(hit['options'])))
                lease = db_api.lease_get(ctx, lease_id, for_update=True)
                done = self._act(ctx, lease, hit, action, asked, now,
                                 updates, left_out)
                lease.status_reason = ('maintenance window %s (%s to %s '
                                       'UTC): %s' % (
                                           asked['name'],
                                           _short(asked['start']),
                                           _short(asked['end']), done))
                # told to its project and its webhooks by the engine, once
                self.leases.add_notice(lease, now)
                db_api.flush(ctx)
                entry = self._hit_view(hit, action, done)
                affected.append(entry)
                notices.append((lease_id, entry))
            hosts = {i: n for i, n in asked['hosts'].items()
                     if i not in left_out}
            if not hosts:
                raise exceptions.MaintenanceNothingLeft(name=asked['name'])
            holder = self._book(ctx, asked, hosts)
            row = db_maintenance.insert(session, {
                'name': asked['name'], 'reason': asked['reason'],
                'project_id': ctx.project_id, 'user_id': ctx.user_id,
                'start_date': asked['start'], 'end_date': asked['end'],
                'hosts': [{'id': str(i), 'name': n}
                          for i, n in sorted(hosts.items())],
                'lease_id': holder, 'affected': affected,
                'status': APPLIED})
            window_id = row.id
        views_ = [(self.leases.get(ctx, lease_id), entry)
                  for lease_id, entry in notices]
        return window_id, views_, updates

    def _act(self, ctx, lease, hit, action, asked, now, updates, left_out):
        """Do ``action`` to the hit ``lease`` (locked); returns what was
        done, in words."""
        if action == LEAVE:
            hosts = {b.host_id for b in hit['bookings']}
            left_out |= hosts
            return 'left on host(s) %s, which the window does not take' % (
                ', '.join(sorted(asked['hosts'][h] for h in hosts)))
        if action == SHORTEN:
            updates.append(self.leases.update_locked(
                ctx, lease, {'end_date': dates.format(asked['start'])}, now))
            return 'shortened to end at %s UTC' % _short(asked['start'])
        moved = []
        plugin = self._host_plugin()
        by_id = {r.id: r for r in lease.reservations}
        for b in hit['bookings']:
            new = plugin.move_off(ctx, lease, by_id[b.reservation_id], b.id,
                                  asked['hosts'])
            if new is None:
                raise exceptions.MaintenanceActionImpossible(
                    name=asked['name'], lease=lease.id, action=MOVE,
                    why='no free matching host is left for it')
            moved.append((asked['hosts'][b.host_id],
                          new))
        names = {h.id: h.hypervisor_hostname for h in db_hosts.hosts_by_ids(
            ctx, sorted({new for _old, new in moved}))}
        return 'moved from %s' % ', '.join(
            '%s to %s' % (old, names.get(new, new)) for old, new in moved)

    def _book(self, ctx, asked, hosts):
        """The operator's lease booking ``hosts`` over the window, in the
        caller's transaction; returns its id."""
        names = sorted(hosts.values())
        values = lease_input.parse_create({
            'name': LEASE_PREFIX + asked['name'],
            'start_date': dates.format(asked['start']),
            'end_date': dates.format(asked['end']),
            'reservations': [{
                'resource_type': HOST_TYPE, 'min': len(names),
                'max': len(names),
                'hypervisor_properties': _exactly(names),
                'resource_properties': ''}]},
            asked['start'], CONF.api.max_name_length,
            CONF.manager.minutes_before_end_lease)
        validated = self.leases.validated(ctx, values['reservations'])
        view, _due = self.leases.write_new(ctx, values, validated, None)
        return view['id']

    # -- cancelling ------------------------------------------------------

    def delete(self, ctx, window_id):
        """Cancel: the window's lease deleted (its hosts free again); the
        window kept, CANCELLED.  What it did to other leases stays."""
        row = db_maintenance.get(ctx, window_id)
        if row.status == CANCELLED:
            return
        if row.lease_id is not None:
            try:
                self.leases.delete(ctx, row.lease_id)
            except exceptions.LeaseNotFound:
                pass  # deleted as a lease already
        db_maintenance.cancel(ctx, window_id)
        LOG.info('Maintenance window %s (%s) cancelled', window_id, row.name)


def _short(when):
    return dates.format(when)[:16].replace('T', ' ')


def _exactly(names):
    """A hypervisor filter matching exactly the hosts named."""
    return json.dumps(['in', '$hypervisor_hostname'] + list(names))


user_errors = messaging.expected_exceptions(exceptions.ClimateException)


class MaintenanceEndpoint:
    """What the API may call about maintenance windows (administrators'
    only: authorization is the API's job)."""

    target = messaging.Target(version='1.0')

    def __init__(self, service):
        self.service = service

    @user_errors
    def maintenance_list(self, ctx):
        return self.service.list(ctx)

    @user_errors
    def maintenance_get(self, ctx, window_id):
        return self.service.get(ctx, window_id)

    @user_errors
    def maintenance_create(self, ctx, body):
        return self.service.create(ctx, body)

    @user_errors
    def maintenance_delete(self, ctx, window_id):
        self.service.delete(ctx, window_id)
