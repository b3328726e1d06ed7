"""The policy enforcer (oslo.policy), with Climate's rules registered."""

import threading

from oslo_config import cfg
from oslo_log import log as logging
from oslo_policy import policy

from climate import exceptions
from climate import policies

LOG = logging.getLogger(__name__)
_ENFORCER = None
_LOCK = threading.Lock()


def get_enforcer():
    """The enforcer, created on first use (also oslopolicy's entry point)."""
    global _ENFORCER
    if _ENFORCER is None:
        with _LOCK:
            if _ENFORCER is None:
                # published only once its rules are registered: concurrent
                # first requests must never see an enforcer without them
                enforcer = policy.Enforcer(cfg.CONF)
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
