"""Nova clients on keystoneauth sessions, configured by ``[nova]``."""

from novaclient import client as nova_client

from climate.clients import get_conf
from climate.clients import keystone


def client(sess, conf=None, version=None):
    """A novaclient ``Client`` on the keystoneauth session ``sess``.

    Microversion ``version`` (default ``[nova] api_version``), endpoint chosen by ``[nova] region_name``,
    ``interface`` and ``endpoint_override``; ``connect_retries`` for calls whose
    connection broke.
    """
    conf = get_conf(conf)
    opts = conf.nova
    return nova_client.Client(version or opts.api_version, session=sess,
                              region_name=opts.region_name,
                              endpoint_type=opts.interface,
                              endpoint_override=opts.endpoint_override,
                              connect_retries=opts.connect_retries)


def service_client(conf=None):
    """Nova as Climate's service user (admin calls: hypervisors, aggregates, ...)."""
    return client(keystone.service_session(conf), conf)


def trust_client(trust_id, conf=None):
    """Nova acting for the trustor of ``trust_id``, in the trust's project."""
    return client(keystone.trust_session(trust_id, conf), conf)


def bounded_service_client(conf=None, timeout=60, version=None):
    """:func:`service_client` (at ``version``, default ``[nova]
    api_version``) whose calls time out after ``timeout`` seconds unless
    ``[service_auth]`` sets a timeout: a hung Nova must fail the event
    (which is retried), not hold a manager worker for ever."""
    nova = client(keystone.service_session(conf), conf, version=version)
    adapter = nova.client
    if getattr(adapter.session, 'timeout', None) is None and \
            getattr(adapter, 'timeout', None) is None:
        adapter.timeout = timeout
    return nova
