"""The reservation API as the panels use it.

A thin layer over Climate's own REST client (``climate.cli.client``): it
builds the client from the Horizon request (the user's Keystone token and
the catalog's ``reservation`` endpoint), wraps answers so that Horizon's
tables can read them as attributes, and turns the client's errors into
exceptions Horizon's ``exceptions.handle`` recognises while keeping the
API's own message (a 409's "Not enough hosts available ..." is what the
user needs to read, not "Unable to create the lease").
"""

import json
import urllib.parse

from django.conf import settings
from django.utils.translation import gettext_lazy as _
from horizon import exceptions as horizon_exceptions
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
from openstack_dashboard.api import base

from climate.cli import client as climate_client

SERVICE_TYPE = climate_client.SERVICE_TYPE
USER_AGENT = 'climate-dashboard'


# -- errors ---------------------------------------------------------------

class ReservationError(Exception):
    """An answer of the reservation API that was not a success.

    ``message`` is the API's sentence, shown to the user as it is.
    """

    def __init__(self, message, status=None, request_id=None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.request_id = request_id

    def __str__(self):
        return self.message


# Each class is also one of Horizon's, so that ``exceptions.handle`` shows
# the message instead of re-raising an exception it does not know.
class ReservationNotFound(ReservationError, horizon_exceptions.NotFound):
    """404."""


class ReservationConflict(ReservationError, horizon_exceptions.Conflict):
    """409: not enough capacity, a quota, a lease in the wrong state."""


class ReservationBadRequest(ReservationError,
                            horizon_exceptions.BadRequest):
    """400: input the API refused, with its reason."""


class ReservationUnavailable(ReservationError,
                             horizon_exceptions.NotAvailable):
    """Any other failure: refused by policy, unreachable, a server
    error."""


_BY_STATUS = {404: ReservationNotFound, 409: ReservationConflict,
              400: ReservationBadRequest}


def translate_error(exc):
    """The Horizon-aware exception of a client error."""
    if isinstance(exc, climate_client.APIError):
        cls = _BY_STATUS.get(exc.status, ReservationUnavailable)
        return cls(exc.message, exc.status, exc.request_id)
    return ReservationUnavailable(str(exc))


class _Translating:
    """Calls of a client manager, with its errors translated."""

    def __init__(self, target):
        self._target = target

    def __getattr__(self, name):
        method = getattr(self._target, name)

        def call(*args, **kwargs):
            try:
                return method(*args, **kwargs)
            except climate_client.ClientError as exc:
                raise translate_error(exc) from exc
        return call


# -- the client -----------------------------------------------------------

def endpoint_of(request):
    """The API's URL in the catalog of the user's token."""
    try:
        return base.url_for(request, SERVICE_TYPE)
    except horizon_exceptions.ServiceCatalogException:
        # the panels are hidden then; a page reached anyway says why
        raise ReservationUnavailable(
            str(_('The service catalog has no %s endpoint.') %
                SERVICE_TYPE))


def session_of(request):
    """A keystoneauth session that sends the user's token."""
    auth = token_endpoint.Token(endpoint_of(request), request.user.token.id)
    insecure = getattr(settings, 'OPENSTACK_SSL_NO_VERIFY', False)
    cacert = getattr(settings, 'OPENSTACK_SSL_CACERT', None)
    return ks_session.Session(auth=auth,
                              verify=False if insecure else (cacert or True))


class _Client:
    """``climate.cli.client.Client``'s managers with translated errors."""

    def __init__(self, raw):
        self.raw = raw

    def __getattr__(self, name):
        return _Translating(getattr(self.raw, name))

    def request(self, *args, **kwargs):
        return _Translating(self.raw).request(*args, **kwargs)


def client(request):
    """The reservation API client of this Horizon request."""
    raw = climate_client.Client(session_of(request), endpoint_of(request),
                                user_agent=USER_AGENT)
    return _Client(raw)


# -- values the tables read -----------------------------------------------

class Value:
    """An API object (a dict) read as attributes, as Horizon's tables and
    templates read their rows: ``lease.end_date``.

    A field of ``OPTIONAL`` the answer lacks reads as None (older
    microversions omit some); any other missing name is an
    AttributeError, so that Horizon's ``hasattr`` checks (``to_dict``...)
    stay false.
    """

    OPTIONAL = ()

    def __init__(self, fields):
        self.fields = dict(fields)

    def __getattr__(self, name):
        if name == 'fields':  # before __init__ set it (copy, pickle)
            raise AttributeError(name)
        if name in self.fields:
            return self.fields[name]
        if name in self.OPTIONAL:
            return None
        raise AttributeError(name)

    def __eq__(self, other):
        return type(other) is type(self) and other.fields == self.fields

    def __repr__(self):
        return '%s(%r)' % (type(self).__name__, self.fields)


class Lease(Value):
    OPTIONAL = ('id', 'name', 'status', 'status_reason', 'lease_type',
                'start_date', 'end_date', 'before_end_date', 'project_id',
                'reservations', 'events', 'max_retries', 'retry_attempts',
                'next_attempt_at', 'created_at', 'updated_at')

    @property
    def resource_types(self):
        """The types of its reservations, e.g. ``physical:host``."""
        return sorted({r.get('resource_type', '')
                       for r in self.fields.get('reservations') or []})


class Host(Value):
    OPTIONAL = ('id', 'hypervisor_hostname', 'hypervisor_type', 'vcpus',
                'memory_mb', 'local_gb', 'reservable')

    @property
    def name(self):
        return self.fields.get('hypervisor_hostname') or \
            self.fields.get('name')


class Row(Value):
    """A row of a table built here (a window, a usage total, a quota):
    ``id`` is given, the rest is the dict's."""

    def __init__(self, row_id, values):
        super().__init__(dict(values, id=row_id))


# -- leases ---------------------------------------------------------------

def lease_list(request, marker=None, limit=None, sort_dir='desc',
               status=None, name=None, time_from=None, time_to=None):
    """``(leases, has_more)``: one page of the 1.1 listing.

    One more lease than the page holds is asked for, so that the table
    knows whether a next page exists without a second call.
    """
    asked = limit + 1 if limit else None
    leases = client(request).leases.list(
        limit=asked, marker=marker, sort_key='created_at',
        sort_dir=sort_dir, status=status, name=name, time_from=time_from,
        time_to=time_to, all_pages=False)
    has_more = bool(limit) and len(leases) > limit
    if has_more:
        leases = leases[:limit]
    return [Lease(lease) for lease in leases], has_more


def lease_window(request, time_from, time_to, limit, marker=None):
    """``(leases, has_more)``: a page of the project's leases overlapping
    ``[time_from, time_to)`` (API dates), in the order of their starts
    (the 1.1 listing's ``time_from``/``time_to`` filters, keyset pages:
    a page costs the same whatever the number of leases)."""
    leases = client(request).leases.list(
        limit=limit + 1, marker=marker, sort_key='start_date',
        sort_dir='asc', time_from=time_from, time_to=time_to,
        all_pages=False)
    has_more = len(leases) > limit
    return [Lease(lease) for lease in leases[:limit]], has_more


def lease_get(request, lease_id):
    return Lease(client(request).leases.get(lease_id))


def lease_create(request, body):
    return Lease(client(request).leases.create(body))


def lease_update(request, lease_id, body):
    return Lease(client(request).leases.update(lease_id, body))


def lease_delete(request, lease_id):
    client(request).leases.delete(lease_id)


def lease_confirm(request, lease_id):
    """A temporary hold becomes its lease (microversion 1.14)."""
    return Lease(client(request).leases.confirm(lease_id))


# -- recurring series (1.15) -----------------------------------------------

class Series(Value):
    OPTIONAL = ('id', 'name', 'project_id', 'recurrence', 'status',
                'status_reason', 'first_occurrence', 'start_date',
                'end_date', 'next_occurrence', 'next_start_date',
                'occurrences', 'skipped', 'created_at', 'updated_at')

    def _rule(self, key):
        return (self.fields.get('recurrence') or {}).get(key)

    @property
    def rrule(self):
        return self._rule('rrule')

    @property
    def timezone(self):
        return self._rule('timezone')

    @property
    def on_conflict(self):
        return self._rule('on_conflict')

    @property
    def booked(self):
        return len(self.fields.get('occurrences') or [])

    @property
    def skipped_count(self):
        return len(self.fields.get('skipped') or [])


def series_list(request):
    """The project's recurring series (``/v1/lease-series``, 1.15)."""
    return [Series(s) for s in client(request).lease_series.list()]


def series_get(request, series_id):
    return Series(client(request).lease_series.get(series_id))


def series_create(request, body):
    """A lease create body with its ``recurrence``: the occurrences
    within the service's horizon booked at once."""
    return Series(client(request).lease_series.create(body))


def series_delete(request, series_id):
    """Cancels: the occurrences not started are deleted."""
    client(request).lease_series.delete(series_id)


# -- hosts (admin) --------------------------------------------------------

def host_list(request):
    return [Host(h) for h in client(request).hosts.list()]


def host_get(request, host_id):
    return Host(client(request).hosts.get(host_id))


def host_create(request, name, extra=None):
    body = dict(extra or {}, name=name)
    return Host(client(request).hosts.create(body))


def host_delete(request, host_id):
    client(request).hosts.delete(host_id)


# -- other inventories (admin) --------------------------------------------

class VolumePool(Value):
    OPTIONAL = ('id', 'name', 'backend', 'capacity_gb', 'total_capacity_gb',
                'reserved_percentage', 'max_over_subscription_ratio',
                'reservable', 'capabilities')


class FloatingIP(Value):
    OPTIONAL = ('id', 'floating_network_id', 'floating_ip_address',
                'subnet_id', 'reservable')

    @property
    def name(self):
        return self.fields.get('floating_ip_address') or self.fields.get('id')


class Network(Value):
    """A network segment; the keys beside :data:`FIELDS` are its extra
    capabilities."""
    FIELDS = ('id', 'network_type', 'physical_network', 'segment_id',
              'reservable', 'created_at', 'updated_at')
    OPTIONAL = FIELDS

    @property
    def name(self):
        parts = [self.fields.get('network_type'),
                 self.fields.get('physical_network'),
                 self.fields.get('segment_id')]
        return ' '.join(str(p) for p in parts if p not in (None, '')) or \
            self.fields.get('id')

    @property
    def extra_capabilities(self):
        return {k: v for k, v in self.fields.items()
                if k not in self.FIELDS}


def volume_pool_list(request):
    """``/v1/volume-pools`` (microversion 1.5)."""
    return [VolumePool(p) for p in client(request).volume_pools.list()]


def volume_pool_create(request, body):
    return VolumePool(client(request).volume_pools.create(body))


def volume_pool_delete(request, pool_id):
    client(request).volume_pools.delete(pool_id)


def floatingip_list(request):
    return [FloatingIP(f) for f in client(request).floatingips.list()]


def floatingip_create(request, network_id, address):
    return FloatingIP(client(request).floatingips.create(
        {'floating_network_id': network_id, 'floating_ip_address': address}))


def floatingip_delete(request, fip_id):
    client(request).floatingips.delete(fip_id)


def network_list(request):
    return [Network(n) for n in client(request).networks.list()]


def network_create(request, body):
    return Network(client(request).networks.create(body))


def network_delete(request, network_id):
    client(request).networks.delete(network_id)


# -- maintenance windows (1.16, admin) ------------------------------------

MAINTENANCE_VERSION = '1.16'
MAINTENANCE_PATH = '/maintenance-windows'


class MaintenanceWindow(Value):
    OPTIONAL = ('id', 'name', 'reason', 'start_date', 'end_date', 'hosts',
                'affected', 'status', 'lease_id', 'dry_run', 'project_id',
                'created_at', 'updated_at')

    @property
    def host_names(self):
        return ', '.join(h.get('name') or h.get('id') or ''
                         for h in self.fields.get('hosts') or [])

    @property
    def hit_count(self):
        return len(self.fields.get('affected') or [])


def _maintenance(request, method, path='', body=None):
    return client(request).request(method, MAINTENANCE_PATH + path,
                                   body=body, version=MAINTENANCE_VERSION)


def maintenance_list(request):
    return [MaintenanceWindow(w) for w in
            _maintenance(request, 'GET')['maintenance_windows']]


def maintenance_plan(request, body):
    """The window's plan (``dry_run``: nothing written): the leases hit
    and each one's ``options``."""
    return MaintenanceWindow(_maintenance(
        request, 'POST', body=dict(body, dry_run=True))['maintenance_window'])


def maintenance_apply(request, body, actions=None, default_action=None):
    """The window applied, with an action per lease hit (``actions``:
    lease id -> move/shorten/leave) and/or a ``default_action``: all of
    it or, refused, nothing."""
    body = dict(body)
    body.pop('dry_run', None)
    if actions:
        body['actions'] = dict(actions)
    if default_action:
        body['default_action'] = default_action
    return MaintenanceWindow(_maintenance(
        request, 'POST', body=body)['maintenance_window'])


def maintenance_delete(request, window_id):
    _maintenance(request, 'DELETE',
                 '/%s' % urllib.parse.quote(str(window_id), safe=''))


# -- availability ---------------------------------------------------------

def host_availability(request, count, duration, earliest_start=None,
                      latest_end=None, hypervisor_properties=None,
                      resource_properties=None, limit=None):
    """When ``count`` matching hosts are free for ``duration`` (counts
    and times only: the API shows a member no host)."""
    query = {'count': count, 'duration': duration}
    for key, value in (('earliest_start', earliest_start),
                       ('latest_end', latest_end),
                       ('hypervisor_properties', hypervisor_properties),
                       ('resource_properties', resource_properties),
                       ('limit', limit)):
        if value:
            query[key] = value
    return client(request).hosts.availability(query)


def host_timeline(request, time_from, time_to):
    """The count of free reservable hosts over ``[time_from, time_to)``
    (API dates), as segments of constant count: the API aggregates, the
    answer does not grow with the inventory."""
    return client(request).hosts.timeline(
        {'time_from': time_from, 'time_to': time_to})


# -- usage, quotas, health ------------------------------------------------

def usage_get(request, start=None, end=None, project_id=None):
    """A project's reserved hours over a period (the current month by
    default): the user's project, or the one an administrator names
    (the API refuses another project to anyone else:
    ``climate:usage:get:all_projects``)."""
    return client(request).usage.get(
        project_id=project_id or request.user.project_id, start=start,
        end=end)


def quota_get(request, project_id=None):
    """A project's limits and what it holds against them (the user's
    project unless an administrator names another)."""
    return client(request).quotas.get(project_id or request.user.project_id)


def quota_list(request):
    """``GET /v1/quotas`` (administrators): the default limits and the
    projects with limits of their own."""
    return client(request).quotas.list()


def health_get(request):
    """``/v1/health``'s report, a failing one included.

    The API answers a failing check with 503 and the same report as the
    body; the client hands that body over as the error's text.
    """
    try:
        return client(request).request('GET', '/health')
    except ReservationUnavailable as exc:
        if exc.status == 503:
            try:
                report = json.loads(exc.message)
            except ValueError:
                raise exc
            if isinstance(report, dict) and 'checks' in report:
                return report
        raise
