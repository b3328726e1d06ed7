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


class UnsupportedContentType(MalformedRequestBody):
    """Blazar's sentence (``request_data``) first, then Climate's."""
    msg_fmt = ("Content type '%(content_type)s' isn't supported. Send the "
               "body as application/json.")

    @property
    def error_name(self):
        return 'MalformedRequestBody'


class InvalidDate(InvalidInput):
    """A date in none of the accepted forms (Blazar's sentence first)."""
    detail_fmt = ("Invalid %(field)s '%(value)s': use 'YYYY-MM-DD HH:MM', "
                  "'now' or ISO 8601 (e.g. 2030-01-31T12:00:00+01:00).")
    msg_fmt = ("%(value)s is an invalid date. Required format: "
               "%%Y-%%m-%%d %%H:%%M. " + detail_fmt)

    @property
    def detail(self):
        """Climate's sentence alone, for a client checking its options."""
        return self.detail_fmt % self.kwargs


class DateOutOfRange(InvalidDate):
    """A well-formed date outside what Climate stores and computes with
    (a later date plus a duration overflows): Blazar's sentence, then one
    that names the range.  Its ``error_name`` stays Blazar's."""
    detail_fmt = ("%(field)s %(value)s is outside the dates Climate "
                  "supports: from %(minimum)s to %(maximum)s UTC.")
    msg_fmt = ("%(value)s is an invalid date. Required format: "
               "%%Y-%%m-%%d %%H:%%M. " + detail_fmt)

    @property
    def error_name(self):
        return 'InvalidDate'


class UnsupportedResourceType(InvalidInput):
    """400 where Blazar answers 500 with the same sentence."""
    msg_fmt = ("The %(resource_type)s resource type is not supported. This "
               "cloud offers: %(available)s.")


# -- leases: Blazar's sentences first, then Climate's ------------------------

class MissingParameter(InvalidInput):
    msg_fmt = "Missing parameter %(param)s"


class StartDateInPast(InvalidInput):
    msg_fmt = ("Start date must be later than current date. start_date "
               "%(start)s is in the past (now is %(now)s UTC).")


class EndBeforeStart(InvalidInput):
    """Create: the window is empty or reversed."""
    msg_fmt = ("End date must be later than start date. end_date %(end)s "
               "is not after start_date %(start)s.")


class EndBeforeNowOrStart(InvalidInput):
    """Update: the new end is past or not after the (new) start."""
    msg_fmt = ("End date must be later than current and start date. "
               "end_date %(end)s, start_date %(start)s, now %(now)s UTC.")


class InvalidPeriod(InvalidInput):
    """Update: the new window is empty (Blazar's host plugin's sentence;
    Blazar's lease service lets it through for other reservations)."""
    msg_fmt = ("The end_date must be later than the start_date. Both are "
               "%(start)s.")


class StartOfStartedLease(InvalidInput):
    msg_fmt = ("Cannot modify the start date of already started leases. "
               "Lease %(id)s started at %(start)s UTC.")


class TerminatedLeaseChange(InvalidInput):
    msg_fmt = ("Terminated leases can only be renamed. Lease %(id)s ended "
               "at %(end)s UTC.")


class DateOutOfLeaseLimits(ClimateException):
    """before_end_date not strictly inside the lease (Blazar: 403)."""
    code = 403
    msg_fmt = ("Datetime is out of lease limits. %(field)s %(date)s must be "
               "after start_date %(start)s and before end_date %(end)s.")


class InvalidReservationIds(InvalidInput):
    msg_fmt = ("Please enter valid reservation IDs. Invalid reservation IDs "
               "are: %(ids)s")


class InvalidEvent(InvalidInput):
    """A user event Climate cannot store (Blazar stores anything)."""
    msg_fmt = "Invalid event: %(reason)s"


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
    """Blazar's ``check_exists`` sentence, filled the same way."""
    msg_fmt = "Object with %(object)s not found"

    def __init__(self, message=None, **kwargs):
        kwargs.setdefault('object', repr({'lease_id': kwargs.get('id')}))
        super().__init__(message, **kwargs)


class HostNotFound(NotFound):
    """No host has this id (Blazar's ``check_exists`` sentence first)."""
    msg_fmt = ("Object with %(object)s not found. No host of the inventory "
               "has this id.")


class HostNotInCloud(HostNotFound):
    """The inventory backend (Nova) knows no hypervisor of that name."""
    msg_fmt = ("Host '%(host)s' not found! The cloud knows no hypervisor of "
               "that name.")


class HostNameEmpty(HostNotInCloud):
    """A host create whose name is empty or blank: Blazar's 404 and
    sentence (it asks Nova for that name), then what is wrong, whatever
    the inventory (a static one asks no cloud)."""
    msg_fmt = ("Host '%(host)s' not found! An empty name names no host: "
               "give the host's name in \"name\".")

    @property
    def error_name(self):
        return 'HostNotInCloud'


class HostPropertyNotFound(NotFound):
    msg_fmt = ("%(property)s does not exist for resource type physical:host. "
               "No host has ever carried a property of that name.")


class InvalidHost(ClimateException):
    """A host create naming no host (Blazar answers 403 for it)."""
    code = 403
    msg_fmt = ("Invalid values for host %(host)s. Give the host's name (its "
               "hypervisor name) in \"name\".")


class ExtraCapabilityTooLong(InvalidInput):
    msg_fmt = ("Extra capability key too long. Extra capability names are at "
               "most %(max)d characters: %(key)s")


class NoDataToUpdate(InvalidInput):
    msg_fmt = ("No data to update. Send the extra capabilities to set (null "
               "removes one).")


class MalformedParameter(InvalidInput):
    msg_fmt = "Malformed parameter %(param)s. %(reason)s"


class InvalidRange(InvalidInput):
    msg_fmt = ("Invalid values for min/max of hosts. Max must be equal to or "
               "larger than min. min is %(min)d, max is %(max)d.")


class MalformedRequirements(InvalidInput):
    msg_fmt = "Malformed requirements %(rqrms)s. %(reason)s"


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
    msg_fmt = ("The lease with name: %(name)s already exists. Lease names "
               "are unique within a project.")


class CantUpdateParameter(Conflict):
    msg_fmt = "%(param)s cannot be updated"


class LeaseBusy(Conflict):
    """An event is running on the lease (Blazar: 500, the same sentence)."""
    msg_fmt = ("Invalid lease status. Lease %(id)s is %(status)s: "
               "%(reason)s")


class HoldNotConfirmable(Conflict):
    """A confirm (1.14) of a lease that is not a live hold."""
    msg_fmt = "Lease %(id)s cannot be confirmed: %(reason)s."


class OccurrenceRefused(Conflict):
    """An occurrence of a series (1.15) that cannot be booked, with
    ``on_conflict`` refuse: nothing of the create or update is
    written."""
    msg_fmt = ("Occurrence %(number)d of series %(name)s (%(start)s to "
               "%(end)s UTC) cannot be booked: %(reason)s Nothing was "
               "written; with on_conflict skip the occurrences that fit "
               "are booked and this one is reported in skipped.")


class NoOccurrenceBooked(Conflict):
    """A series (1.15) none of whose occurrences can be booked."""
    msg_fmt = ("No occurrence of series %(name)s can be booked: %(reason)s")


class OccurrenceExists(Conflict):
    """An occurrence made already (by another manager): the unique key
    (series_id, occurrence) refused a second one."""
    msg_fmt = "Occurrence %(occurrence)s of series %(series)s exists already."


class MaintenanceUnresolved(Conflict):
    """A maintenance window (1.16) that hits leases without an
    action for them."""
    msg_fmt = ("Maintenance window %(name)s hits leases without an action: "
               "%(leases)s. Give actions (lease id: move, shorten or leave) "
               "or default_action; a dry_run shows each lease's options. "
               "Nothing was changed.")


class MaintenanceNothingLeft(Conflict):
    msg_fmt = ("Every host of maintenance window %(name)s is left to the "
               "leases on it: nothing to take out. Nothing was changed.")


class MaintenanceActionImpossible(Conflict):
    msg_fmt = ("Maintenance window %(name)s cannot %(action)s lease "
               "%(lease)s: %(why)s. Nothing was changed.")


class SeriesNameAlreadyExists(Conflict):
    msg_fmt = ("The lease series with name: %(name)s already exists. "
               "Series names are unique within a project.")


class SeriesNotFound(NotFound):
    msg_fmt = ("Lease series %(id)s could not be found. No series of the "
               "project has this id.")


class HostHasServers(Conflict):
    msg_fmt = ("Servers [%(servers)s] found for host %(host)s. Only a host "
               "without servers can enter or leave the inventory.")


class MultipleHostsFound(Conflict):
    msg_fmt = ("Multiple Hosts found for pattern '%(host)s'. It names "
               "%(count)d hypervisors (%(names)s): give the hypervisor name.")


class HostAlreadyExists(Conflict):
    msg_fmt = "Host %(host)s is already in the inventory."


class HostAllocated(Conflict):
    msg_fmt = ("Can't delete host %(id)s. The host is reserved. Host "
               "%(host)s is allocated to reservations %(reservations)s; it "
               "can leave the inventory once they are over.")


class CantAddExtraCapability(Conflict):
    msg_fmt = ("Can't add extracapabilities %(keys)s to Host %(host)s. "
               "%(reason)s")


class CapacityRefusal(Exception):
    """Mixed into the errors of a well-formed request that does not fit
    now and may fit later (capacity taken over its window): what a
    ``with_retries`` lease waits on (``climate.manager.workers.retries``)."""


class NotEnoughHosts(CapacityRefusal, Conflict):
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


class DatabaseUnavailable(ServiceUnavailable):
    """The manager lost its database; nothing was written (the transaction
    rolled back).  The API adds a Retry-After header."""
    msg_fmt = ("The database is unavailable; nothing was changed. Try again "
               "in a moment.")


class DatabaseBusy(ServiceUnavailable):
    """A transaction kept losing to concurrent writers (deadlocks, or a
    Galera cluster's certification failures) after its retries; it
    rolled back.  The API adds a Retry-After header."""
    msg_fmt = ("The database could not commit the request now: concurrent "
               "requests kept conflicting with it. Nothing was changed; try "
               "again in a moment.")


class MessageBusUnavailable(ServiceUnavailable):
    """The API could not reach the managers over the message bus in time.

    Raised in the API process only.  A create may or may not have been
    made: retry it with the same Idempotency-Key."""
    msg_fmt = ("The message bus is unavailable: %(reason)s. Try again in a "
               "moment; a lease create retried with the same "
               "Idempotency-Key header is made at most once.")


class IdempotencyKeyReused(Conflict):
    """An Idempotency-Key came again with a different request."""
    msg_fmt = ("Idempotency-Key %(key)s was already used in this project "
               "for a different request (lease %(lease_id)s); use a new key "
               "for a new request.")


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


# -- virtual:instance: Blazar's sentences first, then Climate's ---------------

class InvalidStateUpdate(InvalidState):
    """A change an instance reservation's state does not allow (Blazar's
    ``InvalidStateUpdate``, raised with its own sentence)."""
    msg_fmt = "%(reason)s"


class NotEnoughCapacity(NotEnoughHosts):
    """Instance slots that do not fit: Blazar's ``NotEnoughHostsAvailable``
    sentence, then how many fit and from when they all would."""

    @property
    def error_name(self):
        return 'NotEnoughHostsAvailable'


class NotEnoughVolumeCapacity(NotEnoughCapacity):
    """Volume gigabytes that fit on no matching pool.  Blazar reserves no
    volumes, so there is no sentence of its to keep: the refusal says
    volumes, not hosts."""
    msg_fmt = "Not enough volume capacity available: %(reason)s"

    @property
    def error_name(self):
        return 'NotEnoughVolumeCapacity'


# -- virtual:floatingip: Blazar's sentences first, then Climate's -------------
# (blazar/manager/exceptions.py and blazar/utils/openstack/exceptions.py)

class FloatingIPNotFound(NotFound):
    msg_fmt = ("Floating IP %(floatingip)s not found. No floating IP of the "
               "inventory has this id.")


class CantDeleteFloatingIP(Conflict):
    msg_fmt = ("Can't delete floating IP %(floatingip)s. Floating IP id "
               "%(floatingip)s is allocated by reservations. %(reason)s")


class FloatingIPAlreadyExists(Conflict):
    """Blazar fails in its database (500); the caller's mistake here."""
    msg_fmt = ("Floating IP %(address)s of network %(network)s is already "
               "in the inventory (id %(id)s).")


class InvalidIPFormat(MalformedParameter):
    """Blazar's sentence, then the field holding the address."""
    msg_fmt = "IP address %(ip)s is invalid form. %(reason)s"


class TooLongFloatingIPs(InvalidInput):
    msg_fmt = ("Invalid values for required_floatingips and amount. The "
               "amount must be equal to or longer than length of "
               "required_floatingips. amount is %(amount)d but "
               "required_floatingips lists %(count)d address(es).")


class FloatingIPNetworkNotFound(InvalidInput):
    msg_fmt = "Failed to find network %(network)s. %(reason)s"


class FloatingIPSubnetNotFound(InvalidInput):
    """400 where Blazar answers 404: the address is the caller's."""
    msg_fmt = ("Valid subnet for the floating IP %(fip)s is not found. "
               "%(reason)s")


class NeutronUsesFloatingIP(InvalidInput):
    msg_fmt = ("The floating IP %(floatingip)s is used in allocation_pools "
               "or gateway_ip in subnet %(subnet)s . %(reason)s")


class FloatingIPNotRegistered(InvalidInput):
    """A required address Climate does not hold (Blazar's sentence for
    it is its ``NotEnoughFloatingIPAvailable``, 400 too)."""
    msg_fmt = "Not enough floating IPs available. %(reason)s"

    @property
    def error_name(self):
        return 'NotEnoughFloatingIPAvailable'


class NotEnoughFloatingIPs(CapacityRefusal, InvalidInput):
    """Addresses not free over the window: 400, Blazar's status (its
    ``NotEnoughFloatingIPAvailable`` is an ``InvalidInput``), though the
    same request may succeed later; the sentence says from when."""
    msg_fmt = "Not enough floating IPs available: %(reason)s"

    @property
    def error_name(self):
        return 'NotEnoughFloatingIPAvailable'


class CantUpdateFloatingIPReservation(InvalidInput):
    msg_fmt = ("Floating IP reservation cannot be updated with requested "
               "parameters. %(msg)s")


class FloatingIPsInUse(Conflict):
    """An active reservation asked to give addresses back (409 where
    Blazar answers 400: they are in use, the request is well formed)."""
    msg_fmt = ("Floating IP reservation cannot be updated with requested "
               "parameters. Cannot remove allocations from an active "
               "reservation. %(reason)s")

    @property
    def error_name(self):
        return 'CantUpdateFloatingIPReservation'


# -- network (segments): Blazar's (Chameleon's) sentences first --------------

class NetworkNotFound(NotFound):
    msg_fmt = ("Network %(network)s not found. No network segment of the "
               "inventory has this id (GET /v1/networks lists them).")


class CantDeleteNetwork(Conflict):
    msg_fmt = "Can't delete network %(network)s. %(msg)s"


class NetworkSegmentAlreadyExists(Conflict):
    msg_fmt = ("Network segment %(network_type)s %(physical_network)s "
               "%(segment_id)s is already registered: a segment is "
               "registered once per network_type and physical_network.")


class CantUpdateNetworkCapability(Conflict):
    msg_fmt = ("Can't add extracapabilities %(keys)s to Network "
               "%(network)s. %(reason)s")


class NotEnoughNetworks(CapacityRefusal, Conflict):
    """No matching segment is free over the window: Blazar's sentence,
    then how many match and from when one would be free."""
    msg_fmt = "Not enough networks available: %(reason)s"

    @property
    def error_name(self):
        return 'NotEnoughNetworksAvailable'


class CantUpdateNetworkReservation(InvalidInput):
    msg_fmt = ("Network reservation cannot be updated with requested "
               "parameters. %(msg)s")


class QuotaExceeded(ClimateException):
    """A lease beyond its project's limits (``/v1/quotas``): the limit,
    what the project would hold, and what would fit."""

    code = 403
    msg_fmt = "Quota exceeded: %(reason)s"


class ApprovalRefused(ClimateException):
    """The operator's approval service ([quotas] approval_url) said no,
    or could not be asked and Climate fails closed."""

    code = 403
    msg_fmt = "The lease was not approved: %(reason)s"
