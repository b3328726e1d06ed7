"""``GET /v1/health``: the detailed health check, for operators (admin).

``/healthcheck`` stays what load balancers poll: cheap, answered without
the database or the message bus.  This one looks at both, each in a
thread of its own and for at most ``[api] health_timeout`` seconds, so it
answers in bounded time while either is down:

- ``database``: a query from this process (the same ``[database]`` the
  managers use), which also gives the event engines' backlog: events due
  and not run, and the oldest one's due time;
- ``message_bus``: a round trip to a manager over RPC (``ping``).

200 when both answer, 503 naming the failing one otherwise.
"""

import threading
import time

from oslo_log import log as logging
import pecan

from climate import context as climate_context
from climate import dates
from climate.db import health as db_health
from climate import policy

LOG = logging.getLogger(__name__)

# One daemon thread per check at most: a check still running from an
# earlier request is waited for again, not started again, so a database or
# a bus that hangs piles no threads up, and a hung check never holds the
# process at exit (a ThreadPoolExecutor's threads are joined then).
_RUNNING = {}
_LOCK = threading.Lock()


class _Check:
    """One check running in a daemon thread."""

    def __init__(self, name, function, args):
        self.started = time.monotonic()
        self.done = threading.Event()
        self.result = None
        self.error = None
        self._thread = threading.Thread(
            target=self._run, args=(function, args), daemon=True,
            name='climate-health-%s' % name)

    def _run(self, function, args):
        try:
            self.result = function(*args)
        except Exception as exc:
            self.error = exc
        finally:
            self.done.set()

    def start(self):
        self._thread.start()
        return self


def _database(now):
    backlog = db_health.event_backlog(climate_context.admin_context(), now)
    oldest = backlog['oldest_overdue']
    return {'events': {
        'backlog': backlog['backlog'],
        'in_progress': backlog['in_progress'],
        'oldest_overdue': dates.format(oldest) if oldest else None,
        'overdue_seconds': int((now - oldest).total_seconds())
        if oldest else 0}}


def _message_bus(rpcapi, timeout):
    ctx = climate_context.admin_context()
    return rpcapi.ping(ctx, timeout=timeout)


def _submit(name, function, *args):
    """The check: a new one, or the one still running."""
    with _LOCK:
        running = _RUNNING.get(name)
        if running is not None and not running.done.is_set():
            return running
        check = _RUNNING[name] = _Check(name, function, args).start()
        return check


def running_checks():
    """The names of the checks whose thread is still running (for tests
    and operators)."""
    with _LOCK:
        return sorted(name for name, check in _RUNNING.items()
                      if not check.done.is_set())


def run_checks(rpcapi, timeout):
    """``(healthy, report)``; takes at most ``timeout`` seconds."""
    now = dates.utcnow()
    checks = {'database': _submit('database', _database, now),
              'message_bus': _submit('message_bus', _message_bus, rpcapi,
                                     timeout)}
    deadline = time.monotonic() + timeout
    report = {}
    for name, check in checks.items():
        if not check.done.wait(max(0.0, deadline - time.monotonic())):
            report[name] = {'ok': False, 'error': 'no answer within %g s' % (
                time.monotonic() - check.started)}
            continue
        exc = check.error
        if exc is not None:
            LOG.warning('Health check %s failed: %s', name, exc)
            report[name] = {'ok': False, 'error': '%s: %s' % (
                type(exc).__name__,
                getattr(exc, 'message', None) or
                (str(exc).splitlines() or [''])[0])}
            continue
        report[name] = dict(check.result, ok=True,
                            seconds=round(time.monotonic() - check.started,
                                          3))
    events = report['database'].pop('events', None)
    healthy = all(check['ok'] for check in report.values())
    return healthy, {'status': 'ok' if healthy else 'failing',
                     'checks': report, 'events': events}


class HealthController:

    @pecan.expose(generic=True, template='json')
    def index(self):
        # pecan answers 405 for the methods not registered below
        pecan.abort(405, headers={'Allow': 'GET'})

    @index.when(method='GET', template='json')
    def index_get(self):
        request = pecan.request
        policy.authorize(request.context, 'climate:health:get')
        healthy, report = run_checks(request.rpcapi,
                                     request.conf.api.health_timeout)
        if not healthy:
            pecan.response.status = 503
        return report
