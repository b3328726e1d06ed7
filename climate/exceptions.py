"""Errors a user or operator can act on.

Each carries the HTTP status the API answers with.  They travel over RPC:
the API allows this module in ``allowed_remote_exmods`` so a manager-side
error is re-raised in the API process as the same class, with its message.
"""


class ClimateException(Exception):
    """Base error; ``msg_fmt`` is filled from keyword arguments."""

    code = 500
    msg_fmt = "An unknown error occurred."

    def __init__(self, message=None, **kwargs):
        self.kwargs = kwargs
        if message is None:
            try:
                message = self.msg_fmt % kwargs
            except (KeyError, TypeError):
                message = self.msg_fmt
        self.message = str(message)
        super().__init__(self.message)

    def __str__(self):
        return self.message

    @property
    def error_name(self):
        return type(self).__name__.replace('_Remote', '')


class InvalidInput(ClimateException):
    code = 400
    msg_fmt = "Invalid input: %(reason)s"


class MalformedRequestBody(InvalidInput):
    msg_fmt = "Malformed request body: %(reason)s"


class InvalidDate(InvalidInput):
    msg_fmt = ("Invalid %(field)s '%(value)s': use 'YYYY-MM-DD HH:MM', 'now' "
               "or ISO 8601 (e.g. 2030-01-31T12:00:00+01:00).")


class UnsupportedResourceType(InvalidInput):
    msg_fmt = ("Unknown resource_type '%(resource_type)s'; this cloud "
               "offers: %(available)s.")


class InvalidAPIVersion(InvalidInput):
    msg_fmt = "Invalid OpenStack-API-Version header: %(reason)s"


class NotAuthenticated(ClimateException):
    code = 401
    msg_fmt = "Authentication required."


class PolicyNotAuthorized(ClimateException):
    code = 403
    msg_fmt = "Policy doesn't allow %(action)s to be performed."


class NotFound(ClimateException):
    code = 404
    msg_fmt = "%(kind)s %(id)s could not be found."


class LeaseNotFound(NotFound):
    msg_fmt = "Lease %(id)s could not be found."


class HostNotFound(NotFound):
    msg_fmt = "Host %(host)s could not be found."


class HostPropertyNotFound(NotFound):
    msg_fmt = "Host property %(property)s could not be found."


class APIVersionNotAcceptable(ClimateException):
    code = 406
    msg_fmt = ("Version %(version)s is not supported by the API. Minimum is "
               "%(min)s and maximum is %(max)s.")


class MethodNotAllowed(ClimateException):
    code = 405
    msg_fmt = "Method %(method)s is not allowed here; allowed: %(allowed)s."

    @property
    def headers(self):
        return {'Allow': self.kwargs.get('allowed', '')}


class Conflict(ClimateException):
    code = 409
    msg_fmt = "Conflict: %(reason)s"


class LeaseNameAlreadyExists(Conflict):
    msg_fmt = "A lease named '%(name)s' already exists in this project."


class HostHasServers(Conflict):
    msg_fmt = "Host %(host)s has servers; only an empty host can be reserved."


class HostAlreadyExists(Conflict):
    msg_fmt = "Host %(host)s is already in the inventory."


class HostAllocated(Conflict):
    msg_fmt = ("Host %(host)s is allocated to reservations %(reservations)s; "
               "it can leave the inventory once they are over.")


class NotEnoughHosts(Conflict):
    """Not enough matching hosts are free over the requested window."""
    msg_fmt = "Not enough hosts available: %(reason)s"


class InvalidState(Conflict):
    msg_fmt = "%(kind)s %(id)s is %(status)s: %(reason)s"


class InvalidStateTransition(ClimateException):
    """A bug, not a user error: code tried an undeclared transition."""
    msg_fmt = "%(kind)s cannot go from %(current)s to %(new)s."


class ServiceUnavailable(ClimateException):
    code = 503
    msg_fmt = "Service unavailable: %(reason)s"


class TrustRefused(ClimateException):
    """Keystone would not let the user delegate to Climate (403 there)."""
    code = 403
    msg_fmt = ("Keystone refused the trust Climate needs to act for you in "
               "project %(project_id)s: %(reason)s")


class TrustNotCreated(Conflict):
    """Keystone rejected the trust for another client-side reason."""
    msg_fmt = ("Keystone could not create the trust Climate needs to act "
               "for you in project %(project_id)s: %(reason)s")


class NoTrust(ClimateException):
    """A plugin must act as the user but the lease holds no trust."""
    msg_fmt = ("Lease %(lease_id)s holds no Keystone trust (it was created "
               "without Keystone authentication): Climate cannot act as its "
               "user.")


class CloudUnavailable(ClimateException):
    """A cloud service (Nova...) failed or did not answer: the event that
    called it is retried with backoff."""
    code = 503
    msg_fmt = "%(service)s is unavailable: %(reason)s"


class PluginActionError(ClimateException):
    msg_fmt = "%(plugin)s %(action)s failed: %(reason)s"
