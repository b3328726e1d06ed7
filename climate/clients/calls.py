"""Cloud client errors turned into :class:`climate.exceptions.CloudUnavailable`.

The backends (Nova hosts and instances, Cinder volumes, Heat stacks) wrap
each cloud call in a context manager that turns what the clients raise when
the cloud fails into ``CloudUnavailable`` naming the service and what was
being done, so that the event is retried.  This module is that context
manager, written once: each backend only says which exceptions mean "the
cloud failed", which service to name, and how an error reads in the reason.
"""

from climate import exceptions


def default_message(exc):
    """An error as the reason quotes it: its text."""
    return '%s' % (exc or type(exc).__name__,)


def unavailable(service, doing, exc, message=default_message):
    """``CloudUnavailable`` saying ``service`` failed while ``doing``, with
    ``exc`` (formatted by ``message``) as the reason; the caller raises it
    ``from exc``."""
    return exceptions.CloudUnavailable(
        service=service, reason='%s: %s' % (doing, message(exc)))


class CloudCalls:
    """Context manager turning cloud client errors into ``CloudUnavailable``.

    ``CloudCalls(doing, service, errors, message=default_message)``: an
    exception leaving the block that is an instance of ``errors`` is raised
    again as ``CloudUnavailable(service=..., reason='<doing>: <message>')``
    ``from`` it, so that its ``__cause__`` is the client's exception (which
    callers look at, e.g. to tell a 404).  ``errors`` is a tuple of exception
    classes, all reported as ``service``, or a mapping of exception classes to
    the service to report for them (``None``: ``service``), tried in order.
    A :class:`climate.exceptions.ClimateException`, or any other exception,
    goes through untouched.
    """

    def __init__(self, doing, service, errors, message=default_message):
        self.doing = doing
        self.service = service
        self.errors = errors
        self.message = message

    def __enter__(self):
        return self

    def _service_of(self, exc):
        """The service to name for ``exc``, or None if it is not listed."""
        if isinstance(self.errors, tuple):
            return self.service if isinstance(exc, self.errors) else None
        for kinds, service in self.errors.items():
            if isinstance(exc, kinds):
                return service or self.service
        return None

    def __exit__(self, exc_type, exc, tb):
        if exc is None or isinstance(exc, exceptions.ClimateException):
            return False
        service = self._service_of(exc)
        if service is None:
            return False
        raise unavailable(service, self.doing, exc, self.message) from exc
