"""The policy enforcer (oslo.policy), with Climate's rules registered."""

import ast
import functools
import inspect
import threading
import time
import types

from oslo_config import cfg
from oslo_log import log as logging
from oslo_policy import _checks
from oslo_policy import policy

from climate import exceptions
from climate import policies

LOG = logging.getLogger(__name__)
_ENFORCER = None
_LOCK = threading.Lock()


#: how often a running service looks at the policy files for changes
RECHECK_SECONDS = 1.0


class _Enforcer(policy.Enforcer):
    """oslo.policy's enforcer, looking for policy file changes at most
    every :data:`RECHECK_SECONDS` instead of on every check: each look
    resolves and stats the files (a tenth of a millisecond per check, two
    checks a request).  An edited file still takes effect within a
    second, without a restart."""

    _looked_at = None

    def load_rules(self, force_reload=False):
        now = time.monotonic()
        if (force_reload or not self.rules or self._looked_at is None or
                now - self._looked_at >= RECHECK_SECONDS):
            super().load_rules(force_reload)
            self._looked_at = now

    def clear(self):
        super().clear()
        self._looked_at = None


# oslo.policy asks inspect for the signature of every rule node it
# evaluates, through a bound method made anew each time (most of a
# check's cost); the check classes never change, so their answer is kept.
@functools.lru_cache(maxsize=None)
def _argspec_of(function):
    return inspect.getfullargspec(function)


if getattr(_checks, 'inspect', None) is inspect:
    _checks.inspect = types.SimpleNamespace(
        getfullargspec=lambda f: _argspec_of(getattr(f, '__func__', f)))


# oslo.policy's generic checks (``project_id:%(project_id)s``) read their
# left side with ast.literal_eval on every check.  CPython 3.11 before
# 3.11.8 can fail a compile() run by two threads at once ("SystemError: AST
# constructor recursion depth mismatch", CPython gh-106905; seen as a 500
# from climate-api's request threads).  Those sides are the rules' own
# constants: each is read once, one at a time, and its answer kept.
_LITERAL_LOCK = threading.Lock()
#: text -> ``(True, value)``, or ``(False, None)`` where literal_eval
#: raises ValueError (not a literal: a name to look up in the credentials)
_LITERALS = {}
#: the rules' sides are few; a policy file is the operator's, still bounded
MAX_LITERALS = 1024


def _literal_eval(text):
    try:
        readable, value = _LITERALS[text]
    except KeyError:
        with _LITERAL_LOCK:
            if text not in _LITERALS:
                if len(_LITERALS) >= MAX_LITERALS:
                    _LITERALS.clear()
                try:
                    _LITERALS[text] = True, ast.literal_eval(text)
                except ValueError:
                    _LITERALS[text] = False, None
            readable, value = _LITERALS[text]
    if not readable:
        raise ValueError('%r is not a literal' % (text,))
    return value


if getattr(_checks, 'ast', None) is ast:
    _checks.ast = types.SimpleNamespace(literal_eval=_literal_eval)


def get_enforcer():
    """The enforcer, created on first use (also oslopolicy's entry point)."""
    global _ENFORCER
    if _ENFORCER is None:
        with _LOCK:
            if _ENFORCER is None:
                # published only once its rules are registered: concurrent
                # first requests must never see an enforcer without them
                enforcer = _Enforcer(cfg.CONF)
                enforcer.register_defaults(policies.list_rules())
                _ENFORCER = enforcer
    return _ENFORCER


def reset():
    global _ENFORCER
    with _LOCK:
        if _ENFORCER is not None:
            _ENFORCER.clear()
        _ENFORCER = None


def authorize(ctx, rule, target=None):
    """Raise PolicyNotAuthorized (403, naming the rule) unless allowed.

    :param target: the object's owner, by default the caller's project.
    """
    target = target or {'project_id': ctx.project_id}
    try:
        get_enforcer().authorize(rule, target, ctx, do_raise=True,
                                 exc=exceptions.PolicyNotAuthorized,
                                 action=rule)
    except policy.InvalidScope:
        raise exceptions.PolicyNotAuthorized(action=rule)
    except ValueError as exc:
        _unreadable(exc)
        raise exceptions.PolicyNotAuthorized(action=rule)


def _unreadable(exc):
    # oslo.policy raises ValueError for a policy file it cannot parse: the
    # operator's mistake refuses (403 naming the rule), it never allows
    LOG.error('The policy file cannot be read, every check it is needed '
              'for is refused: %s', exc)


def check(ctx, rule, target=None):
    """True if ``rule`` allows ``ctx`` on ``target``; never raises."""
    target = target or {'project_id': ctx.project_id}
    try:
        return get_enforcer().authorize(rule, target, ctx)
    except policy.InvalidScope:
        return False
    except ValueError as exc:
        _unreadable(exc)
        return False
