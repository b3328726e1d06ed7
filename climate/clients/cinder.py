"""Cinder clients on keystoneauth sessions, configured by ``[cinder]``."""

from cinderclient import api_versions
from cinderclient import client as cinder_client

from climate.clients import get_conf
from climate.clients import keystone


def client(sess, conf=None, version=None):
    """A cinderclient v3 ``Client`` on the keystoneauth session ``sess``.

    Microversion ``version`` (default ``[cinder] api_version``), endpoint
    chosen by ``[cinder] service_type``, ``region_name``, ``interface`` and
    ``endpoint_override``; ``connect_retries`` for calls whose connection
    broke.
    """
    conf = get_conf(conf)
    opts = conf.cinder
    return cinder_client.Client(
        api_versions.APIVersion(version or opts.api_version), session=sess,
        service_type=opts.service_type,
        region_name=opts.region_name,
        endpoint_type=opts.interface,
        os_endpoint=opts.endpoint_override,
        connect_retries=opts.connect_retries)


def service_client(conf=None, timeout=None):
    """Cinder as Climate's service user (admin calls: pools, volume types,
    volumes of every project).  ``timeout`` (seconds) bounds each call
    unless ``[service_auth]`` sets a timeout."""
    cinder = client(keystone.service_session(conf), conf)
    _bound(cinder, timeout)
    return cinder


def trust_client(trust_id, conf=None):
    """Cinder acting for the trustor of ``trust_id``, in the trust's
    project."""
    return client(keystone.trust_session(trust_id, conf), conf)


def _bound(cinder, timeout):
    adapter = cinder.client
    if timeout is not None and getattr(adapter.session, 'timeout',
                                       None) is None \
            and getattr(adapter, 'timeout', None) is None:
        adapter.timeout = timeout
