"""Heat clients on keystoneauth sessions, configured by ``[heat]``.

Heat's v1 API lives under the project it acts on: the catalog's endpoint
ends with the project id of the token's scope (``.../v1/<project id>``).
A client for another project's stacks (Climate's service user, an admin,
ending a lease's stack) is pointed at that project by replacing that last
path component (:func:`service_client`).
"""

from heatclient import client as heat_client
from keystoneauth1 import exceptions as ks_exc

from climate.clients import get_conf
from climate.clients import keystone

SERVICE_TYPE = 'orchestration'
API_VERSION = '1'


def client(sess, conf=None, endpoint_override=None):
    """A heatclient v1 ``Client`` on the keystoneauth session ``sess``.

    Endpoint chosen by ``[heat] region_name``, ``interface`` and
    ``endpoint_override`` (``endpoint_override`` given here wins);
    ``connect_retries`` for calls whose connection broke.
    """
    conf = get_conf(conf)
    opts = conf.heat
    kwargs = {}
    if opts.region_name:
        # heatclient sends X-Region-Name whenever region_name is given
        kwargs['region_name'] = opts.region_name
    return heat_client.Client(
        API_VERSION, session=sess, service_type=SERVICE_TYPE,
        interface=opts.interface,
        endpoint_override=endpoint_override or opts.endpoint_override,
        connect_retries=opts.connect_retries, **kwargs)


def project_endpoint(endpoint, project_id):
    """``endpoint`` (Heat's ``.../v1/<project id>``) for ``project_id``:
    its last path component replaced (appended to a bare ``.../v1``)."""
    base = endpoint.rstrip('/')
    head, _sep, last = base.rpartition('/')
    if last.lower() == 'v' + API_VERSION or not head:
        return '%s/%s' % (base, project_id)
    return '%s/%s' % (head, project_id)


def service_client(conf=None, project_id=None):
    """Heat as Climate's service user; on ``project_id``'s stacks when
    given (the service user must be allowed to act on them: an admin).

    :raises keystoneauth1.exceptions.ClientException: no Heat endpoint
        (or Keystone unreachable while looking for it).
    """
    conf = get_conf(conf)
    sess = keystone.service_session(conf)
    if project_id is None:
        return client(sess, conf)
    opts = conf.heat
    endpoint = opts.endpoint_override or sess.get_endpoint(
        service_type=SERVICE_TYPE, interface=opts.interface,
        region_name=opts.region_name)
    if not endpoint:
        raise ks_exc.EndpointNotFound(
            'no %s endpoint in the catalog (interface %s, region %s)' % (
                SERVICE_TYPE, opts.interface, opts.region_name or 'any'))
    return client(sess, conf,
                  endpoint_override=project_endpoint(endpoint, project_id))
