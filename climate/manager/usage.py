"""The manager's RPC endpoint for ``/v1/usage`` (microversion 1.8).

* :meth:`UsageEndpoint.usage`: what one project reserved over a period,
  consumed (past), committed (future) and held now, by resource type and
  class and per lease (``GET /v1/usage``);
* :meth:`UsageEndpoint.usage_capacity`: the planning view, reserved
  against reservable capacity by class, step by step
  (``GET /v1/usage/capacity``, administrators).

Authorization is the API's job; the query's parameters are checked here
(400 naming the parameter), the SQL is ``climate.db.usage``, the
arithmetic ``climate.scheduling.usage``.
"""

import datetime

import oslo_messaging as messaging

from climate import dates
from climate.db import api as db_api
from climate.db import usage as db_usage
from climate import exceptions
from climate.scheduling import usage as usage_math

_user_errors = messaging.expected_exceptions(exceptions.ClimateException)

#: Parameters of each query.
USAGE_PARAMS = ('project_id', 'start', 'end', 'by_lease')
CAPACITY_PARAMS = ('start', 'end', 'step', 'resource_class')

_FLAGS = {'true': True, '1': True, 'yes': True, 'false': False, '0': False,
          'no': False}

#: The planning view's default step and period.
DEFAULT_STEP = '1d'
DEFAULT_HORIZON = datetime.timedelta(days=30)


def month_of(now):
    """``[first day of now's month, first day of the next)``: the period
    a usage query without dates covers."""
    first = now.replace(day=1, hour=0, minute=0, second=0)
    following = (first + datetime.timedelta(days=32)).replace(day=1)
    return first, following


def _text(query, name):
    value = query.get(name)
    if value is not None and (not isinstance(value, str) or not value):
        raise exceptions.InvalidInput(
            reason='%s must be a non-empty string' % name)
    return value


def period(query, now, default):
    """``(start, end)`` of a query, each defaulting to ``default``'s
    (400 naming a bad one)."""
    start = default[0] if query.get('start') is None else dates.parse(
        query['start'], 'start', now)
    end = default[1] if query.get('end') is None else dates.parse(
        query['end'], 'end', now)
    if end <= start:
        raise exceptions.InvalidInput(
            reason='end (%s) must be after start (%s)' % (
                dates.format(end), dates.format(start)))
    return start, end


def _flag(query, name):
    value = query.get(name)
    if value is None:
        return False
    text = str(value).lower()
    if text not in _FLAGS:
        raise exceptions.InvalidInput(
            reason='%s must be true or false, not %r' % (name, value))
    return _FLAGS[text]


def refuse_unknown(query, allowed):
    unknown = sorted(set(query) - set(allowed))
    if unknown:
        raise exceptions.InvalidInput(
            reason='unknown parameter(s) %s; accepted: %s' % (
                ', '.join(unknown), ', '.join(allowed)))


def step_windows(query, start, end):
    """``(step, [(start, end)])``: the query's ``step`` (``1d`` by
    default) and ``[start, end)`` cut into steps of it (400 for a step
    that is not positive or cuts the period too fine)."""
    step = dates.parse_duration(query.get('step') or DEFAULT_STEP, 'step')
    if step.total_seconds() <= 0:
        raise exceptions.InvalidInput(reason='step must be positive')
    try:
        return step, usage_math.steps(start, end, step)
    except ValueError as exc:
        raise exceptions.InvalidInput(
            reason='step %s cuts the period into %s steps; at most %d '
                   'are answered: give a longer step or a shorter '
                   'period' % (query.get('step') or DEFAULT_STEP,
                               exc.args[0], usage_math.MAX_STEPS))


def window(start, end):
    return {'start': dates.format(start), 'end': dates.format(end)}


class UsageEndpoint:
    """What the API may call about usage; every method takes the
    caller's context and a query of text values."""

    target = messaging.Target(version='1.0')

    @_user_errors
    def usage(self, ctx, query):
        """One project's reserved resource-hours over a period (``start``,
        ``end``; the current month by default), and per lease with
        ``by_lease``: ``project_id`` defaults to the caller's (the API
        lets only administrators name another)."""
        refuse_unknown(query, USAGE_PARAMS)
        now = dates.utcnow()
        project_id = _text(query, 'project_id') or ctx.project_id
        start, end = period(query, now, month_of(now))
        by_lease = _flag(query, 'by_lease')
        with db_api.reader(ctx) as session:
            rows = db_usage.project_rows(session, project_id, start, end,
                                         now, by_lease)
        answer = usage_math.project_usage(
            [usage_math.Held(*row) for row in rows], start, end, now,
            by_lease)
        answer.update(window(start, end), project_id=project_id,
                      now=dates.format(now))
        return answer

    @_user_errors
    def usage_capacity(self, ctx, query):
        """Reserved against reservable capacity by class, step by step
        over a period (``start``, ``end``: the next 30 days by default;
        ``step``: ``1h``, ``1d``... ; ``resource_class``: one class)."""
        refuse_unknown(query, CAPACITY_PARAMS)
        now = dates.utcnow()
        start, end = period(query, now, (now, now + DEFAULT_HORIZON))
        step, windows = step_windows(query, start, end)
        cls = _text(query, 'resource_class')
        with db_api.reader(ctx) as session:
            held = db_usage.held_over(session, start, end, cls)
            reservable = usage_math.reservable_by_class(
                db_usage.reservable(session, cls))
        classes = usage_math.planning(held, reservable, windows)
        for item in classes:
            for entry in item['steps']:
                entry.update(window(entry.pop('start'), entry.pop('end')))
        answer = {'classes': classes, 'now': dates.format(now),
                  'step': int(step.total_seconds())}
        answer.update(window(start, end))
        return answer
