"""A small Neutron client on keystoneauth sessions (``[neutron]``).

What the floating IP and network reservations need of Neutron's
networking API v2.0 and nothing more: read a network and its subnets,
list, create, tag, update and delete floating IPs; list, create, tag and
delete networks, delete their subnets and ports, detach router
interfaces.  Plain keystoneauth Adapter calls to the
``network`` service of the catalog (no python-neutronclient): the paths
are Neutron's ``/v2.0/...`` under the catalog's endpoint (an endpoint
that already ends with ``/v2.0`` is taken as it is).

Errors are raised as :class:`NeutronError` (:class:`NotFound` for a
404, :class:`Conflict` for a 409), transport failures included
(``status`` None).
"""

from keystoneauth1 import adapter
from keystoneauth1 import exceptions as ks_exc

from climate.clients import get_conf
from climate.clients import keystone

SERVICE_TYPE = 'network'
API_PREFIX = '/v2.0'
#: Seconds one call may take when ``[service_auth] timeout`` is unset.
CALL_TIMEOUT = 60


class NeutronError(Exception):
    """Neutron refused or failed a call (``status`` None: no answer)."""

    def __init__(self, doing, status=None, kind=None, detail=None):
        self.doing = doing
        self.status = status
        self.kind = kind
        self.detail = detail
        what = 'HTTP %s' % status if status is not None else 'no answer'
        if kind:
            what += ' %s' % kind
        super().__init__('%s: %s%s' % (doing, what,
                                       ': %s' % detail if detail else ''))


class NotFound(NeutronError):
    """404: no such network, subnet or floating IP."""


class Conflict(NeutronError):
    """409: the address is taken, the port is in use..."""


def _error(resp, doing):
    """A NeutronError for the non-2xx answer ``resp`` (Neutron's body is
    ``{"NeutronError": {"type", "message", "detail"}}``)."""
    kind = detail = None
    try:
        body = resp.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get('NeutronError'), dict):
        kind = body['NeutronError'].get('type')
        detail = body['NeutronError'].get('message')
    elif isinstance(body, dict) and body.get('message'):
        detail = str(body['message'])
    elif resp.text:
        detail = resp.text.strip()[:300]
    cls = {404: NotFound, 409: Conflict}.get(resp.status_code, NeutronError)
    return cls(doing, resp.status_code, kind, detail)


def _name(collection):
    """What an item of ``collection`` is called in an error's text."""
    return {'floatingips': 'floating IP'}.get(collection, collection[:-1])


class NeutronClient:
    """Neutron through one keystoneauth session (see module)."""

    def __init__(self, sess, conf=None):
        conf = get_conf(conf)
        opts = conf.neutron
        # a session without a timeout of its own gets one per call
        self.timeout = None if getattr(sess, 'timeout', None) is not None \
            else CALL_TIMEOUT
        self.api = adapter.Adapter(
            sess, service_type=SERVICE_TYPE, interface=opts.interface,
            region_name=opts.region_name,
            endpoint_override=opts.endpoint_override,
            connect_retries=opts.connect_retries)
        self._prefix = None

    # -- plumbing ----------------------------------------------------------

    def _path(self, path):
        if self._prefix is None:
            try:
                endpoint = self.api.get_endpoint() or ''
            except ks_exc.ClientException as exc:
                raise NeutronError('finding the network endpoint',
                                   detail=str(exc) or type(exc).__name__)
            self._prefix = '' if endpoint.rstrip('/').endswith(
                API_PREFIX) else API_PREFIX
        return self._prefix + path

    def _call(self, method, path, doing, ok=(200,), **kwargs):
        """One request; the decoded answer ({} when empty) when its status
        is in ``ok``, else the matching NeutronError."""
        headers = kwargs.pop('headers', {})
        headers.setdefault('Accept', 'application/json')
        if self.timeout is not None:
            kwargs.setdefault('timeout', self.timeout)
        try:
            resp = self.api.request(self._path(path), method,
                                    raise_exc=False, headers=headers,
                                    **kwargs)
        except ks_exc.ClientException as exc:
            raise NeutronError(doing, detail=str(exc) or
                               type(exc).__name__) from exc
        if resp.status_code not in ok:
            raise _error(resp, doing)
        if not resp.content:
            return {}
        try:
            return resp.json()
        except ValueError:
            raise NeutronError(doing, resp.status_code,
                               detail='the answer is not JSON')

    # -- networks ----------------------------------------------------------

    def network(self, network_id):
        """The network (dict with ``router:external``, ``subnets``...);
        NotFound when there is none."""
        return self._call('GET', '/networks/%s' % network_id,
                          'reading network %s' % network_id)['network']

    def subnets(self, network_id):
        """The subnets of ``network_id`` (``cidr``, ``gateway_ip``,
        ``allocation_pools``, ``ip_version``...)."""
        return self._call('GET', '/subnets', 'listing the subnets of '
                          'network %s' % network_id,
                          params={'network_id': network_id})['subnets']

    # -- floating IPs ------------------------------------------------------

    def floatingips(self, **filters):
        """Floating IPs matching Neutron's query ``filters``
        (``floating_ip_address``, ``floating_network_id``, ``tags``...;
        every project's, for an admin)."""
        return self._call('GET', '/floatingips',
                          'listing floating IPs %s' % sorted(filters.items()),
                          params=filters)['floatingips']

    def create_floatingip(self, values):
        """Create a floating IP of ``values`` (``floating_network_id``,
        ``floating_ip_address``, ``subnet_id``, ``project_id``,
        ``description``); Conflict when the address is taken."""
        return self._call('POST', '/floatingips', 'creating floating IP %s'
                          % values.get('floating_ip_address'), ok=(201,),
                          json={'floatingip': values})['floatingip']

    def set_tags(self, fip_id, tags, collection='floatingips'):
        """Make the tags of the floating IP (or of the item of
        ``collection``: ``networks``...) exactly ``tags``."""
        return self._call('PUT', '/%s/%s/tags' % (collection, fip_id),
                          'tagging %s %s' % (_name(collection), fip_id),
                          json={'tags': list(tags)})

    def update_floatingip(self, fip_id, values):
        """Change a floating IP (``port_id`` None: disassociate it)."""
        return self._call('PUT', '/floatingips/%s' % fip_id,
                          'updating floating IP %s' % fip_id,
                          json={'floatingip': values})['floatingip']

    def delete_floatingip(self, fip_id):
        """Delete a floating IP; already gone is fine."""
        self._delete('floatingips', fip_id)

    def _delete(self, collection, item_id):
        """Delete an item of ``collection``; already gone is fine."""
        try:
            self._call('DELETE', '/%s/%s' % (collection, item_id),
                       'deleting %s %s' % (_name(collection), item_id),
                       ok=(204,))
        except NotFound:
            pass

    # -- networks, their subnets and ports (network reservations) ----------

    def networks(self, **filters):
        """Networks matching Neutron's query ``filters`` (``tags``,
        ``name``...; every project's, for an admin)."""
        return self._call('GET', '/networks',
                          'listing networks %s' % sorted(filters.items()),
                          params=filters)['networks']

    def create_network(self, values):
        """Create a network of ``values`` (``name``, ``project_id``,
        ``provider:*``, ``description``)."""
        return self._call('POST', '/networks', 'creating network %s'
                          % values.get('name'), ok=(201,),
                          json={'network': values})['network']

    def delete_network(self, network_id):
        """Delete a network; already gone is fine, Conflict while it has
        ports in use."""
        self._delete('networks', network_id)

    def delete_subnet(self, subnet_id):
        self._delete('subnets', subnet_id)

    def ports(self, **filters):
        """Ports matching ``filters`` (``network_id``, ``device_id``...)."""
        return self._call('GET', '/ports',
                          'listing ports %s' % sorted(filters.items()),
                          params=filters)['ports']

    def delete_port(self, port_id):
        self._delete('ports', port_id)

    def remove_router_interface(self, router_id, port_id):
        """Detach the router's interface ``port_id`` (which deletes that
        port)."""
        return self._call('PUT', '/routers/%s/remove_router_interface'
                          % router_id, 'removing port %s from router %s' % (
                              port_id, router_id),
                          json={'port_id': port_id})


def service_client(conf=None):
    """Neutron as Climate's service user (admin: every project's floating
    IPs, creating them in a lease's project)."""
    return NeutronClient(keystone.service_session(conf), conf)
