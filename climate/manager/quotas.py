"""Per-project limits on leases (``/v1/quotas``, microversion 1.9) and the
operator's approval service.

* :func:`enforce`: called by the lease service in the transaction of a
  create or update, after the plugins booked: maximum duration, maximum
  extension, maximum concurrent amount per class and budget of
  resource-hours per period.  The last two read what the project holds,
  so the project's quota row is locked first: two creates of a project
  take turns, and the second sees the first's bookings once it
  committed (read committed).
* :func:`approve`: the ``[quotas] approval_url`` service, asked before
  the transaction (never while locks are held).
* :class:`QuotasEndpoint`: what the API may call (show, set, reset).

The arithmetic is ``climate.scheduling.quotas``, the SQL
``climate.db.quotas`` and ``climate.db.usage``.
"""

import datetime
import json
import urllib.error
import urllib.request

from oslo_config import cfg
from oslo_log import log as logging
import oslo_messaging as messaging

from climate import dates
from climate.db import api as db_api
from climate.db.ledger import windows
from climate.db import quotas as db_quotas
from climate import exceptions
from climate import outbound
from climate.scheduling import quotas as quota_math
from climate.scheduling import usage as usage_math

LOG = logging.getLogger(__name__)
CONF = cfg.CONF

_user_errors = messaging.expected_exceptions(exceptions.ClimateException)

#: Beyond these a limit is a typing mistake, not a policy.
MAX_SECONDS = 100 * 366 * 86400
MAX_AMOUNT = 10 ** 12
#: What the approval service's answer may weigh.
_ANSWER_BYTES = 65536
#: Locking the project's quota row (only the concurrency test's blind run
#: turns it off, to show that the check then lets creates slip by).
LOCKING = True


# -- limits -------------------------------------------------------------------

def _class_map(raw, option):
    out = {}
    for cls, value in (raw or {}).items():
        try:
            out[cls] = float(value) if option == 'budget' else int(value)
        except ValueError:
            # the operator's mistake: the manager refuses to start
            raise exceptions.ClimateException(
                message='[quotas] %s: %s=%s is not a number' % (option, cls,
                                                                value))
    return out


def defaults():
    """The configured limits of a project without its own."""
    conf = CONF.quotas
    return quota_math.Limits(
        conf.max_lease_duration, conf.max_extension,
        _class_map(conf.max_concurrent, 'max_concurrent'),
        _class_map(conf.budget, 'budget'), conf.budget_period)


def _own(values):
    if values is None:
        return quota_math.Limits(None, None, None, None, None)
    return quota_math.Limits(**values)


def _hours_text(amount, cls):
    return '%s %s' % (_number(amount), usage_math.unit(cls))


def _number(value):
    return ('%d' % value) if float(value).is_integer() else ('%s' % value)


def _when(value):
    return value.strftime('%Y-%m-%d %H:%M') + ' UTC'


def _refuse(project_id, found, period):
    cls = found.resource_class
    if found.kind == 'concurrent':
        reason = (
            'project %s may hold at most %s %s at once; with this lease it '
            'would hold %s at %s. At most %s %s fit in this lease over its '
            'window.' % (project_id, _number(found.limit), cls,
                         _number(found.used), _when(found.at),
                         _number(found.fits), cls))
    else:
        first, last = found.period
        reason = (
            'project %s may reserve at most %s per %s; with this lease it '
            'would reserve %s from %s to %s. At most %s of it fit in this '
            'lease within that %s.' % (
                project_id, _hours_text(found.limit, cls), period,
                _hours_text(found.used, cls), _when(first), _when(last),
                _hours_text(found.fits, cls), period))
    return exceptions.QuotaExceeded(reason=reason, kind=found.kind,
                                    resource_class=cls, limit=found.limit,
                                    used=found.used, fits=found.fits)


def _seconds_text(seconds):
    return '%d s (%s)' % (seconds, datetime.timedelta(seconds=seconds))


def enforce(session, project_id, lease_id, start, end, old_end=None):
    """Refuse (QuotaExceeded, 403) the lease ``lease_id`` of
    ``project_id`` over ``[start, end)``, booked in the caller's
    transaction, if it breaks one of the project's limits; ``old_end``:
    the end before an update (its extension is limited).

    Reads the project's own limits; locks them when the concurrent or
    budget limits need what the project holds, which is read after the
    lock.
    """
    # locked at once: a project with limits of its own needs the lock
    # for them almost always, and one read is cheaper than two
    own = db_quotas.get(session, project_id, lock=LOCKING)
    limits = quota_math.effective(_own(own), defaults())
    duration = int((end - start).total_seconds())
    if 0 <= limits.max_lease_duration < duration:
        raise exceptions.QuotaExceeded(reason=(
            'leases of project %s may last at most %s; this one would last '
            '%s.' % (project_id, _seconds_text(limits.max_lease_duration),
                     _seconds_text(duration))),
            kind='max_lease_duration', limit=limits.max_lease_duration,
            used=duration)
    if old_end is not None and end > old_end:
        moved = int((end - old_end).total_seconds())
        if 0 <= limits.max_extension < moved:
            raise exceptions.QuotaExceeded(reason=(
                'an update may move the end of a lease of project %s at '
                'most %s later; this one would move it %s later.' % (
                    project_id, _seconds_text(limits.max_extension),
                    _seconds_text(moved))),
                kind='max_extension', limit=limits.max_extension,
                used=moved)
    if not quota_math.needs_lock(limits):
        return
    if LOCKING and own is None:
        # the defaults limit it: its row, made now, is the lock (a
        # concurrent first create of the project waits for this one)
        limits = quota_math.effective(_own(db_quotas.get(
            session, project_id, lock=True, create=True)), defaults())
    # one seek bounds every window read below
    level = windows.longest_level(session)
    holdings = []
    if limits.max_concurrent:
        holdings = [quota_math.Holding(*row) for row in db_quotas.holdings(
            session, project_id, limits.max_concurrent, start, end,
            level=level)]
    budgets = []
    if limits.budget:
        budgets = [(period, db_quotas.held_within(
            session, project_id, limits.budget, period[0], period[1],
            level=level)) for period in quota_math.periods(
                start, end, limits.budget_period)]
    found = quota_math.excess(limits, holdings, budgets, lease_id, start,
                              end)
    if found is not None and found.kind == 'budget':
        # what would fit needs the lease's own share of that period
        first, last = found.period
        found = quota_math.excess(limits, holdings, [(
            found.period, db_quotas.held_within(
                session, project_id, limits.budget, first, last, lease_id,
                level=level))], lease_id, start, end)
    if found is not None:
        raise _refuse(project_id, found, limits.budget_period)


# -- the approval service -----------------------------------------------------

def _ask(url, payload, timeout):
    """``(approved, reason)`` from the service, or raise ValueError /
    OSError when there is no valid answer."""
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode(), method='POST',
        headers={'Content-Type': 'application/json',
                 'Accept': 'application/json'})
    try:
        with outbound.OPENER.open(request, timeout=timeout) as answer:
            text = answer.read(_ANSWER_BYTES + 1)
    except urllib.error.HTTPError as exc:
        exc.close()
        raise ValueError('HTTP %d %s' % (exc.code, exc.reason))
    except urllib.error.URLError as exc:
        raise OSError(str(exc.reason))
    if len(text) > _ANSWER_BYTES:
        raise ValueError('an answer longer than %d bytes' % _ANSWER_BYTES)
    try:
        body = json.loads(text)
    except ValueError:
        raise ValueError('an answer that is not JSON')
    if not isinstance(body, dict) or not isinstance(body.get('approved'),
                                                      bool):
        raise ValueError('an answer without "approved": true or false')
    reason = body.get('reason')
    return body['approved'], reason if isinstance(reason, str) else None


def approve(ctx, action, lease):
    """Ask ``[quotas] approval_url`` (when set) about a create or update
    (``action``) of ``lease`` (what the request asks, dates as text);
    ApprovalRefused (403) when it says no, or when it cannot be asked
    and ``approval_fail_open`` is off."""
    url = CONF.quotas.approval_url
    if not url:
        return
    payload = {'action': action, 'project_id': ctx.project_id,
               'user_id': ctx.user_id, 'lease': lease}
    try:
        approved, reason = _ask(url, payload, CONF.quotas.approval_timeout)
    except (ValueError, OSError) as exc:
        LOG.warning('The approval service at %s gave no answer to the %s '
                    'of a lease of project %s: %s', url, action,
                    ctx.project_id, exc)
        if CONF.quotas.approval_fail_open:
            return
        raise exceptions.ApprovalRefused(
            reason='the approval service could not be asked (%s); try again '
                   'later' % exc)
    if not approved:
        raise exceptions.ApprovalRefused(
            reason=reason or 'the approval service refused it')


# -- the API's view -----------------------------------------------------------

def _duration(value, field):
    if value is None or value == quota_math.UNLIMITED:
        return value
    if isinstance(value, bool):
        raise exceptions.InvalidInput(
            reason='%s must be a number of seconds, a duration such as '
                   '"7d", or -1 for no limit' % field)
    if isinstance(value, int):
        seconds = value
    else:
        seconds = int(dates.parse_duration(value, field).total_seconds())
    if not 0 <= seconds <= MAX_SECONDS:
        raise exceptions.InvalidInput(
            reason='%s must be -1 (no limit) or between 0 and %d seconds '
                   '(100 years), not %r' % (field, MAX_SECONDS, value))
    return seconds


def _amounts(value, field, hours=False):
    if value is None:
        return None
    if not isinstance(value, dict):
        raise exceptions.InvalidInput(
            reason='%s must be an object of resource classes, e.g. '
                   '{"VCPU": 64}' % field)
    out = {}
    for cls, amount in value.items():
        where = '%s.%s' % (field, cls)
        if not isinstance(cls, str) or \
                not usage_math.RESOURCE_CLASS.match(cls):
            raise exceptions.InvalidInput(
                reason='%s: a resource class is upper case letters, digits '
                       'and underscores (VCPU, CUSTOM_GPU...)' % where)
        kinds = (int, float) if hours else (int,)
        if isinstance(amount, bool) or not isinstance(amount, kinds):
            raise exceptions.InvalidInput(
                reason='%s must be %s, or -1 for no limit, not %r' % (
                    where, 'a number of resource-hours' if hours else
                    'a whole number', amount))
        if amount != quota_math.UNLIMITED and not 0 <= amount <= MAX_AMOUNT:
            raise exceptions.InvalidInput(
                reason='%s must be -1 (no limit) or between 0 and %d, not '
                       '%r' % (where, MAX_AMOUNT, amount))
        out[cls] = amount
    return out


def parse(body):
    """The limits a PUT sets, checked: ``{field: value}`` (None: back to
    the default)."""
    if not isinstance(body, dict):
        raise exceptions.InvalidInput(reason='the body must be an object')
    body = body.get('quota', body) if set(body) == {'quota'} else body
    if not isinstance(body, dict):
        raise exceptions.InvalidInput(reason='quota must be an object')
    unknown = sorted(set(body) - set(db_quotas.FIELDS))
    if unknown:
        raise exceptions.InvalidInput(
            reason='%s cannot be set; a quota has %s' % (
                unknown[0], ', '.join(db_quotas.FIELDS)))
    if not body:
        raise exceptions.InvalidInput(
            reason='nothing to set; a quota has %s' % ', '.join(
                db_quotas.FIELDS))
    out = {}
    for field in ('max_lease_duration', 'max_extension'):
        if field in body:
            out[field] = _duration(body[field], field)
    if 'max_concurrent' in body:
        out['max_concurrent'] = _amounts(body['max_concurrent'],
                                         'max_concurrent')
    if 'budget' in body:
        out['budget'] = _amounts(body['budget'], 'budget', hours=True)
    if 'budget_period' in body:
        period = body['budget_period']
        if period is not None and period not in quota_math.PERIODS:
            raise exceptions.InvalidInput(
                reason='budget_period must be one of %s, not %r' % (
                    ', '.join(quota_math.PERIODS), period))
        out['budget_period'] = period
    return out


def view(session, project_id, now):
    """A project's limits: ``own`` (null where the default applies), the
    effective ones, and what the project holds now and within the
    current budget period."""
    own = db_quotas.get(session, project_id)
    limits = quota_math.effective(_own(own), defaults())
    first = quota_math.period_start(now, limits.budget_period)
    last = quota_math.next_period(first, limits.budget_period)
    held = {}
    if limits.max_concurrent:
        for row in db_quotas.holdings(session, project_id,
                                      limits.max_concurrent, now,
                                      now + datetime.timedelta(seconds=1)):
            if row.start_date <= now < row.end_date:
                held[row.resource_class] = held.get(
                    row.resource_class, 0) + row.amount
    used = {}
    if limits.budget:
        used = db_quotas.held_within(session, project_id, limits.budget,
                                     first, last)
    answer = dict(limits._asdict())
    answer.update(
        project_id=project_id,
        own=own or {f: None for f in db_quotas.FIELDS},
        usage={'now': dates.format(now), 'held_now': {
            cls: held.get(cls, 0) for cls in sorted(limits.max_concurrent)},
            'budget_period': {'start': dates.format(first),
                              'end': dates.format(last)},
            'budget_used': {cls: usage_math.hours(used.get(cls, (0, 0))[0])
                            for cls in sorted(limits.budget)}})
    return answer


class QuotasEndpoint:
    """What the API may call about quotas (authorization is the API's
    job)."""

    target = messaging.Target(version='1.0')

    def __init__(self):
        defaults()  # a configuration mistake stops the manager here

    @_user_errors
    def quota_list(self, ctx):
        """The defaults and every project's own limits (a project whose
        limits are all defaults is left out)."""
        with db_api.reader(ctx) as session:
            rows = db_quotas.every(session)
        return {'defaults': dict(defaults()._asdict()),
                'projects': [dict(own, project_id=project_id)
                             for project_id, own in rows.items()
                             if any(v is not None for v in own.values())]}

    @_user_errors
    def quota_get(self, ctx, project_id):
        """The project's limits and what it holds against them."""
        with db_api.reader(ctx) as session:
            return view(session, project_id, dates.utcnow())

    @_user_errors
    @db_api.retry_on_deadlock
    def quota_set(self, ctx, project_id, body):
        """Set some of the project's own limits; the others keep
        theirs."""
        values = parse(body)
        with db_api.writer(ctx) as session:
            db_quotas.put(session, project_id, values)
        LOG.info('Quota of project %s set: %s', project_id, values)
        with db_api.reader(ctx) as session:
            return view(session, project_id, dates.utcnow())

    @_user_errors
    @db_api.retry_on_deadlock
    def quota_delete(self, ctx, project_id):
        """Back to the defaults."""
        with db_api.writer(ctx) as session:
            db_quotas.delete(session, project_id)
        LOG.info('Quota of project %s back to the defaults', project_id)
