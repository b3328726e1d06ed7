"""Recurring leases (microversion 1.15): a series books its occurrences
as leases (``climate.lease.recurrence`` holds the rule).

- **Create** (``POST /v1/lease-series``): a lease create body with a
  ``recurrence``; every occurrence starting within ``[leases]
  series_horizon`` (the first at least) is booked in one transaction,
  each a lease named ``<name> #<n>`` with ``series_id`` and
  ``occurrence``.  An occurrence that does not fit (capacity, the
  project's quota, a taken name) refuses the whole create with
  ``on_conflict`` refuse; with ``skip`` the transaction is run again
  without it and it is listed in ``skipped``.  Nothing is ever half
  written.
- **The horizon moves**: each manager's
  :class:`climate.manager.workers.series.SeriesWorker` books the next
  occurrence of a series once it starts within the horizon, one
  occurrence per transaction that also advances the series' row: of two
  managers (on two nodes of a Galera cluster too) one writes and the
  other conflicts on the row, or on the unique key ``(series_id,
  occurrence)``, and finds it made.  One that does not fit is skipped
  (``skip``) or stops the series (``refuse``: ``STOPPED``, the reason
  said); either is notified.
- **Update from an occurrence on** (``PUT``): the occurrences from
  ``from_occurrence`` on that have not started are deleted and booked
  again at the new times (``start_date``/``end_date`` of that
  occurrence) and/or with the new rule, in one transaction.
- **Cancel** (``DELETE``): the occurrences not yet started are deleted;
  a running one runs to its end (delete it as any lease); the series is
  ``CANCELLED`` and kept for its history.

Under Keystone the series has one trust, which its occurrences share; it
is deleted once the series is over and none of its occurrences is left
to run (:meth:`SeriesService.sweep_trusts`).
"""

import datetime

from oslo_config import cfg
from oslo_log import log as logging
import oslo_messaging as messaging

from climate import context as climate_context
from climate import dates
from climate.db import api as db_api
from climate.db import series as db_series
from climate import exceptions
from climate import fields
from climate.lease import idle as idle_rules
from climate.lease import input as lease_input
from climate.lease import recurrence
from climate.lease import types as lease_types
from climate.manager import quotas
from climate.manager import trusts
from climate.notifications import lease as lease_notifications
from climate import states

LOG = logging.getLogger(__name__)
CONF = cfg.CONF

#: The lease types an occurrence may have (None: no type asked).
SERIES_TYPES = (None, lease_types.SCHEDULED)
#: Fields of a lease create a series does not take.
REFUSED_FIELDS = ('max_retries', 'hold_for')
#: Statuses of an occurrence that has not started (an update or a
#: cancel may delete it).
NOT_STARTED = frozenset({states.PENDING, states.INACTIVE})
#: What makes an occurrence one that "cannot be booked".
REFUSALS = (exceptions.CapacityRefusal, exceptions.QuotaExceeded,
            exceptions.LeaseNameAlreadyExists)
UPDATE_FIELDS = ('from_occurrence', 'start_date', 'end_date',
                 recurrence.FIELD)


class _Refused(Exception):
    """An occurrence did not fit: the transaction is rolled back."""

    def __init__(self, occurrence, reason):
        super().__init__(reason)
        self.occurrence = occurrence
        self.reason = reason


def _scope(ctx):
    return None if ctx.is_admin else ctx.project_id


def _horizon(now):
    return now + datetime.timedelta(seconds=CONF.leases.series_horizon)


def _rule_of(row):
    return recurrence.from_stored(row.rrule, row.timezone, row.on_conflict)


def _skip_entry(occ, reason):
    return {'occurrence': occ.index, 'start_date': dates.format(occ.start),
            'end_date': dates.format(occ.end), 'reason': reason}


def _first_line(exc):
    return (str(getattr(exc, 'message', None) or exc).splitlines() or
            [type(exc).__name__])[0]


def occurrence_body(template, first_start, occ):
    """The create body of occurrence ``occ`` from the series' ``template``
    (whose dates are its first occurrence's, at ``first_start``): its
    dates, its user events and before-end notice moved as far as it is
    from the first."""
    delta = occ.start - first_start
    body = dict(template, name=recurrence.occurrence_name(
        template['name'], occ.index),
        start_date=dates.format(occ.start), end_date=dates.format(occ.end))
    if template.get('before_end_date'):
        # as far before the end as the first occurrence's
        first_end = dates.parse(template['end_date'], 'end_date')
        before = dates.parse(template['before_end_date'], 'before_end_date')
        body['before_end_date'] = dates.format(occ.end - (first_end -
                                                          before))
    if template.get('events'):
        body['events'] = [
            dict(ev, time=dates.format(dates.parse(ev['time'], 'time') +
                                       delta))
            if isinstance(ev, dict) and ev.get('time') else ev
            for ev in template['events']]
    return body


def status_of(row, occurrences):
    """A live series all of whose occurrences are booked and over is
    FINISHED; any other shows its own state."""
    if row.status == recurrence.LIVE and row.next_start is None and all(
            o.status in states.LEASE_FINISHED for o in occurrences):
        return recurrence.FINISHED
    return row.status


def view(row, occurrences):
    """A series as the API shows it; ``occurrences``: its lease rows
    (``climate.db.series.occurrences``)."""
    return {
        'id': row.id,
        'name': row.name,
        'project_id': row.project_id,
        'user_id': row.user_id,
        'recurrence': {'rrule': row.rrule, 'timezone': row.timezone,
                       'on_conflict': row.on_conflict},
        'status': status_of(row, occurrences),
        'status_reason': row.status_reason,
        # the occurrence the current rule starts at, and its dates
        'first_occurrence': row.first_index,
        'start_date': dates.format(row.first_start),
        'end_date': dates.format(row.first_end),
        'next_occurrence': row.next_index if row.next_start else None,
        'next_start_date': dates.format(row.next_start),
        'occurrences': [{
            'occurrence': o.occurrence, 'lease_id': o.id, 'name': o.name,
            'start_date': dates.format(o.start_date),
            'end_date': dates.format(o.end_date), 'status': o.status}
            for o in occurrences],
        'skipped': list(row.skipped or []),
        'created_at': dates.format_timestamp(row.created_at),
        'updated_at': dates.format_timestamp(row.updated_at),
    }


class SeriesService:
    """What the API and the managers' workers do with series; the leases
    themselves are ``LeaseService``'s."""

    def __init__(self, leases, notifier=None):
        self.leases = leases
        self.notifier = notifier

    # -- reading ---------------------------------------------------------

    def get(self, ctx, series_id):
        row = db_series.get(ctx, series_id, _scope(ctx))
        return view(row, db_series.occurrences(ctx, [row.id])[row.id])

    def list(self, ctx, project_id=None):
        scope = _scope(ctx)
        rows = db_series.listing(ctx, project_id if scope is None
                                 else scope)
        found = db_series.occurrences(ctx, [r.id for r in rows])
        return [view(r, found[r.id]) for r in rows]

    # -- checking what is asked -----------------------------------------

    def _template(self, body, now):
        """``(rule, template body, lease values of its first occurrence,
        lease type)`` of a create body; InvalidInput naming what is
        wrong."""
        if not isinstance(body, dict):
            raise exceptions.InvalidInput(
                reason='the request body is a JSON object: a lease with a '
                       'recurrence')
        if body.get(recurrence.FIELD) is None:
            raise exceptions.MissingParameter(param=recurrence.FIELD)
        refused = [f for f in REFUSED_FIELDS if f in body]
        if refused:
            raise exceptions.InvalidInput(
                reason='%s: not taken by a series (its occurrences are '
                       'leases of lease_type scheduled, or of none)' %
                       ', '.join(refused))
        rule = recurrence.parse(body[recurrence.FIELD],
                                CONF.leases.max_occurrences)
        template = {k: v for k, v in body.items() if k != recurrence.FIELD}
        idle_rules.parse(template)  # keep_idle, when given, is a boolean
        lease_type = template.get('lease_type')
        if lease_type not in SERIES_TYPES:
            raise exceptions.InvalidInput(
                reason='lease_type of a series is scheduled, or none, not '
                       '%r: its occurrences start at their times' %
                       (lease_type,))
        values = self._values(template, now)
        lease_types.check(lease_type, values, now)
        recurrence.check_first(rule, values['start_date'])
        # a start within the current minute is now: the rule's clock is
        # the one asked
        template = dict(template, start_date=dates.format(
            values['start_date']), end_date=dates.format(values['end_date']))
        return rule, template, values, lease_type

    @staticmethod
    def _values(body, now):
        return lease_input.parse_create(
            {k: v for k, v in body.items()
             if k not in ('lease_type', idle_rules.FIELD)}, now,
            CONF.api.max_name_length, CONF.manager.minutes_before_end_lease)

    @staticmethod
    def _check_size(rule, name, start, end):
        made = recurrence.total(rule, start, end, CONF.leases.max_occurrences)
        if made > CONF.leases.max_occurrences:
            raise exceptions.InvalidInput(
                reason='recurrence: the rule makes more than %d occurrences '
                       "(the operator's [leases] max_occurrences); end it "
                       'sooner' % CONF.leases.max_occurrences)
        longest = len(recurrence.occurrence_name(name, made))
        if longest > CONF.api.max_name_length:
            raise exceptions.InvalidInput(
                reason='name: a series of %d occurrences names them "%s", '
                       'at most %d characters; shorten the name' % (
                           made, recurrence.occurrence_name('<name>', made),
                           CONF.api.max_name_length))

    # -- creating --------------------------------------------------------

    def create(self, ctx, body):
        """Validate, book every occurrence within the horizon and store
        the series; all or nothing.  Returns its view."""
        now = dates.utcnow()
        rule, template, values, lease_type = self._template(body, now)
        self._check_size(rule, values['name'], values['start_date'],
                         values['end_date'])
        validated = self.leases.validated(ctx, values['reservations'])
        quotas.approve(ctx, 'create', body)
        trust_id = trusts.create(ctx)
        try:
            row_values = {
                'name': values['name'], 'project_id': ctx.project_id,
                'user_id': ctx.user_id, 'trust_id': trust_id,
                'template': template, 'status': recurrence.LIVE,
                'skipped': [], 'generation': 0}
            series_id, made = self._book_from(
                ctx, None, row_values, rule, 1, values['start_date'],
                values['end_date'], validated, now)
        except BaseException:
            if trust_id:
                trusts.delete(trust_id, '(series not created)')
            raise
        self._announce(ctx, made)
        LOG.info('Lease series %s (%s) created for project %s: %d '
                 'occurrence(s) booked', series_id, values['name'],
                 ctx.project_id, len(made))
        return self.get(ctx, series_id)

    def _announce(self, ctx, made):
        for lease_view, due_times in made:
            self.leases.created(ctx, lease_view, due_times)

    def _book_from(self, ctx, series_id, row_values, rule, first_index,
                   first_start, first_end, validated, now, replaced=None):
        """Write the series (new when ``series_id`` is None, else its row
        changed to ``row_values``) with its occurrences from
        ``first_index`` within the horizon; ``replaced``: the occurrence
        number from which existing ones are deleted first.  With skip,
        run again without each occurrence that did not fit.  Returns
        ``(series id, [(lease view, due times)])``."""
        window = list(self._within_horizon(rule, first_start, first_end,
                                           first_index, now))
        skipped = {}
        while True:
            try:
                return self._write(ctx, series_id, row_values, rule,
                                   first_index, first_start, first_end,
                                   window, skipped, validated, now,
                                   replaced)
            except _Refused as refused:
                occ = refused.occurrence
                if rule.on_conflict == recurrence.REFUSE:
                    raise exceptions.OccurrenceRefused(
                        number=occ.index, name=row_values['name'],
                        start=dates.format(occ.start)[:16].replace('T', ' '),
                        end=dates.format(occ.end)[:16].replace('T', ' '),
                        reason=refused.reason)
                skipped[occ.index] = _skip_entry(occ, refused.reason)
                if len(skipped) == len(window):
                    raise exceptions.NoOccurrenceBooked(
                        name=row_values['name'], reason=refused.reason)

    @staticmethod
    def _within_horizon(rule, first_start, first_end, first_index, now):
        """The occurrences to book now: those starting within the
        horizon, the first one at least."""
        horizon = _horizon(now)
        for occ in recurrence.occurrences(rule, first_start, first_end,
                                          first_index):
            if occ.index > first_index and occ.start >= horizon:
                return
            yield occ

    @db_api.retry_on_deadlock
    def _write(self, ctx, series_id, row_values, rule, first_index,
               first_start, first_end, window, skipped, validated, now,
               replaced):
        template = row_values['template']
        made = []
        with db_api.writer(ctx) as session:
            if series_id is None:
                row = db_series.insert(session, dict(
                    row_values, rrule=rule.text, timezone=rule.timezone,
                    on_conflict=rule.on_conflict, first_index=first_index,
                    first_start=first_start, first_end=first_end,
                    next_index=first_index, next_start=first_start))
            else:
                row = db_series.get(ctx, series_id, for_update=True)
                for key, value in row_values.items():
                    setattr(row, key, value)
                row.rrule, row.timezone = rule.text, rule.timezone
                row.on_conflict = rule.on_conflict
                row.first_index = first_index
                row.first_start, row.first_end = first_start, first_end
            if replaced is not None:
                for lease in db_series.occurrence_leases(ctx, row.id,
                                                         replaced):
                    self._check_replaceable(lease)
                    made.append((self.leases.delete_locked(ctx, lease),
                                 None))
            for occ in window:
                if occ.index in skipped:
                    continue
                made.append(self._write_occurrence(
                    ctx, row, template, first_start, occ, validated, now))
            self._advance(row, rule, first_start, first_end, first_index,
                          window[-1].index + 1 if window else first_index)
            row.skipped = sorted(
                [s for s in row.skipped or []
                 if replaced is None or s['occurrence'] < replaced] +
                list(skipped.values()), key=lambda s: s['occurrence'])
            row.generation = (row.generation or 0) + 1
            session.flush()
            series_id = row.id
        deleted = [v for v, due in made if due is None]
        if deleted:
            self.leases.deleted(ctx, deleted)
        return series_id, [(v, due) for v, due in made if due is not None]

    @staticmethod
    def _check_replaceable(lease):
        if lease.status not in NOT_STARTED or any(
                ev.status == states.IN_PROGRESS for ev in lease.events):
            raise exceptions.InvalidState(
                kind='Occurrence', id='%s (lease %s)' % (lease.occurrence,
                                                        lease.id),
                status=lease.status,
                reason='it has started; update the series from a later '
                       'occurrence')

    def _write_occurrence(self, ctx, row, template, first_start, occ,
                          validated, now):
        """Occurrence ``occ`` booked as a lease in the caller's
        transaction; _Refused when it does not fit."""
        body = occurrence_body(template, first_start, occ)
        values = self._values(body, now)
        values.update(lease_type=template.get('lease_type'),
                      keep_idle=bool(template.get(idle_rules.FIELD)),
                      series_id=row.id, occurrence=occ.index)
        try:
            return self.leases.write_new(ctx, values, validated,
                                         row.trust_id)
        except REFUSALS as exc:
            raise _Refused(occ, _first_line(exc))

    @staticmethod
    def _advance(row, rule, first_start, first_end, first_index,
                 next_index):
        """The series' next occurrence to make: ``next_index``, or none
        left (FINISHED)."""
        following = None
        for following in recurrence.occurrences(
                rule, first_start, first_end, first_index,
                limit=next_index - first_index + 1):
            pass
        if following is None or following.index < next_index:
            # every occurrence is booked: the series runs on, FINISHED
            # once they are over (view)
            row.next_index, row.next_start = next_index, None
        else:
            row.next_index, row.next_start = next_index, following.start

    # -- the horizon moving ----------------------------------------------

    def extend(self, ctx, series_id, now):
        """Book the series' next occurrence if the horizon reaches it.
        Returns True when something changed (booked, skipped, stopped or
        finished), False when there was nothing to do or another manager
        did it."""
        row = db_series.get(ctx, series_id)
        if row.status != recurrence.LIVE or row.next_start is None or \
                row.next_start >= _horizon(now):
            return False
        rule = _rule_of(row)
        occ = self._occurrence(row, rule, row.next_index)
        # the occurrence is the series' project's lease, made as its user
        ctx = climate_context.RequestContext(
            project_id=row.project_id, user_id=row.user_id,
            roles=['member'], trust_id=row.trust_id, overwrite=False,
            request_id=ctx.request_id)
        reason = None
        if occ.start <= now:
            reason = ('its start came before a manager could book it (no '
                      'manager ran within the horizon)')
        else:
            try:
                template = row.template
                validated = self.leases.validated(
                    ctx, self._values(occurrence_body(
                        template, row.first_start, occ), now)[
                            'reservations'], as_caller=False)
                made = self._write_next(ctx, row.id, row.generation, occ,
                                        validated, now)
            except _Refused as refused:
                reason = refused.reason
            except exceptions.OccurrenceExists:
                return False  # another manager booked it
            except exceptions.ClimateException as exc:
                # the template no longer validates (a flavor deleted)
                reason = _first_line(exc)
            else:
                if made is None:
                    return False
                self._announce(ctx, [made])
                LOG.info('Lease series %s: occurrence %d booked (lease %s)',
                         row.id, occ.index, made[0]['id'])
                return True
        return self._skip_next(ctx, row.id, row.generation, occ, reason)

    @staticmethod
    def _occurrence(row, rule, index):
        for occ in recurrence.occurrences(
                rule, row.first_start, row.first_end, row.first_index,
                limit=index - row.first_index + 1):
            if occ.index == index:
                return occ
        return None

    @db_api.retry_on_deadlock
    def _write_next(self, ctx, series_id, generation, occ, validated, now):
        """Occurrence ``occ`` booked and the series advanced, in one
        transaction; None when the series changed since it was read."""
        with db_api.writer(ctx) as session:
            row = db_series.get(ctx, series_id, for_update=True)
            if row.generation != generation or row.next_index != occ.index:
                return None
            made = self._write_occurrence(ctx, row, row.template,
                                          row.first_start, occ, validated,
                                          now)
            self._advance(row, _rule_of(row), row.first_start, row.first_end,
                          row.first_index, occ.index + 1)
            row.generation += 1
            session.flush()
        return made

    @db_api.retry_on_deadlock
    def _skip_next(self, ctx, series_id, generation, occ, reason):
        """An occurrence that cannot be booked: skipped (``skip``) or the
        series STOPPED (``refuse``); either notified."""
        with db_api.writer(ctx) as session:
            row = db_series.get(ctx, series_id, for_update=True)
            if row.generation != generation or row.next_index != occ.index:
                return False
            entry = _skip_entry(occ, reason)
            if row.on_conflict == recurrence.SKIP:
                row.skipped = list(row.skipped or []) + [entry]
                self._advance(row, _rule_of(row), row.first_start,
                              row.first_end, row.first_index, occ.index + 1)
                event = lease_notifications.OCCURRENCE_SKIPPED
            else:
                row.status = recurrence.STOPPED
                row.status_reason = (
                    'occurrence %d (%s UTC) could not be booked: %s' % (
                        occ.index, entry['start_date'][:16].replace(
                            'T', ' '), reason))[:4000]
                row.next_start = None
                event = lease_notifications.SERIES_STOPPED
            row.generation += 1
            session.flush()
            shown = view(row, [])
        LOG.warning('Lease series %s: occurrence %d not booked (%s): %s',
                    series_id, occ.index, row.on_conflict, reason)
        if self.notifier is not None:
            self.notifier.send_series(ctx, event, dict(
                shown, occurrence=entry))
        return True

    # -- updating and cancelling -------------------------------------------

    def update(self, ctx, series_id, body):
        """The series from ``from_occurrence`` on at new times and/or
        with a new rule: its occurrences from there that exist (none may
        have started) deleted and booked again, in one transaction."""
        now = dates.utcnow()
        if not fields.object_of(body, 'a series update', UPDATE_FIELDS):
            raise exceptions.InvalidInput(
                reason='the request body is a JSON object with any of %s' %
                       ', '.join(UPDATE_FIELDS))
        row = db_series.get(ctx, series_id, _scope(ctx))
        if row.status == recurrence.CANCELLED:
            raise exceptions.InvalidState(
                kind='Lease series', id=row.id, status=row.status,
                reason='a cancelled series is not updated; create a new '
                       'one')
        old_rule = _rule_of(row)
        number = body.get('from_occurrence', row.next_index)
        if isinstance(number, bool) or not isinstance(number, int) or \
                not row.first_index <= number <= row.next_index:
            raise exceptions.InvalidInput(
                reason='from_occurrence must be an occurrence number from '
                       '%d to %d (the next one not made yet), not %r' % (
                           row.first_index, row.next_index, number))
        old = self._occurrence(row, old_rule, number)
        if old is None and not ('start_date' in body and 'end_date' in body):
            raise exceptions.InvalidInput(
                reason='the series has no occurrence %d: give its '
                       'start_date and end_date' % number)
        start = dates.parse(body['start_date'], 'start_date', now) \
            if 'start_date' in body else old.start
        end = dates.parse(body['end_date'], 'end_date', now) \
            if 'end_date' in body else old.end
        start = lease_input.check_start(start, now)
        lease_input.check_window(start, end)
        if recurrence.FIELD in body:
            rule = recurrence.parse(body[recurrence.FIELD],
                                    CONF.leases.max_occurrences)
        else:
            rule = self._rest_of(old_rule, row, number)
        recurrence.check_first(rule, start)
        self._check_size(rule, row.name, start, end)
        template = dict(row.template, start_date=dates.format(start),
                        end_date=dates.format(end))
        if template.get('before_end_date'):
            template['before_end_date'] = occurrence_body(
                row.template, row.first_start,
                recurrence.Occurrence(number, start, end))['before_end_date']
        validated = self.leases.validated(
            ctx, self._values(dict(template, name=recurrence.occurrence_name(
                row.name, number)), now)['reservations'])
        quotas.approve(ctx, 'update', body)
        _series_id, made = self._book_from(
            ctx, row.id, {'name': row.name, 'template': template,
                          'status': recurrence.LIVE, 'status_reason': None},
            rule, number, start, end, validated, now, replaced=number)
        self._announce(ctx, made)
        LOG.info('Lease series %s updated from occurrence %d', row.id,
                 number)
        return self.get(ctx, row.id)

    @staticmethod
    def _rest_of(rule, row, number):
        """The stored rule from occurrence ``number`` on: a COUNT counts
        what is left of it."""
        if rule.count is None:
            return rule
        left = rule.count - (number - row.first_index)
        if left < 1:
            raise exceptions.InvalidInput(
                reason='the series has no occurrence %d; give a '
                       'recurrence to continue it' % number)
        text = ';'.join(
            'COUNT=%d' % left if part.upper().startswith('COUNT=') else part
            for part in rule.text.split(';'))
        return rule._replace(text=text, count=left)

    def delete(self, ctx, series_id):
        """Cancel: the occurrences not yet started deleted, the series
        CANCELLED (kept, with its history)."""
        deleted = self._cancel(ctx, series_id)
        LOG.info('Lease series %s cancelled: %d occurrence(s) deleted',
                 series_id, len(deleted))
        if deleted:
            self.leases.deleted(ctx, deleted)
        self.sweep_trusts(ctx)

    @db_api.retry_on_deadlock
    def _cancel(self, ctx, series_id):
        deleted = []
        with db_api.writer(ctx) as session:
            row = db_series.get(ctx, series_id, _scope(ctx), for_update=True)
            for lease in db_series.occurrence_leases(ctx, row.id):
                if lease.status in NOT_STARTED and not any(
                        ev.status == states.IN_PROGRESS
                        for ev in lease.events):
                    deleted.append(self.leases.delete_locked(ctx, lease))
            row.status, row.status_reason = recurrence.CANCELLED, None
            row.next_start = None
            row.generation += 1
            session.flush()
        return deleted

    def sweep_trusts(self, ctx):
        """Delete the trusts of series that are over; returns their
        ids."""
        done = []
        for series_id, trust_id in db_series.spent_trusts(ctx):
            if trusts.delete(trust_id, 'series %s' % series_id):
                db_series.forget_trust(ctx, series_id, trust_id)
                done.append(trust_id)
        return done


user_errors = messaging.expected_exceptions(exceptions.ClimateException)


class SeriesEndpoint:
    """What the API may call about lease series (authorization is the
    API's job; scoping to the caller's project is the service's)."""

    target = messaging.Target(version='1.0')

    def __init__(self, service):
        self.service = service

    @user_errors
    def series_list(self, ctx, project_id=None):
        return self.service.list(ctx, project_id)

    @user_errors
    def series_get(self, ctx, series_id):
        return self.service.get(ctx, series_id)

    @user_errors
    def series_create(self, ctx, body):
        return self.service.create(ctx, body)

    @user_errors
    def series_update(self, ctx, series_id, body):
        return self.service.update(ctx, series_id, body)

    @user_errors
    def series_delete(self, ctx, series_id):
        self.service.delete(ctx, series_id)
