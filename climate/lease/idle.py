"""Idle reclaim (microversion 1.17): the rules, pure (no I/O);
``climate.manager.idle`` applies them.

A project's *idle policy* (``/v1/idle-policies/{project_id}``) says, for
the resource types it covers (all when none are named), after how many
seconds of nothing used a started lease is warned (``warn_after``) and
after how many it is ended early (``end_after``; 0: warned only).  A
lease is idle when every covered reservation of it is read unused by its
plugin (no server on its hosts); one read used, or that a plugin cannot
tell about, is not.  Idle time counts from when it was last seen used,
or from its start.  A lease created with ``keep_idle`` is never
reclaimed.
"""

import collections
import datetime

from climate import exceptions
from climate import fields

#: A lease create's field (1.17).
FIELD = 'keep_idle'
POLICY_FIELDS = ('warn_after', 'end_after', 'resource_types')
#: Fewest seconds a policy may wait before a warning.
MIN_WARN_AFTER = 1

Policy = collections.namedtuple('Policy',
                                'resource_types warn_after end_after')

#: What a look at a lease decides.
USED = 'used'            # something uses it: note the time, clear a warning
UNKNOWN = 'unknown'      # nothing to go on: leave it alone
WAIT = 'wait'            # idle, not long enough for the next step
WARN = 'warn'
END = 'end'

Decision = collections.namedtuple('Decision', 'action idle_since')


def parse(body):
    """``(body without keep_idle, keep)``; InvalidInput unless a
    boolean."""
    if FIELD not in body:
        return body, False
    body = dict(body)
    keep = body.pop(FIELD)
    if not isinstance(keep, bool):
        raise exceptions.InvalidInput(
            reason='keep_idle is true or false, not %r' % (keep,))
    return body, keep


def _seconds(body, field, low):
    value = body.get(field)
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise exceptions.InvalidInput(
            reason='%s must be a whole number of seconds, at least %d, '
                   'not %r' % (field, low, value))
    return value


def parse_policy(body):
    """The values of an idle policy from a PUT body; InvalidInput naming
    what is wrong."""
    fields.object_of(body, 'an idle policy', POLICY_FIELDS)
    if 'warn_after' not in body:
        raise exceptions.MissingParameter(param='warn_after')
    warn_after = _seconds(body, 'warn_after', MIN_WARN_AFTER)
    end_after = body.get('end_after', 0)
    if end_after != 0:
        end_after = _seconds(body, 'end_after', warn_after + 1)
    types = body.get('resource_types')
    if types is not None and (
            not isinstance(types, list) or not types or not all(
                isinstance(t, str) and t for t in types)):
        raise exceptions.InvalidInput(
            reason='resource_types is a list of resource types (null: '
                   'every type)')
    return {'warn_after': warn_after, 'end_after': end_after,
            'resource_types': sorted(set(types)) if types else None}


def covers(policy, resource_type):
    return policy.resource_types is None or \
        resource_type in policy.resource_types


def decide(policy, readings, last_used_at, start_date, warned_at, now):
    """What to do with a started lease whose covered reservations read
    ``readings`` (True, False or None each)."""
    if not readings or any(r is None for r in readings):
        return Decision(UNKNOWN, None)
    if any(readings):
        return Decision(USED, None)
    since = last_used_at or start_date
    idle = now - since
    if warned_at is None:
        if idle >= datetime.timedelta(seconds=policy.warn_after):
            return Decision(WARN, since)
        return Decision(WAIT, since)
    if policy.end_after and idle >= datetime.timedelta(
            seconds=policy.end_after):
        return Decision(END, since)
    return Decision(WAIT, since)
