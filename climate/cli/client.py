"""Climate's v1 REST API over a keystoneauth session.

The session carries the authentication (a Keystone token, or none at all
for an API running with ``auth_strategy = noauth``); this module only
builds requests, asks for the microversion each call needs and turns an
error answer into :class:`APIError` with the server's message and request
id.  It has no command-line knowledge and can be used on its own::

    from keystoneauth1 import session
    c = client.Client(session.Session(), 'http://127.0.0.1:1234')
    c.leases.list()
"""

import re
import urllib.parse

from keystoneauth1 import adapter
from keystoneauth1 import exceptions as ksa_exc

SERVICE_TYPE = 'reservation'
VERSION_HEADER = 'OpenStack-API-Version'
REQUEST_ID_HEADERS = ('x-openstack-request-id', 'x-compute-request-id')
# 1.1: pagination and filters of GET /v1/leases
LIST_VERSION = '1.1'
# 1.2: host availability search and free-capacity timeline
AVAILABILITY_VERSION = '1.2'
# 1.3: instance slot availability search
INSTANCE_AVAILABILITY_VERSION = '1.3'
# 1.4: pre-created instance reservations (server_id, server, on_end)
PRECREATED_VERSION = '1.4'
# 1.5: /v1/volume-pools
VOLUME_POOLS_VERSION = '1.5'
# 1.6: volume availability search, and the volume pools' allocations
VOLUME_AVAILABILITY_VERSION = '1.6'
# 1.7: /v1/webhooks
WEBHOOKS_VERSION = '1.7'
# 1.15: /v1/lease-series
SERIES_VERSION = '1.15'
# 1.16: /v1/maintenance-windows
MAINTENANCE_VERSION = '1.16'
# 1.17: /v1/idle-policies, keep_idle
IDLE_VERSION = '1.17'
# 1.8: /v1/usage
USAGE_VERSION = '1.8'
# 1.9: /v1/quotas
QUOTAS_VERSION = '1.9'
# 1.10: /v1/billing
BILLING_VERSION = '1.10'
# 1.11: lease types, and their states shown as they are
LEASE_TYPES_VERSION = '1.11'
# 1.12: the hosts' power states, history and energy saved
POWER_VERSION = '1.12'
# 1.13: the hosts' measured idle watts in the power and energy answers;
# asked first, 1.12 again from an API that does not serve it (406)
WATTS_VERSION = '1.13'
_POWER_VERSIONS = (WATTS_VERSION, POWER_VERSION)
# 1.14: temporary holds (hold_for, /confirm) and their states; a lease
# is read at 1.14 first, at 1.11 again from an API that does not serve it
HOLDS_VERSION = '1.14'
_LEASE_READ_VERSIONS = (HOLDS_VERSION, LEASE_TYPES_VERSION)
PRECREATED_FIELDS = ('server_id', 'server', 'on_end')
LEASE_TYPE_FIELDS = ('lease_type', 'max_retries')


def _version_of(body):
    """The microversion a lease body needs: 1.17 asking to be kept when
    idle, 1.14 with a hold, 1.11 with a lease type, 1.4 when a
    reservation uses the pre-created fields, else the default."""
    if 'keep_idle' in body:
        return IDLE_VERSION
    if 'hold_for' in body:
        return HOLDS_VERSION
    if any(key in body for key in LEASE_TYPE_FIELDS):
        return LEASE_TYPES_VERSION
    for res in body.get('reservations') or []:
        if any(key in res for key in PRECREATED_FIELDS):
            return PRECREATED_VERSION
    return None


class ClientError(Exception):
    """Anything that kept a call from getting an answer."""


class APIError(ClientError):
    """The API answered with an error status."""

    def __init__(self, status, message, name=None, request_id=None):
        self.status = status
        self.message = message
        self.name = name
        self.request_id = request_id
        super().__init__(str(self))

    def __str__(self):
        text = '%s (HTTP %d)' % (self.message, self.status)
        if self.request_id:
            text += ' (Request-ID: %s)' % self.request_id
        return text


class NotFound(ClientError):
    """No resource has that id or name."""


class Ambiguous(ClientError):
    """Several resources have that name."""


def normalize_endpoint(url):
    """The /v1 root of the API, from a catalog entry or a bare host URL.

    Blazar's catalog entries end with ``/v1``; a bare ``http://host:port``
    (as typed for the embedded default) gets it appended.
    """
    url = url.rstrip('/')
    if not urllib.parse.urlsplit(url).path.rstrip('/').endswith('/v1'):
        url += '/v1'
    return url


def _error_from(resp):
    request_id = None
    for name in REQUEST_ID_HEADERS:
        if resp.headers.get(name):
            request_id = resp.headers[name]
            break
    message, name = None, None
    try:
        body = resp.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        message = body.get('error_message') or body.get('message')
        name = body.get('error_name')
        if message is None and isinstance(body.get('error'), dict):
            message = body['error'].get('message')
    if not message:
        message = (resp.text or '').strip() or resp.reason or 'error'
    return APIError(resp.status_code, str(message), name, request_id)


class _Manager:
    def __init__(self, client):
        self.client = client

    def _call(self, *args, **kwargs):
        return self.client.request(*args, **kwargs)

    def _by_id_or_name(self, name_or_id, kind, plural, matching,
                       missing=(404,)):
        """The item with this id (``get``), else the only one of
        ``matching()`` (those named ``name_or_id``); NotFound or
        Ambiguous saying so.  ``missing``: the statuses that say no item
        has this id."""
        try:
            return self.get(name_or_id)
        except APIError as exc:
            if exc.status not in missing:
                raise
        matches = matching()
        if not matches:
            raise NotFound('No %s with a name or id of %r exists.' % (
                kind, name_or_id))
        if len(matches) > 1:
            raise Ambiguous('%d %s are named %r; use an id: %s.' % (
                len(matches), plural, name_or_id,
                ', '.join(str(m['id']) for m in matches)))
        return matches[0]

    def _call_newest(self, versions, *args, **kwargs):
        """A call at the first of ``versions`` the API serves (newest
        first): an older API answers a newer microversion 406."""
        for version in versions[:-1]:
            try:
                return self._call(*args, version=version, **kwargs)
            except APIError as exc:
                # a version forced by the user is not negotiated
                if exc.status != 406 or self.client.api_version:
                    raise
        return self._call(*args, version=versions[-1], **kwargs)


class Leases(_Manager):
    """/v1/leases."""

    def list(self, limit=None, marker=None, sort_key=None, sort_dir=None,
             status=None, name=None, project_id=None, time_from=None,
             time_to=None, all_pages=None):
        """Leases, newest API version's filters and pagination.

        :param all_pages: follow the ``next`` links to the end (default:
            when no ``limit`` is given).
        """
        params = {k: v for k, v in (
            ('limit', limit), ('marker', marker), ('sort_key', sort_key),
            ('sort_dir', sort_dir), ('name', name),
            ('project_id', project_id), ('time_from', time_from),
            ('time_to', time_to)) if v is not None}
        if status:
            params['status'] = ','.join(status)
        if all_pages is None:
            all_pages = limit is None
        leases = []
        while True:
            # 1.11 has 1.1's pagination, and shows every state as it is
            # (1.14 the holds' too)
            body = self._call_newest(_LEASE_READ_VERSIONS, 'GET', '/leases',
                                     params=params)
            page = body.get('leases', [])
            leases.extend(page)
            if not (all_pages and page and body.get('leases_links')):
                return leases
            params['marker'] = page[-1]['id']

    def get(self, lease_id):
        return self._call_newest(_LEASE_READ_VERSIONS, 'GET',
                                 '/leases/%s' % _quote(lease_id))['lease']

    def confirm(self, lease_id):
        """A temporary hold becomes its lease (1.14)."""
        return self._call('POST', '/leases/%s/confirm' % _quote(lease_id),
                          version=HOLDS_VERSION)['lease']

    def create(self, body):
        return self._call('POST', '/leases', body=body,
                          version=_version_of(body))['lease']

    def update(self, lease_id, body):
        return self._call('PUT', '/leases/%s' % _quote(lease_id),
                          body=body, version=_version_of(body))['lease']

    def delete(self, lease_id):
        self._call('DELETE', '/leases/%s' % _quote(lease_id))

    def find(self, name_or_id):
        """The lease with this id, or the only one with this name."""
        return self._by_id_or_name(name_or_id, 'lease', 'leases',
                                   lambda: self.list(name=name_or_id))


class Hosts(_Manager):
    """/v1/os-hosts (Blazar's host API)."""

    def list(self):
        return self._call('GET', '/os-hosts')['hosts']

    def get(self, host_id):
        return self._call('GET', '/os-hosts/%s' % _quote(host_id))['host']

    def create(self, body):
        return self._call('POST', '/os-hosts', body=body)['host']

    def update(self, host_id, body):
        return self._call('PUT', '/os-hosts/%s' % _quote(host_id),
                          body=body)['host']

    def delete(self, host_id):
        self._call('DELETE', '/os-hosts/%s' % _quote(host_id))

    def find(self, name_or_id):
        """The host with this id, or the only one with this hostname."""
        # Blazar answers 400 or 404 for an id that is not a number
        return self._by_id_or_name(
            name_or_id, 'host', 'hosts', lambda: [
                h for h in self.list()
                if name_or_id in (h.get('hypervisor_hostname'),
                                  h.get('name'))], missing=(400, 404))

    def allocations(self, lease_id=None, reservation_id=None):
        return self._call('GET', '/os-hosts/allocations',
                          params=_holders(lease_id, reservation_id))[
                              'allocations']

    def allocation(self, host_id):
        return self._call('GET', '/os-hosts/%s/allocation' %
                          _quote(host_id))['allocation']

    def power_list(self):
        """Every host's power state, as the power planner keeps it."""
        return self._call_newest(_POWER_VERSIONS, 'GET', '/os-hosts/power')[
            'hosts_power']

    def power(self, host_id, start=None, end=None):
        """One host's power state, history and energy saved over
        ``[start, end)`` (the server's default: the last 7 days)."""
        params = {k: v for k, v in (('start', start), ('end', end)) if v}
        return self._call_newest(
            _POWER_VERSIONS, 'GET', '/os-hosts/%s/power' % _quote(host_id),
            params=params)['host_power']

    def properties(self, detail=False, all_properties=False):
        params = {}
        if detail:
            params['detail'] = 'True'
        if all_properties:
            params['all'] = 'True'
        return self._call('GET', '/os-hosts/properties',
                          params=params)['resource_properties']

    def availability(self, query):
        """When ``count`` matching hosts are free for ``duration``."""
        return self._call('POST', '/os-hosts/availability', body=query,
                          version=AVAILABILITY_VERSION)['availability']

    def timeline(self, query):
        """Free matching hosts over a range, as segments."""
        return self._call('POST', '/os-hosts/timeline', body=query,
                          version=AVAILABILITY_VERSION)['timeline']

    def set_property(self, name, private):
        return self._call('PATCH', '/os-hosts/properties/%s' % _quote(name),
                          body={'private': private})['resource_property']


class Instances(_Manager):
    """/v1/instances (instance slots, ``virtual:instance``)."""

    def availability(self, query):
        """When ``amount`` slots of a shape fit for ``duration`` (or how
        many fit over ``start_date``-``end_date``)."""
        return self._call('POST', '/instances/availability', body=query,
                          version=INSTANCE_AVAILABILITY_VERSION)[
                              'availability']


class Volumes(_Manager):
    """/v1/volumes (volume capacity, ``virtual:volume``)."""

    def availability(self, query):
        """When a volume reservation (``size_gb``...) fits for
        ``duration`` (or whether it fits over ``start_date``-``end_date``),
        with the gigabytes free."""
        return self._call('POST', '/volumes/availability', body=query,
                          version=VOLUME_AVAILABILITY_VERSION)['availability']


class Usage(_Manager):
    """/v1/usage (microversion 1.8)."""

    def get(self, project_id=None, start=None, end=None, by_lease=False):
        """A project's reserved resource-hours over a period (the
        caller's project and the current month by default), per lease
        too with ``by_lease``."""
        params = {k: v for k, v in (('project_id', project_id),
                                    ('start', start), ('end', end))
                  if v is not None}
        if by_lease:
            params['by_lease'] = 'true'
        return self._call('GET', '/usage', params=params,
                          version=USAGE_VERSION)['usage']

    def capacity(self, start=None, end=None, step=None,
                 resource_class=None):
        """Reserved against reservable capacity by class, step by step
        (administrators)."""
        params = {k: v for k, v in (('start', start), ('end', end),
                                    ('step', step),
                                    ('resource_class', resource_class))
                  if v is not None}
        return self._call('GET', '/usage/capacity', params=params,
                          version=USAGE_VERSION)['capacity']

    def energy(self, start=None, end=None, step=None):
        """What powering unbooked hosts off saved over a period (this
        month by default), step by step and per host (administrators)."""
        params = {k: v for k, v in (('start', start), ('end', end),
                                    ('step', step)) if v is not None}
        return self._call_newest(_POWER_VERSIONS, 'GET', '/usage/energy',
                                 params=params)['energy']


class LeaseSeries(_Manager):
    """/v1/lease-series (microversion 1.15): recurring leases."""

    def _series(self, method, path, **kwargs):
        return self._call(method, '/lease-series' + path,
                          version=SERIES_VERSION, **kwargs)

    def list(self, project_id=None):
        params = {'project_id': project_id} if project_id else None
        return self._series('GET', '', params=params)['lease_series']

    def get(self, series_id):
        return self._series('GET', '/%s' % _quote(series_id))['lease_series']

    def create(self, body):
        return self._series('POST', '', body=body)['lease_series']

    def update(self, series_id, body):
        return self._series('PUT', '/%s' % _quote(series_id),
                            body=body)['lease_series']

    def delete(self, series_id):
        self._series('DELETE', '/%s' % _quote(series_id))

    def find(self, name_or_id):
        """The series with this id, or the one with this name (names
        are unique within a project; an administrator may see several)."""
        return self._by_id_or_name(
            name_or_id, 'lease series', 'series', lambda: [
                s for s in self.list() if s['name'] == name_or_id])


class Maintenance(_Manager):
    """/v1/maintenance-windows (microversion 1.16, administrators)."""

    def _window(self, method, path, **kwargs):
        return self._call(method, '/maintenance-windows' + path,
                          version=MAINTENANCE_VERSION, **kwargs)

    def list(self):
        return self._window('GET', '')['maintenance_windows']

    def get(self, window_id):
        return self._window('GET', '/%s' % _quote(window_id))[
            'maintenance_window']

    def create(self, body):
        return self._window('POST', '', body=body)['maintenance_window']

    def delete(self, window_id):
        self._window('DELETE', '/%s' % _quote(window_id))

    def find(self, name_or_id):
        """The window with this id or name (names are unique)."""
        return self._by_id_or_name(
            name_or_id, 'maintenance window', 'maintenance windows',
            lambda: [w for w in self.list() if w['name'] == name_or_id])


class IdlePolicies(_Manager):
    """/v1/idle-policies (microversion 1.17)."""

    def _policy(self, method, path, **kwargs):
        return self._call(method, '/idle-policies' + path,
                          version=IDLE_VERSION, **kwargs)

    def list(self):
        return self._policy('GET', '')['idle_policies']

    def get(self, project_id):
        return self._policy('GET', '/%s' % _quote(project_id))['idle_policy']

    def set(self, project_id, body):
        return self._policy('PUT', '/%s' % _quote(project_id),
                            body=body)['idle_policy']

    def delete(self, project_id):
        self._policy('DELETE', '/%s' % _quote(project_id))


class Webhooks(_Manager):
    """/v1/webhooks (microversion 1.7): a project's endpoints for its
    leases' notices; the secret is write-only."""

    def _hook(self, method, path, **kwargs):
        return self._call(method, '/webhooks' + path,
                          version=WEBHOOKS_VERSION, **kwargs)

    def list(self, project_id=None):
        params = {'project_id': project_id} if project_id else None
        return self._hook('GET', '', params=params)['webhooks']

    def get(self, webhook_id):
        return self._hook('GET', '/%s' % _quote(webhook_id))['webhook']

    def create(self, body):
        return self._hook('POST', '', body=body)['webhook']

    def delete(self, webhook_id):
        self._hook('DELETE', '/%s' % _quote(webhook_id))

    def deliveries(self, webhook_id, limit=None):
        """The delivery log, newest first."""
        params = {'limit': limit} if limit else None
        return self._hook('GET', '/%s/deliveries' % _quote(webhook_id),
                          params=params)['deliveries']

    def find(self, webhook_id):
        """The webhook with this id (webhooks have no name)."""
        try:
            return self.get(webhook_id)
        except APIError as exc:
            if exc.status != 404:
                raise
        raise NotFound('No webhook with an id of %r exists.' % webhook_id)


class Billing(_Manager):
    """/v1/billing (microversion 1.10)."""

    def get(self, project_id=None, start=None, end=None,
            all_projects=False):
        """The bill of a period: the caller's project, another or every
        project (administrators)."""
        params = {k: v for k, v in (('project_id', project_id),
                                    ('start', start), ('end', end))
                  if v is not None}
        if all_projects:
            params['all_projects'] = 'true'
        return self._call('GET', '/billing', params=params,
                          version=BILLING_VERSION)['billing']

    def rates(self):
        return self._call('GET', '/billing/rates',
                          version=BILLING_VERSION)['rates']

    def set_rates(self, rates):
        return self._call('PUT', '/billing/rates', body=rates,
                          version=BILLING_VERSION)['rates']


class Quotas(_Manager):
    """/v1/quotas (microversion 1.9)."""

    def list(self):
        """The defaults and the projects with limits of their own
        (administrators)."""
        return self._call('GET', '/quotas', version=QUOTAS_VERSION)['quotas']

    def get(self, project_id):
        return self._call('GET', '/quotas/%s' % _quote(project_id),
                          version=QUOTAS_VERSION)['quota']

    def update(self, project_id, body):
        return self._call('PUT', '/quotas/%s' % _quote(project_id),
                          body=body, version=QUOTAS_VERSION)['quota']

    def delete(self, project_id):
        self._call('DELETE', '/quotas/%s' % _quote(project_id),
                   version=QUOTAS_VERSION)


class VolumePools(_Manager):
    """/v1/volume-pools (microversion 1.5, admin)."""

    def _pool(self, method, path, **kwargs):
        return self._call(method, '/volume-pools' + path,
                          version=VOLUME_POOLS_VERSION, **kwargs)

    def list(self):
        return self._pool('GET', '')['volume_pools']

    def get(self, pool_id):
        return self._pool('GET', '/%s' % _quote(pool_id))['volume_pool']

    def create(self, body):
        return self._pool('POST', '', body=body)['volume_pool']

    def update(self, pool_id, body):
        return self._pool('PUT', '/%s' % _quote(pool_id),
                          body=body)['volume_pool']

    def delete(self, pool_id):
        self._pool('DELETE', '/%s' % _quote(pool_id))

    def allocations(self, lease_id=None, reservation_id=None):
        """Every pool with the reservations holding it (1.6)."""
        return self._call('GET', '/volume-pools/allocations',
                          params=_holders(lease_id, reservation_id),
                          version=VOLUME_AVAILABILITY_VERSION)['allocations']

    def find(self, name_or_id):
        """The pool with this id, or the one with this name."""
        if str(name_or_id).isdigit():
            try:
                return self.get(name_or_id)
            except APIError as exc:
                if exc.status != 404:
                    raise
        matches = [p for p in self.list() if p.get('name') == name_or_id]
        if not matches:
            raise NotFound('No volume pool with a name or id of %r exists.'
                           % name_or_id)
        return matches[0]


class FloatingIPs(_Manager):
    """/v1/floatingips (Blazar's 1.0 API, admin)."""

    def list(self):
        return self._call('GET', '/floatingips')['floatingips']

    def get(self, fip_id):
        return self._call('GET', '/floatingips/%s' % _quote(fip_id))[
            'floatingip']

    def create(self, body):
        return self._call('POST', '/floatingips', body=body)['floatingip']

    def delete(self, fip_id):
        self._call('DELETE', '/floatingips/%s' % _quote(fip_id))

    def find(self, ref):
        """The floating IP with this id, or the one(s) with this
        address (one network's: an address on two networks is
        ambiguous)."""
        try:
            return self.get(ref)
        except APIError as exc:
            if exc.status != 404:
                raise
        matches = [f for f in self.list()
                   if f.get('floating_ip_address') == ref]
        if not matches:
            raise NotFound('No floating IP with an id or address of %r '
                           'exists.' % ref)
        if len(matches) > 1:
            raise Ambiguous('%d networks have floating IP %s; use an id: '
                            '%s.' % (len(matches), ref, ', '.join(
                                m['id'] for m in matches)))
        return matches[0]


class Networks(_Manager):
    """/v1/networks (Blazar's 1.0 API, admin): reservable segments."""

    def list(self):
        return self._call('GET', '/networks')['networks']

    def get(self, network_id):
        return self._call('GET', '/networks/%s' % _quote(network_id))[
            'network']

    def create(self, body):
        return self._call('POST', '/networks', body=body)['network']

    def update(self, network_id, body):
        return self._call('PUT', '/networks/%s' % _quote(network_id),
                          body=body)['network']

    def delete(self, network_id):
        self._call('DELETE', '/networks/%s' % _quote(network_id))

    def find(self, ref):
        """The segment with this id, or the one named ``type:physnet:seg``
        (``vxlan:5000``, ``vlan:physnet1:1001``)."""
        try:
            return self.get(ref)
        except APIError as exc:
            if exc.status != 404:
                raise
        matches = [n for n in self.list() if ':'.join(
            str(n.get(k)) for k in ('network_type', 'physical_network',
                                    'segment_id')
            if n.get(k) not in (None, '')) == ref]
        if not matches:
            raise NotFound('No network segment with an id or name (such as '
                           'vlan:physnet1:1001) of %r exists.' % ref)
        return matches[0]


def _holders(lease_id, reservation_id):
    """The query of an allocations listing."""
    return {k: v for k, v in (('lease_id', lease_id),
                              ('reservation_id', reservation_id))
            if v is not None}


def _quote(value):
    return urllib.parse.quote(str(value), safe='')


class Client:
    """The v1 API.

    :param session: a keystoneauth1 session (its auth may be None: noauth).
    :param endpoint: the API's URL; None to find the ``reservation``
        service in the catalog of the session's token.
    :param api_version: force this microversion on every call instead of
        the one each call needs.
    :param headers: extra headers on every request (the noauth identity).
    """

    def __init__(self, session, endpoint=None, interface=None,
                 region_name=None, api_version=None, headers=None,
                 user_agent='climate-cli'):
        self.api_version = api_version
        if endpoint is None:
            try:
                endpoint = session.get_endpoint(
                    service_type=SERVICE_TYPE, interface=interface,
                    region_name=region_name)
            except ksa_exc.EndpointNotFound:
                endpoint = None
            if not endpoint:
                raise ClientError(
                    'The service catalog has no %r endpoint%s%s; give the '
                    'API URL with --os-endpoint.' % (
                        SERVICE_TYPE,
                        ' (interface %s)' % interface if interface else '',
                        ' in region %s' % region_name if region_name
                        else ''))
        self.endpoint = normalize_endpoint(endpoint)
        self._adapter = adapter.Adapter(
            session, service_type=SERVICE_TYPE, interface=interface,
            region_name=region_name, endpoint_override=self.endpoint,
            user_agent=user_agent, additional_headers=dict(headers or {}))
        self.leases = Leases(self)
        self.hosts = Hosts(self)
        self.instances = Instances(self)
        self.volumes = Volumes(self)
        self.volume_pools = VolumePools(self)
        self.webhooks = Webhooks(self)
        self.lease_series = LeaseSeries(self)
        self.maintenance = Maintenance(self)
        self.idle_policies = IdlePolicies(self)
        self.usage = Usage(self)
        self.quotas = Quotas(self)
        self.billing = Billing(self)
        self.floatingips = FloatingIPs(self)
        self.networks = Networks(self)

    def request(self, method, path, body=None, params=None, version=None):
        """One call; the decoded JSON answer ({} for an empty one).

        :raises APIError: the API answered 4xx/5xx.
        :raises ClientError: the API could not be reached.
        """
        headers = {'Accept': 'application/json'}
        version = self.api_version or version
        if version:
            headers[VERSION_HEADER] = '%s %s' % (SERVICE_TYPE, version)
        kwargs = {'headers': headers, 'raise_exc': False}
        if body is not None:
            kwargs['json'] = body
        if params:
            kwargs['params'] = params
        try:
            resp = self._adapter.request(path, method, **kwargs)
        except ksa_exc.ConnectFailure as exc:
            raise ClientError('Cannot reach the reservation API at %s: %s'
                              % (self.endpoint, _reason(exc)))
        except ksa_exc.ConnectTimeout as exc:
            raise ClientError('The reservation API at %s did not answer: %s'
                              % (self.endpoint, _reason(exc)))
        except ksa_exc.ClientException as exc:
            raise ClientError(str(exc))
        if resp.status_code >= 400:
            raise _error_from(resp)
        if not resp.content:
            return {}
        try:
            return resp.json()
        except ValueError:
            raise ClientError('The reservation API answered %s %s with '
                              'something other than JSON (HTTP %d)' % (
                                  method, path, resp.status_code))


def _reason(exc):
    # keystoneauth wraps urllib3's error, whose text repeats the URL
    text = str(exc)
    match = re.search(r'(\[Errno [^\]]*\][^"\')]*)', text)
    return match.group(1) if match else text
